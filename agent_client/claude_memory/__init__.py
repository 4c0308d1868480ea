"""Claude's memory tool on a vault: ``VaultMemoryTool`` and ``AsyncVaultMemoryTool``.

Subclasses of the Anthropic SDK's abstract memory tools (``memory_20250818``) that keep
``/memories`` in a folder of one vault, through the indexer's MCP tools. They need the
SDK, the ``claude`` extra (``pip install '<the wheel or checkout>[claude]'``: the
package is not on PyPI); nothing else in
``agent_client`` imports it. The README's "Claude's memory tool on a vault" has the
complete example and the list of the ways its answers differ from the SDK's own tool.
"""

from __future__ import annotations

try:
    import anthropic  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise ImportError(
        "agent_client.VaultMemoryTool needs the Anthropic SDK: install vault-memory with its"
        " claude extra (pip install '<the wheel or checkout>[claude]'), or pip install"
        " 'anthropic>=2.14.0'"
    ) from exc

from agent_client.claude_memory.tool import AsyncVaultMemoryTool, VaultMemoryTool

__all__ = ["AsyncVaultMemoryTool", "VaultMemoryTool"]
