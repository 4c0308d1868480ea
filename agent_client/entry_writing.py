"""How the Memory Writer writes one entry: a knowledge merge (the model's, or the
deterministic fallback) or an event appended to its day file, kept on disk while in
flight (``inflight``); tried once more at an indexer that restarted; a merge cut short
taken back, an append cut short looked for; what a dead writer left of an entry settled
before it is written again (``leftovers``).

Why apart from ``writer``: that module runs the thread, its queue and its stop; this
one is what each entry goes through, with the state kept between entries.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import asdict
from typing import TYPE_CHECKING

from agent_client.events import append_event, appended_already
from agent_client.failures import describe_failure
from agent_client.inflight import INFLIGHT_DIR, Claim, Held, InFlight
from agent_client.leftovers import adopt_orphans, in_flight, take_back_left, wait_for_same
from agent_client.merge.knowledge import MergeCutShort, merge_knowledge
from agent_client.notices import SystemNotice
from agent_client.reasons import undo_command
from agent_client.results import AppendResult
from agent_client.sessions import SessionKeeper
from agent_client.settings import ClientSettings
from agent_client.vault import Vault
from shared.control_chars import printable
from shared.errors import IndexerOfflineError
from shared.models import MemoryEntry, is_made_id

if TYPE_CHECKING:
    from openai import AsyncOpenAI

# (the writer's name: its lines are the writer's, and the CLI filters them by it)
logger = logging.getLogger("agent_client.writer")


class AppendCutShort(IndexerOfflineError):
    """The indexer stopped answering while an event was being appended: it may be in
    the day file (a call's answer lost is not a call not made)."""


class EntryWriter:
    """Writes entries one at a time (the writer thread's only); keeps what lasts between
    them: the model's client, the entries undone, the records of entries in flight."""

    def __init__(self, settings: ClientSettings) -> None:
        self.settings = settings
        self.on_start: Callable[[], object] = lambda: None  # told as each entry starts
        self._llm: AsyncOpenAI | None = None
        # Entries whose merge was cut short and undone: tried again as new.
        self._undone: set[str] = set()
        self._inflight = InFlight(settings.workspace)  # entries in flight, on disk
        self.records = self._inflight  # (the writer's submit records queued entries)
        self._adopted: dict[str, Claim] = {}  # dead writers' entries a batch brought again
        self._left: set[str] = set()  # the ids of dead writers' entries, to settle first
        # The entry being written reached an indexer (a session was had for it), and its
        # record is held: an indexer gone after that leaves the entry kept on disk.
        self._reached = False
        self._recorded = False
        self._inherited = False  # a dead writer's record: kept until it is settled
        self._seen: list[Held] = []  # the batch's entries' records other writers held

    def leftovers(self, batch: list[MemoryEntry]) -> Iterator[Claim]:
        """The entries dead writers left, to be written before ``batch`` (``leftovers``);
        the records of its entries other writers hold are kept open for them."""
        self._close_seen()
        return adopt_orphans(self._inflight, batch, self._adopted, self._left, self._seen)

    def _close_seen(self) -> None:
        seen, self._seen = self._seen, []
        for held in seen:
            held.close()

    async def close(self) -> None:
        """Close the model's client, if one was made."""
        self._close_seen()
        if self._llm is not None:
            llm, self._llm = self._llm, None
            await llm.close()

    async def write(
        self,
        keeper: SessionKeeper,
        entry: MemoryEntry,
        orphan: Claim | None = None,
        *,
        queued: Claim | None = None,
    ) -> SystemNotice:
        """One entry, kept on disk while in flight (``inflight``, ``leftovers``): under
        ``queued``, its record made at submit, unless it is a dead writer's entry (then
        under that one's, and ``queued`` goes with the outcome); when another client
        writes the same entry, its outcome is waited for and told."""
        notice: SystemNotice | None = None
        try:
            notice = await self._write(keeper, entry, orphan, queued)
            return notice
        finally:
            self._left.discard(entry.id)  # (settled or not: this write of it is over)
            if queued is not None and not queued.taken:
                queued.release(told=asdict(notice) if notice is not None else None)

    async def _write(
        self, keeper: SessionKeeper, entry: MemoryEntry, orphan: Claim | None, queued: Claim | None
    ) -> SystemNotice:
        claim = orphan or self._adopted.pop(entry.id, None)
        if queued is not None:
            queued.begin()  # (another writer given it waits for it from now on)
        self.on_start()
        seen = [held for held in self._seen if held.wanted is entry]
        self._seen = [held for held in self._seen if held.wanted is not entry]
        refused = keeper.refusal() if claim is None else None
        if refused is not None:  # (it reaches no indexer: nothing is written, no record
            for held in seen:  # is made for it, no other writer's is waited on; one
                held.close()  # queued here goes as it is told, another's stays theirs)
            self._inherited = self._reached = False
            return self._offline_notice(entry, refused)
        if claim is None:
            seconds = self.settings.entry_seconds
            same = await wait_for_same(self._inflight, entry, seconds, seen)
            if isinstance(same, SystemNotice):
                return same
            if same is not None:
                claim = same
                self._left.add(entry.id)
        for held in seen:
            held.close()  # (waited on, or its entry is this writer's own)
        self.on_start()
        if claim is not None:
            claim.begin()
        self._inherited = claim is not None  # (an orphan, or one a batch brought again)
        if claim is None and queued is not None:
            claim, queued.taken = queued, True
        claim = claim or self._inflight.hold(entry)
        self._reached, self._recorded = False, claim is not None
        run = self._entry_notice(keeper, entry)
        return await in_flight(claim, run, keep=self._inherited or (lambda: self._keeps(entry)))

    def _keeps(self, entry: MemoryEntry) -> bool:
        """Whether ``entry``, failed as offline, stays on disk for the next writer: the
        indexer went away after the entry reached it (what it wrote is settled then, as
        a dead writer's: an event looked for, a merge taken back by its id, which only
        an id the client made allows, ``leftovers.take_back_left``). One that never
        reached an indexer wrote nothing: it is dropped, as the SPEC says. A dead
        writer's entry (its own, or submitted again) stays whatever this writer reached:
        what that writer wrote is not settled yet."""
        made = entry.kind == "event" or is_made_id(entry.id)
        return self._inherited or (self._reached and self._recorded and made)

    async def _entry_notice(self, keeper: SessionKeeper, entry: MemoryEntry) -> SystemNotice:
        """One entry: a knowledge merge, or an event appended to its day file."""
        try:
            return await self._apply_or_retry(keeper, entry)
        except IndexerOfflineError as exc:
            return self._offline_notice(entry, exc)
        except Exception as exc:
            error = describe_failure(exc)
            return self._failed_notice(entry, f"failed: {error}", error)

    def _offline_notice(self, entry: MemoryEntry, exc: IndexerOfflineError) -> SystemNotice:
        """An entry the indexer was offline for: dropped, or kept on disk (``_keeps``)."""
        kept = self._keeps(entry)
        if kept:
            how = "looks for it in its day file and logs it if it is not there"
            if entry.kind == "knowledge":
                how = "takes back what its merge wrote and merges it once"
            exc.message += (
                f"; the entry is kept in {INFLIGHT_DIR}: once the indexer runs, the next"
                " `agent-client remember` or `event` on this workspace (this one run"
                f" again, say) {how}"
            )
        state = "kept" if kept else "dropped"
        return self._failed_notice(entry, f"{state}: indexer offline: {exc.message}", str(exc))

    def _failed_notice(self, entry: MemoryEntry, reason: str, error: str) -> SystemNotice:
        logger.error(
            "memory entry %s (%s %r) %s", entry.id, entry.kind, entry.title, printable(reason)
        )
        return SystemNotice(entry.id, entry.lang, entry.kind, entry.title, ok=False, error=error)

    async def _apply_or_retry(self, keeper: SessionKeeper, entry: MemoryEntry) -> SystemNotice:
        """When the indexer fails and the URL file names another one (it restarted), the
        entry is tried there once: an indexer was serving all along, so it is not dropped.
        A merge or an append cut short may have landed: it is taken back (a merge) or
        looked for (an event) before the entry is tried again or dropped."""
        try:
            return await self._apply(keeper, entry, again=False)
        except IndexerOfflineError as exc:
            moved = await keeper.moved()
            settled = await self._settle_cut_short(keeper, entry, exc)
            if settled is not None:
                return settled  # the event was logged after all
            if not moved:
                raise
        logger.info("memory entry %s: the indexer restarted; trying it there", entry.id)
        try:
            return await self._apply(keeper, entry, again=True)
        except IndexerOfflineError as exc:
            settled = await self._settle_cut_short(keeper, entry, exc)
            if settled is not None:
                return settled
            raise

    async def _settle_cut_short(
        self, keeper: SessionKeeper, entry: MemoryEntry, exc: IndexerOfflineError
    ) -> SystemNotice | None:
        """After an indexer went away mid-entry (it may only have stalled, or restarted
        with the same history): a knowledge merge's writes are taken back, so that trying
        it again merges it once and dropping it leaves nothing; an event's section is
        looked for (the notice of one found says it was logged). When the indexer still
        does not answer, the error says what may have landed."""
        if not isinstance(exc, MergeCutShort | AppendCutShort):
            return None  # it never reached the indexer: nothing was written
        try:
            vault = (await keeper.get()).vault(entry.lang)
            if isinstance(exc, AppendCutShort):
                found = await appended_already(vault, entry, self.settings.tz)
                return self._event_notice(entry, found) if found is not None else None
            exc.journal.vault = vault
            why = await exc.journal.rollback()
        except IndexerOfflineError:
            if isinstance(exc, AppendCutShort):
                exc.message += f"; the event may have been logged (`- entry: {entry.id}`)"
            else:
                exc.message += "; writes of the merge may have landed"
                if not self._keeps(entry):
                    exc.message += (
                        f": `{undo_command(entry.id)}` takes them back once the indexer runs"
                    )
            return None
        if why is None and exc.journal.id_new:
            self._undone.add(entry.id)  # its only changes were taken back: new again
        elif why is not None:
            logger.warning("memory entry %s: its cut-short merge stays: %s", entry.id, why)
        return None

    async def _apply(
        self, keeper: SessionKeeper, entry: MemoryEntry, *, again: bool
    ) -> SystemNotice:
        left = entry.id in self._left  # (a dead writer's: looked for, or taken back, first)
        vault = (await keeper.get()).vault(entry.lang)
        self._reached = True
        if entry.kind == "event":
            self._left.discard(entry.id)  # (tried again, it is looked for anyway)
            try:
                return await self._append_event_async(vault, entry, again=again or left)
            except IndexerOfflineError as exc:  # its append may have landed
                raise AppendCutShort(exc.message) from exc
        try:
            if left:  # (spent once it is taken back: one cut off is taken back when tried
                await take_back_left(vault, entry)  # again, not merged on top of it)
                self._left.discard(entry.id)
            return await self._write_kb_item_async(vault, entry)
        finally:
            self._undone.discard(entry.id)

    async def _append_event_async(
        self, vault: Vault, entry: MemoryEntry, *, again: bool = False
    ) -> SystemNotice:
        # Tried again after a failure, the append may have landed before the connection
        # dropped: an event is not logged twice for it.
        found = await appended_already(vault, entry, self.settings.tz) if again else None
        result = found or await append_event(vault, entry, self.settings.tz)
        return self._event_notice(entry, result)

    def _event_notice(self, entry: MemoryEntry, result: AppendResult) -> SystemNotice:
        summary = f"Logged the event {entry.title!r} in {result['path']}."
        if entry.images:  # said, not silently dropped: images go with knowledge entries
            logger.warning(
                "memory entry %s: an event keeps no images; %d not kept",
                entry.id,
                len(entry.images),
            )
            summary += f" Its {len(entry.images)} image(s) were not kept (events hold none)."
        return SystemNotice(
            entry.id,
            entry.lang,
            entry.kind,
            entry.title,
            ok=True,
            updated_files=[result["path"]],
            update_summary=summary,
            method="event",
        )

    async def _write_kb_item_async(self, vault: Vault, entry: MemoryEntry) -> SystemNotice:
        outcome = await merge_knowledge(
            vault, entry, self.settings, self._llm_client, undone_before=entry.id in self._undone
        )
        return SystemNotice(
            entry.id,
            entry.lang,
            entry.kind,
            entry.title,
            ok=True,
            updated_files=outcome.confirmation.updated_files,
            update_summary=outcome.confirmation.update_summary,
            method=outcome.method,
            fallback_reason=outcome.fallback_reason,
        )

    def _llm_client(self) -> AsyncOpenAI:
        """The OpenAI SDK client, made on first use (bad settings fail the merge, not us).
        The model's side (the SDK: 0.5 s) is imported only then."""
        if self._llm is None:
            if self.settings.llm is None:
                raise RuntimeError("no LLM configured")
            from agent_client.merge.llm import make_llm

            self._llm = make_llm(self.settings.llm)
        return self._llm
