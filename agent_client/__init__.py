"""vault memory's agent client: the Memory Writer an agent application embeds.

    from agent_client import ClientSettings, MemoryEntry, MemoryWriter, remember_turn

    writer = MemoryWriter(ClientSettings.resolve())       # settings from the environment
    remember_turn([MemoryEntry("en", "knowledge", "Past tense of go", "went")], writer=writer)

The README's "Embedding the Memory Writer" has the complete example. Everything listed in
``__all__`` is the supported surface; the modules behind it may move.
"""

from __future__ import annotations

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
