"""One knowledge entry into the vault: the LLM merge when a model is configured, else (or
when the LLM path fails) the deterministic merge.

Every write goes through a ``WriteJournal`` (with the entry's reason), so a failed
attempt is undone by the server's ``undo`` of the entry before the fallback runs, and a
failed entry leaves nothing half-written (unless someone changed a file since: then
nothing is undone, all or nothing, and the notice says so). With
``AGENT_CLIENT_LLM_FALLBACK=1`` no entry is lost to the LLM path: prompts the server does
not serve, a model setting the SDK or the endpoint refuses, an endpoint that is down, a
malformed answer or a bug in the loop all end in the fallback, the reason in the notice
(``fallback_reason``) and the log. An offline indexer is not an LLM failure: its
``IndexerOfflineError`` goes up, and the writer drops the entry as the SPEC says.

The LLM merge (``merge.llm``, and with it the OpenAI SDK: 0.5 s) is imported when a
model merge begins: the deterministic merge and the rest of the client never need it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from agent_client.failures import describe_failure
from agent_client.merge.confirmation import Confirmation
from agent_client.merge.fallback import merge_fallback, new_note_path
from agent_client.merge.images import ImageFile, copy_images, load_images, place_images
from agent_client.merge.journal import WriteJournal
from agent_client.merge.tools import MergeFailed, ToolExecutor
from agent_client.off_loop import import_off_loop
from agent_client.settings import ClientSettings, LLMSettings
from agent_client.vault import Vault
from shared.control_chars import printable
from shared.errors import IndexerOfflineError, VaultError
from shared.models import MemoryEntry

if TYPE_CHECKING:
    from openai import AsyncOpenAI

logger = logging.getLogger("agent_client.merge")

LLMClientFactory = Callable[[], "AsyncOpenAI"]


@dataclass(frozen=True)
class MergeOutcome:
    """What the merge wrote, how, and why the LLM did not do it (when it did not)."""

    confirmation: Confirmation
    method: Literal["llm", "fallback"]
    fallback_reason: str | None = None


class MergeCutShort(IndexerOfflineError):
    """The indexer stopped answering during a merge that may have written (a write's
    answer lost is not a write not made): ``journal.rollback()`` takes its writes back,
    to be run (on a new session) before the entry is tried again or dropped."""

    def __init__(self, message: str, journal: WriteJournal) -> None:
        super().__init__(message)
        self.journal = journal


async def merge_knowledge(
    vault: Vault,
    entry: MemoryEntry,
    settings: ClientSettings,
    llm_client: LLMClientFactory,
    *,
    undone_before: bool = False,
) -> MergeOutcome:
    """Merge ``entry``; on any failure every write of this merge is undone, then it raises.
    ``undone_before``: the entry's only changes so far were undone (a merge cut short)."""
    images = load_images(entry.images, settings.max_image_bytes)
    journal = WriteJournal(vault, entry)
    try:  # (the journal rolls back by the id only when it is new)
        journal.id_new = undone_before or await journal.id_is_new()
        return await _merge(journal, entry, images, settings, llm_client)
    except IndexerOfflineError as exc:  # nobody to undo anything with now
        if journal.attempted:
            raise MergeCutShort(exc.message, journal) from exc
        raise
    except BaseException:
        await _quiet_rollback(journal)
        raise


async def _merge(
    journal: WriteJournal,
    entry: MemoryEntry,
    images: list[ImageFile],
    settings: ClientSettings,
    llm_client: LLMClientFactory,
) -> MergeOutcome:
    reason: str | None = None
    if settings.llm is not None:
        try:
            confirmation = await _merge_with_llm(journal, entry, images, settings.llm, llm_client)
            return MergeOutcome(confirmation, "llm")
        except IndexerOfflineError:
            raise
        except Exception as exc:
            reason = describe_failure(exc)
            not_undone = await journal.rollback()
            if not settings.llm_fallback:
                raise
            if not_undone:  # changed by someone since: it all stays, the entry still goes in
                reason += f" (not undone, {not_undone})"
            expected = isinstance(exc, MergeFailed | VaultError)
            logger.error(
                "LLM merge of entry %s failed (%s); %smerging deterministically",
                entry.id,
                printable(reason),  # (it may quote a path or words of the model)
                "" if not_undone else "undone, ",
                exc_info=None if expected else exc,
            )
    confirmation = await merge_fallback(journal, entry, images, settings.tz)
    return MergeOutcome(confirmation, "fallback", reason)


async def _merge_with_llm(
    journal: WriteJournal,
    entry: MemoryEntry,
    images: list[ImageFile],
    settings: LLMSettings,
    llm_client: LLMClientFactory,
) -> Confirmation:
    await import_off_loop("agent_client.merge.llm")  # (the SDK: only now, off the loop)
    from agent_client.merge.llm import BASE_TOOLS, merge_with_llm

    vault = journal.vault
    offered = [*BASE_TOOLS, "search"] if await vault.has_search() else list(BASE_TOOLS)
    executor = ToolExecutor(journal, offered, entry.content)
    try:
        llm = llm_client()
    except Exception as exc:
        raise MergeFailed(f"the LLM client cannot be set up: {describe_failure(exc)}") from exc
    # Images are copied first, next to the suggested note, so the model gets exact links.
    staged_at = await new_note_path(vault, entry.title)
    links = await copy_images(journal, staged_at, images)
    names = [image.asset_name for image in images]
    confirmation = await merge_with_llm(
        llm, settings, executor, entry, dict(zip(names, links, strict=True)), staged_at
    )
    if images:
        if not confirmation.updated_files:
            raise MergeFailed("the model wrote no note to attach the images to")
        await place_images(journal, confirmation.updated_files[0], staged_at, images)
    confirmation.updated_files.extend(
        p for p in journal.written if p not in confirmation.updated_files
    )
    return confirmation


async def _quiet_rollback(journal: WriteJournal) -> None:
    """Roll back while another error is on its way up (that one is what the caller sees;
    the journal logs what it could not undo)."""
    try:
        await journal.rollback()
    except Exception as exc:  # offline while undoing: report, keep the first error
        logger.error("entry %s: undo failed: %s", journal.entry_id, exc)
