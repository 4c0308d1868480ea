"""The Memory Writer: one daemon thread consuming a ``queue.Queue``, a process-wide singleton.

Two producers (see the SPEC, "The agent client"):

- ``submit(entries)`` validates and enqueues a batch, and returns at once. The thread
  handles each entry on its own (``entry_writing``): knowledge -> an LLM merge
  (deterministic fallback), event -> an append to its day file. A failed entry is logged
  and reported to the notice sink; it never stops the thread or the entries after it.
  An offline indexer drops the entry with ``logger.error`` (no retry); one the indexer
  went away under is kept on disk for the next writer (``entry_writing``). Each entry is
  on disk from the submit (``inflight``): a process killed, or a host exiting, with
  entries queued leaves them to the next writer on the workspace.
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
import time
from collections.abc import Callable
from dataclasses import dataclass

from agent_client.actions import ActionResult, run_action
from agent_client.entry_writing import EntryWriter
from agent_client.inflight import Claim
from agent_client.notices import LoggingNoticeSink, NoticeSink, SystemNotice
from agent_client.reasons import undo_command
from agent_client.sessions import SessionKeeper
from agent_client.settings import ClientSettings
from agent_client.transport_logs import quiet_transport_logs
from shared.models import Action, DeleteAction, EditAction, MemoryEntry

logger = logging.getLogger("agent_client.writer")


@dataclass
class _ActionRequest:
    action: Action
    future: concurrent.futures.Future[ActionResult]


@dataclass
class _Batch:
    """Entries submitted together, each with its record on disk (``inflight``: None when
    none could be kept), held by this process from the submit on."""

    entries: list[MemoryEntry]
    claims: list[Claim | None]

    def let_go(self, *, done: bool = True) -> None:
        """Let go of the records of the entries not handed to their writing: removed
        (``done``: dropped, each told so), or left for the next writer."""
        for number, claim in enumerate(self.claims):
            if claim is not None:
                self.claims[number] = None
                claim.release(done=done)


@dataclass
class _Flush:
    done: threading.Event


_STOP = object()
IDLE_CLOSE_SECONDS = 30.0  # close the indexer connection after this long without work
_TELLING = 1.0  # past an entry's time: for what ended at its bound to be told
# Records (one open file each) kept of queued entries at most: a burst of thousands
# took as many descriptors, past a 1,024 limit, and the indexer's connection failed.
# The entries past it are recorded as they start, as all were before.
QUEUED_RECORDS = 128


def _stopped(entry: MemoryEntry, why: str, *, cut: bool = False) -> SystemNotice:
    """The notice of an entry the writer was stopped on (``cut``: while it was written)."""
    error = f"cancelled: {why}"
    if cut and entry.kind == "knowledge":
        error += f"; its writes were taken back (if any stay: `{undo_command(entry.id)}`)"
    elif cut:
        error += f"; it may have been logged (`- entry: {entry.id}` in its day file)"
    return SystemNotice(entry.id, entry.lang, entry.kind, entry.title, ok=False, error=error)


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
        self._keeper = SessionKeeper(settings)  # used by the writer thread only
        self._entries = EntryWriter(settings)  # the writer thread's (submit: its records)
        self._entries.on_start = self._mark_start
        self._started = time.monotonic()  # when the entry being written began
        # The batch or action being run now, and whether ``cancel`` was asked (any thread).
        self._task_lock = threading.Lock()
        self._running: tuple[asyncio.AbstractEventLoop, asyncio.Task[None]] | None = None
        self._cancelled = False
        quiet_transport_logs()

    # -- producers (any thread) ------------------------------------------------------

    def submit(self, entries: list[MemoryEntry]) -> None:
        """Validate every entry (``ValueError`` before anything is queued), then record
        each on disk (``inflight``: one a killed process queued is finished by the next
        writer; ~50-80 us an entry) and enqueue."""
        if not isinstance(entries, list | tuple):
            raise ValueError("submit() takes a list of MemoryEntry")
        for entry in entries:
            if not isinstance(entry, MemoryEntry):
                raise ValueError(f"not a MemoryEntry: {type(entry).__name__}")
            entry.validate()
        if entries:
            if self._closed:  # (checked again by ``_put``: this only spares the records)
                raise WriterClosedError("the memory writer is closed")
            records = self._entries.records
            claims = [
                records.hold(e, queued=True) if records.held_here() < QUEUED_RECORDS else None
                for e in entries
            ]
            batch = _Batch(list(entries), claims)
            try:
                self._put(batch)
            except BaseException:
                batch.let_go()
                raise

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

    def flush_each(self, seconds: float) -> bool:
        """Wait until everything queued before this call is done, each entry given
        ``seconds`` from its start (a dead writer's the batch finishes first too, and a
        wait on another client writing the same entry); False once one overran. The
        CLI's wait: one entry's time for the whole run timed out a run that first
        finished entries killed clients left."""
        thread = self._thread
        if thread is None:
            return True  # nothing was queued
        marker = _Flush(threading.Event())
        self._started = time.monotonic()

        def ended(left: float) -> bool:
            thread.join(left)
            return not thread.is_alive()

        done: Callable[[float], bool] = marker.done.wait
        if self._closed:  # (as ``flush``: everything queued is before its stop, the end)
            done = ended
        else:
            self._put(marker)
        while True:
            left = self._started + seconds + _TELLING - time.monotonic()
            if done(max(left, 0.0)):
                return True
            if time.monotonic() >= self._started + seconds + _TELLING:
                return False

    def _mark_start(self) -> None:
        self._started = time.monotonic()  # (one float: read by ``flush_each``'s thread)

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
        if thread is threading.current_thread():  # (a notice sink stopping the writer)
            # It stops once this notice is told; it cannot wait for itself. What is
            # queued is dropped by the thread as it takes it, in order: dropped here, a
            # flush queued behind this batch was released before the batch was told.
            self._queue.put(_STOP)
            return False
        self._drop_queued()
        self._queue.put(_STOP)
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
        elif isinstance(item, _Batch):
            item.let_go()
            for number, entry in enumerate(item.entries):
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
                failed = False
                try:
                    loop.run_until_complete(task)
                except asyncio.CancelledError:
                    logger.info("memory writer: stopped while writing (cancelled)")
                except Exception:
                    failed = True
                    logger.exception("memory writer: unexpected error; continuing")
                    if isinstance(item, _Batch):  # (the entries after it: the next batch's)
                        item.let_go(done=False)
                finally:
                    with self._task_lock:
                        self._running = None
                    # (cut off, perhaps before it began, or stopped between its entries)
                    if task.cancelled() or (self._cancelled and not failed):
                        self._drop(item, notified)
        finally:
            with contextlib.suppress(Exception):
                loop.run_until_complete(self._keeper.close())
            with contextlib.suppress(Exception):
                loop.run_until_complete(self._entries.close())
            runner.close()

    async def _process_batch(self, batch: _Batch, told: set[int]) -> None:
        """Each entry in turn; ``told`` gets the position of each one told of (its record
        settled by the entry's writing)."""
        for number, entry in enumerate(batch.entries):
            if self._cancelled:  # (a sink's cancel: an offline entry fails without yielding
                return  # to the loop, so the task's cancel comes too late; ``_drop`` tells)
            try:
                if number == 0:
                    await self._keeper.begin()
                    for claim in self._entries.leftovers(batch.entries):
                        self._notify(await self._entries.write(self._keeper, claim.entry, claim))
                queued, batch.claims[number] = batch.claims[number], None  # (its writing's)
                notice = await self._entries.write(self._keeper, entry, queued=queued)
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
