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

if TYPE_CHECKING:
    from agent_client.actions import ActionResult as ActionResult
    from agent_client.claude_memory import AsyncVaultMemoryTool as AsyncVaultMemoryTool
    from agent_client.claude_memory import VaultMemoryTool as VaultMemoryTool
    from agent_client.connection import mcp_vault_connection as mcp_vault_connection
    from agent_client.hooks import MEMORY_WRITER_ACTION as MEMORY_WRITER_ACTION
    from agent_client.hooks import TurnReceipt as TurnReceipt
    from agent_client.hooks import memory_writer_action_tool as memory_writer_action_tool
    from agent_client.hooks import remember_turn as remember_turn
    from agent_client.hooks import run_memory_writer_action as run_memory_writer_action
    from agent_client.notices import CollectingNoticeSink as CollectingNoticeSink
    from agent_client.notices import NoticeSink as NoticeSink
    from agent_client.notices import SystemNotice as SystemNotice
    from agent_client.settings import ClientSettings as ClientSettings
    from agent_client.settings import LLMSettings as LLMSettings
    from agent_client.vault import Vault as Vault
    from agent_client.writer import MemoryWriter as MemoryWriter
    from agent_client.writer import configure_writer as configure_writer
    from agent_client.writer import get_writer as get_writer
    from shared.errors import ConflictError as ConflictError
    from shared.errors import ForbiddenPathError as ForbiddenPathError
    from shared.errors import IndexerOfflineError as IndexerOfflineError
    from shared.errors import InvalidArgumentError as InvalidArgumentError
    from shared.errors import InvalidFrontmatterError as InvalidFrontmatterError
    from shared.errors import InvalidLangError as InvalidLangError
    from shared.errors import NotFoundError as NotFoundError
    from shared.errors import TooLargeError as TooLargeError
    from shared.errors import VaultError as VaultError
    from shared.models import DeleteAction as DeleteAction
    from shared.models import EditAction as EditAction
    from shared.models import MemoryEntry as MemoryEntry

_CLAUDE = ("AsyncVaultMemoryTool", "VaultMemoryTool")

# Where each name of the surface lives. Imported when first asked for: the package itself
# stays light, so the ``agent-client`` command can guard its own slow imports (fastmcp,
# the MCP SDK, openai: seconds) against a Ctrl-C (``agent_client.command``).
_HOMES = {
    "ActionResult": "agent_client.actions",
    "Vault": "agent_client.vault",
    "mcp_vault_connection": "agent_client.connection",
    "MEMORY_WRITER_ACTION": "agent_client.hooks",
    "TurnReceipt": "agent_client.hooks",
    "memory_writer_action_tool": "agent_client.hooks",
    "remember_turn": "agent_client.hooks",
    "run_memory_writer_action": "agent_client.hooks",
    "CollectingNoticeSink": "agent_client.notices",
    "NoticeSink": "agent_client.notices",
    "SystemNotice": "agent_client.notices",
    "ClientSettings": "agent_client.settings",
    "LLMSettings": "agent_client.settings",
    "MemoryWriter": "agent_client.writer",
    "configure_writer": "agent_client.writer",
    "get_writer": "agent_client.writer",
    # the errors a vault call raises, one for each of the SPEC's codes (``err.code``)
    "ConflictError": "shared.errors",
    "ForbiddenPathError": "shared.errors",
    "IndexerOfflineError": "shared.errors",
    "InvalidArgumentError": "shared.errors",
    "InvalidFrontmatterError": "shared.errors",
    "InvalidLangError": "shared.errors",
    "NotFoundError": "shared.errors",
    "TooLargeError": "shared.errors",
    "VaultError": "shared.errors",
    "DeleteAction": "shared.models",
    "EditAction": "shared.models",
    "MemoryEntry": "shared.models",
    **dict.fromkeys(_CLAUDE, "agent_client.claude_memory"),
}

__all__ = [
    "MEMORY_WRITER_ACTION",
    "ActionResult",
    "ClientSettings",
    "CollectingNoticeSink",
    "ConflictError",
    "DeleteAction",
    "EditAction",
    "ForbiddenPathError",
    "IndexerOfflineError",
    "InvalidArgumentError",
    "InvalidFrontmatterError",
    "InvalidLangError",
    "LLMSettings",
    "MemoryEntry",
    "MemoryWriter",
    "NotFoundError",
    "NoticeSink",
    "SystemNotice",
    "TooLargeError",
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
    """A name of the surface, imported on first use (for ``VaultMemoryTool`` and
    ``AsyncVaultMemoryTool``, an ``ImportError`` naming the ``claude`` extra when the
    Anthropic SDK is missing). Kept in the module's namespace once found."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'agent_client' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The surface as well as what is imported already (for completion in a shell)."""
    return sorted(set(globals()) | set(__all__))
