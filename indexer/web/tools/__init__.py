"""The Vault MCP tools, one module per subsystem; each has ``register(tools, core)``."""
