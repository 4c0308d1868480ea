"""vault memory's agent client: the Memory Writer an agent application embeds.

    from agent_client import ClientSettings, MemoryEntry, MemoryWriter, remember_turn

    writer = MemoryWriter(ClientSettings.resolve())       # settings from the environment
    remember_turn([MemoryEntry("en", "knowledge", "Past tense of go", "went")], writer=writer)

The README's "Embedding the Memory Writer" has the complete example. Everything listed in
``__all__`` is the supported surface; the modules behind it may move.

``VaultMemoryTool`` and ``AsyncVaultMemoryTool`` (Claude's memory tool on a vault) need
the ``claude`` extra (the Anthropic SDK); they are imported when first used, so the rest
of the package never imports ``anthropic``, and they are in ``__all__`` only when the
SDK is installed.
"""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING, Any

from agent_client.actions import ActionResult
from agent_client.connection import Vault, mcp_vault_connection
from agent_client.hooks import (
    MEMORY_WRITER_ACTION,
    TurnReceipt,
    memory_writer_action_tool,
    remember_turn,
    run_memory_writer_action,
)
from agent_client.notices import CollectingNoticeSink, NoticeSink, SystemNotice
from agent_client.settings import ClientSettings, LLMSettings
from agent_client.writer import MemoryWriter, configure_writer, get_writer
from shared.errors import IndexerOfflineError, VaultError
from shared.models import DeleteAction, EditAction, MemoryEntry

if TYPE_CHECKING:
    from agent_client.claude_memory import AsyncVaultMemoryTool as AsyncVaultMemoryTool
    from agent_client.claude_memory import VaultMemoryTool as VaultMemoryTool

_CLAUDE = ("AsyncVaultMemoryTool", "VaultMemoryTool")

__all__ = [
    "MEMORY_WRITER_ACTION",
    "ActionResult",
    "ClientSettings",
    "CollectingNoticeSink",
    "DeleteAction",
    "EditAction",
    "IndexerOfflineError",
    "LLMSettings",
    "MemoryEntry",
    "MemoryWriter",
    "NoticeSink",
    "SystemNotice",
    "TurnReceipt",
    "Vault",
    "VaultError",
    "configure_writer",
    "get_writer",
    "mcp_vault_connection",
    "memory_writer_action_tool",
    "remember_turn",
    "run_memory_writer_action",
]


def _has_claude_extra() -> bool:
    try:
        return importlib.util.find_spec("anthropic") is not None
    except (ImportError, ValueError):
        return False


if _has_claude_extra():
    __all__ += list(_CLAUDE)


def __getattr__(name: str) -> Any:
    """``VaultMemoryTool`` and ``AsyncVaultMemoryTool``, imported on first use (an
    ``ImportError`` naming the ``claude`` extra when the Anthropic SDK is missing)."""
    if name in _CLAUDE:
        from agent_client import claude_memory

        return getattr(claude_memory, name)
    raise AttributeError(f"module 'agent_client' has no attribute {name!r}")
