"""The Memory Writer: one daemon thread consuming a ``queue.Queue``, a process-wide singleton.

Two producers (see the SPEC, "The agent client"):

- ``submit(entries)`` validates and enqueues a batch, and returns at once. The thread
  handles each entry on its own: knowledge -> ``_write_kb_item_async`` (LLM merge,
  deterministic fallback), event -> ``_append_event_async``. A failed entry is logged
  and reported to the notice sink; it never stops the thread or the entries after it.
  An offline indexer drops the entry with ``logger.error`` (no retry).
- ``execute_action_async(action)`` runs a delete/edit on the thread and hands the
  result (or the error, ``IndexerOfflineError`` included) back through a future.

One consumer does all writing, so the writer itself needs no locks.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import queue
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agent_client.actions import ActionResult, run_action
from agent_client.events import append_event, appended_already
from agent_client.failures import describe_failure
from agent_client.inflight import Claim, InFlight
from agent_client.leftovers import adopt_orphans, in_flight, take_back_left
from agent_client.merge.knowledge import MergeCutShort, merge_knowledge
from agent_client.notices import LoggingNoticeSink, NoticeSink, SystemNotice
from agent_client.results import AppendResult
from agent_client.sessions import SessionKeeper
from agent_client.settings import ClientSettings
from agent_client.transport_logs import quiet_transport_logs
from agent_client.vault import Vault
from shared.control_chars import printable
from shared.errors import IndexerOfflineError
from shared.models import Action, DeleteAction, EditAction, MemoryEntry

if TYPE_CHECKING:
    from openai import AsyncOpenAI

logger = logging.getLogger("agent_client.writer")


@dataclass
class _ActionRequest:
    action: Action
    future: concurrent.futures.Future[ActionResult]


@dataclass
class _Flush:
    done: threading.Event


_STOP = object()
IDLE_CLOSE_SECONDS = 30.0  # close the indexer connection after this long without work


def _stopped(entry: MemoryEntry, why: str, *, cut: bool = False) -> SystemNotice:
    """The notice of an entry the writer was stopped on (``cut``: while it was written)."""
    error = f"cancelled: {why}"
    if cut and entry.kind == "knowledge":
        error += f"; its writes were taken back (if any stay: `agent-client undo {entry.id}`)"
    elif cut:
        error += f"; it may have been logged (`- entry: {entry.id}` in its day file)"
    return SystemNotice(entry.id, entry.lang, entry.kind, entry.title, ok=False, error=error)


class AppendCutShort(IndexerOfflineError):
    """The indexer stopped answering while an event was being appended: it may be in
    the day file (a call's answer lost is not a call not made)."""


class WriterClosedError(RuntimeError):
    """The writer was closed (or stopped) before it could take or finish the request: the
    host is shutting it down. A ``RuntimeError``, as it always was."""


class MemoryWriter:
    """Validates, merges and writes memory entries on one daemon thread."""

    def __init__(self, settings: ClientSettings, sink: NoticeSink | None = None) -> None:
        self.settings = settings
        self.sink: NoticeSink = sink or LoggingNoticeSink()
        self._queue: queue.Queue[object] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()  # guards the lazy start only
        self._closed = False
        self._llm: AsyncOpenAI | None = None
        self._keeper = SessionKeeper(settings)  # used by the writer thread only
        # Entries whose merge was cut short and undone: tried again as new (writer thread).
        self._undone: set[str] = set()
        self._inflight = InFlight(settings.workspace)  # entries in flight, on disk
        self._adopted: dict[str, Claim] = {}  # dead writers' entries a batch brought again
        self._left: set[str] = set()  # the ids of dead writers' entries, to settle first
        # The batch or action being run now, and whether ``cancel`` was asked (any thread).
        self._task_lock = threading.Lock()
        self._running: tuple[asyncio.AbstractEventLoop, asyncio.Task[None]] | None = None
        self._cancelled = False
        quiet_transport_logs()

    # -- producers (any thread) ------------------------------------------------------

    def submit(self, entries: list[MemoryEntry]) -> None:
        """Validate every entry (``ValueError`` before anything is queued), then enqueue."""
        if not isinstance(entries, list | tuple):
            raise ValueError("submit() takes a list of MemoryEntry")
        for entry in entries:
            if not isinstance(entry, MemoryEntry):
                raise ValueError(f"not a MemoryEntry: {type(entry).__name__}")
            entry.validate()
        if entries:
            self._put(list(entries))

    def execute_action(self, action: Action) -> concurrent.futures.Future[ActionResult]:
        """Enqueue a delete/edit; the future gets its result or its error."""
        if not isinstance(action, DeleteAction | EditAction):
            raise ValueError(f"not an action: {type(action).__name__}")
        action.validate()
        future: concurrent.futures.Future[ActionResult] = concurrent.futures.Future()
        self._put(_ActionRequest(action, future))
        return future

    async def execute_action_async(self, action: Action) -> ActionResult:
        """Run a delete/edit on the writer thread and await its result."""
        return await asyncio.wrap_future(self.execute_action(action))

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until everything queued before this call is done; False on timeout."""
        thread = self._thread
        if thread is None:
            return True  # nothing was queued
        if self._closed:  # (everything queued is before its stop: the thread's end)
            thread.join(timeout)
            return not thread.is_alive()
        marker = _Flush(threading.Event())
        self._put(marker)
        return marker.done.wait(timeout)

    def close(self, timeout: float | None = 10.0) -> None:
        """Finish the queued work (up to ``timeout``) and stop the thread."""
        with self._start_lock:
            self._closed = True
            thread = self._thread
        if thread is not None:
            self._queue.put(_STOP)
            thread.join(timeout)

    def cancel(self, timeout: float | None = 10.0) -> bool:
        """Stop now, for an interrupt (Ctrl-C, SIGTERM): the entry being written is cut
        off and its writes are taken back as for a failure (an event's append may have
        landed), what is queued is dropped (each says so in its notice); True when the
        writer stopped within ``timeout``. A process killed instead leaves the entry in
        flight on disk: the next writer on the workspace finishes it (``leftovers``)."""
        with self._start_lock:
            self._closed = True
            thread = self._thread
        with self._task_lock:
            first, self._cancelled = not self._cancelled, True
            running = self._running
        if running is not None and first:  # (a second cancel waits: it cut off the undo)
            running[0].call_soon_threadsafe(running[1].cancel)
        if thread is None:
            return True
        self._drop_queued()
        self._queue.put(_STOP)
        if thread is threading.current_thread():  # (a notice sink stopping the writer)
            return False  # it stops once this notice is told; it cannot wait for itself
        thread.join(timeout)
        return not thread.is_alive()

    def _drop_queued(self) -> None:
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return
            self._drop(item)

    def _drop(self, item: object, notified: set[int] | None = None) -> None:
        """Settle an item that was not (or not wholly) run: a flush is released, an
        action's future fails, each entry not told of yet gets its notice."""
        if isinstance(item, _Flush):
            item.done.set()
        elif isinstance(item, _ActionRequest):
            if not item.future.done():
                with contextlib.suppress(concurrent.futures.InvalidStateError):
                    if item.future.running() or item.future.set_running_or_notify_cancel():
                        stopped = WriterClosedError("the memory writer was stopped")
                        item.future.set_exception(stopped)
        elif isinstance(item, list):
            for number, entry in enumerate(item):
                if notified is None or number not in notified:
                    self._notify(_stopped(entry, "the writer was stopped before it was written"))

    def _put(self, item: object) -> None:
        if self._thread is None or self._closed:
            self._start()
        self._queue.put(item)

    def _start(self) -> None:
        with self._start_lock:
            if self._closed:
                raise WriterClosedError("the memory writer is closed")
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run_loop, name="memory-writer", daemon=True
                )
                self._thread.start()

    # -- the consumer thread ---------------------------------------------------------

    def _run_loop(self) -> None:
        # Closed as ``asyncio.run`` closes its loop: a task still pending at the end (a
        # connection's own task, say) is cancelled and awaited in that task before the
        # async generators are closed. A generator closed while its task still ran was
        # finalized from another task: anyio's "cancel scope in a different task" and
        # "generator didn't stop after athrow()", printed by the loop's error handler.
        runner = asyncio.Runner()
        loop = runner.get_loop()
        try:
            while True:
                try:
                    item = self._queue.get(timeout=IDLE_CLOSE_SECONDS)
                except queue.Empty:
                    loop.run_until_complete(self._keeper.close())  # idle: let it go
                    continue
                if item is _STOP:
                    break
                if isinstance(item, _Flush):
                    item.done.set()
                    continue
                notified: set[int] = set()  # (positions: ids need not be unique)
                with self._task_lock:
                    stopped = self._cancelled  # (taken as ``cancel`` emptied the queue)
                    if not stopped:
                        if isinstance(item, _ActionRequest):
                            work = self._process_action(item)
                        else:
                            work = self._process_batch(item, notified)  # type: ignore[arg-type]
                        task = loop.create_task(work)
                        self._running = (loop, task)
                if stopped:  # (told outside the lock: a sink may call ``cancel``)
                    self._drop(item)
                    continue
                try:
                    loop.run_until_complete(task)
                except asyncio.CancelledError:
                    logger.info("memory writer: stopped while writing (cancelled)")
                except Exception:
                    logger.exception("memory writer: unexpected error; continuing")
                finally:
                    with self._task_lock:
                        self._running = None
                    if task.cancelled():  # (cut off, perhaps before it began)
                        self._drop(item, notified)
        finally:
            with contextlib.suppress(Exception):
                loop.run_until_complete(self._keeper.close())
            if self._llm is not None:
                with contextlib.suppress(Exception):
                    loop.run_until_complete(self._llm.close())
            runner.close()

    async def _process_batch(self, entries: list[MemoryEntry], told: set[int]) -> None:
        """Each entry in turn; ``told`` gets the position of each one told of."""
        for number, entry in enumerate(entries):
            try:
                if number == 0:
                    await self._keeper.begin()
                    for claim in adopt_orphans(self._inflight, entries, self._adopted, self._left):
                        self._notify(await self._process_entry(self._keeper, claim.entry, claim))
                notice = await self._process_entry(self._keeper, entry)
            except asyncio.CancelledError:
                told.add(number)
                self._notify(_stopped(entry, "interrupted while it was written", cut=True))
                raise  # (the entries after it are told by ``_drop``)
            told.add(number)
            self._notify(notice)

    def _notify(self, notice: SystemNotice) -> None:
        try:
            self.sink.notify(notice)
        except Exception:
            logger.exception("notice sink failed for entry %s", notice.entry_id)

    async def _process_entry(
        self, keeper: SessionKeeper, entry: MemoryEntry, orphan: Claim | None = None
    ) -> SystemNotice:
        """One entry, kept on disk while in flight (``inflight``, ``leftovers``)."""
        claim = orphan or self._adopted.pop(entry.id, None)
        run = self._entry_notice(keeper, entry)
        return await in_flight(claim or self._inflight.hold(entry), run, orphan=bool(orphan))

    async def _entry_notice(self, keeper: SessionKeeper, entry: MemoryEntry) -> SystemNotice:
        """One entry: a knowledge merge, or an event appended to its day file."""
        try:
            return await self._apply_or_retry(keeper, entry)
        except IndexerOfflineError as exc:
            reason, error = f"dropped: indexer offline: {exc.message}", str(exc)
        except Exception as exc:
            error = describe_failure(exc)
            reason = f"failed: {error}"
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
                exc.message += (
                    f"; writes of the merge may have landed: `agent-client undo {entry.id}` "
                    "takes them back once the indexer runs"
                )
            exc.args = (exc.message,)
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
        self._left.discard(entry.id)
        vault = (await keeper.get()).vault(entry.lang)
        if entry.kind == "event":
            try:
                return await self._append_event_async(vault, entry, again=again or left)
            except IndexerOfflineError as exc:  # its append may have landed
                raise AppendCutShort(exc.message) from exc
        try:
            if left:
                await take_back_left(vault, entry)
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

    async def _process_action(self, request: _ActionRequest) -> None:
        if not request.future.set_running_or_notify_cancel():
            return  # the caller gave up before we started
        try:
            await self._keeper.begin()
            session = await self._keeper.get()
            result = await run_action(session.vault(request.action.lang), request.action)
        except Exception as exc:
            request.future.set_exception(exc)
        else:
            request.future.set_result(result)
        # (cut off by ``cancel``: the future fails in ``_drop``)


# -- the process-wide singleton ----------------------------------------------------------

_writer: MemoryWriter | None = None
_writer_lock = threading.Lock()


def configure_writer(settings: ClientSettings, sink: NoticeSink | None = None) -> MemoryWriter:
    """Install the process-wide writer (call once from ``main()``); closes a previous one."""
    global _writer
    with _writer_lock:
        old, _writer = _writer, MemoryWriter(settings, sink)
    if old is not None:
        old.close()
    return _writer


def get_writer() -> MemoryWriter:
    """The process-wide writer; built from the environment on first use if not configured."""
    global _writer
    with _writer_lock:
        if _writer is None:
            _writer = MemoryWriter(ClientSettings.resolve())
        return _writer


def submit(entries: list[MemoryEntry]) -> None:
    get_writer().submit(entries)


async def execute_action_async(action: Action) -> ActionResult:
    return await get_writer().execute_action_async(action)


def flush(timeout: float | None = None) -> bool:
    return get_writer().flush(timeout)


def close(timeout: float | None = 10.0) -> None:
    global _writer
    with _writer_lock:
        writer, _writer = _writer, None
    if writer is not None:
        writer.close(timeout)
