"""The indexer daemon: owns a workspace of Markdown vaults and serves the Vault MCP tools."""

__version__ = "0.1.0"
