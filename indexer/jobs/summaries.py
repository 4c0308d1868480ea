"""Directory summaries (seed 001): every folder's abstract and overview, kept current.

``Summaries`` is ``core.summaries``: the ``summary`` tool's reader, the listener that
marks folders dirty (``indexer.jobs.dirty``), and the background loop that redoes them
on the jobs thread. One pass over a vault is seed 001's DAG, bottom-up (``summary_pass``).

A folder is skipped (no model call, no write) when its ``children_digest`` did not
change, unless its summary is a fallback while a model is configured (a model that
failed is tried again at the next pass). Model calls are bounded by the model's
``max_concurrency``; a model failure, timeout or malformed answer falls back to the
seed's deterministic texts (``summary_texts``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import stat
import threading
import time
from collections.abc import Callable, Coroutine, Iterable
from datetime import UTC, datetime
from typing import Any, TypeVar

from indexer.index.service import NoteIndex
from indexer.jobs.dirty import Batch, DirtyFolders, affected_folders
from indexer.jobs.llm import JobModel
from indexer.jobs.previews import Previews
from indexer.jobs.runner import JobRunner
from indexer.jobs.summary_files import FileLock, Summary, SummaryFiles, Written
from indexer.jobs.summary_pass import (
    FolderPass,
    ModelGate,
    PassCounter,
    PassStats,
    Progress,
    everything,
)
from indexer.vault.recording import Recorder
from indexer.vault.sandbox import Sandbox
from shared.errors import ForbiddenPathError, InvalidArgumentError, NotFoundError, VaultError
from shared.langs import is_lang
from shared.workspace import OVERVIEW_FILE

log = logging.getLogger("indexer.jobs.summaries")
# A full pass to retry the folders a model failed on waits this long after one that
# failed again, doubling up to the most (a folder the model never answers well).
FIRST_RETRY_WAIT = 60.0
MAX_RETRY_WAIT = 3600.0
# A model that gave no answer at all (a timeout, no connection, HTTP 5xx) is not asked
# by the passes of the next changes for this long (or what its Retry-After asked): a
# hanging one cost each of them its whole timeout. The timed retries ask it still.
MODEL_DOWN_WAIT = 60.0
# A summary the file system would not take (a full disk, a read-only folder) is written
# again this long after, doubling up to MAX_RETRY_WAIT while it still cannot: without a
# change in its folder it was otherwise served as current, with the old text, for good.
FIRST_REWRITE_WAIT = 30.0
Clock = Callable[[], datetime]
T = TypeVar("T")


class Summaries:
    """The directory summaries of a workspace's vaults."""

    def __init__(
        self,
        sandbox: Sandbox,
        *,
        index: NoteIndex | None = None,
        model: JobModel | None = None,
        max_children: int = 50,
        debounce: float = 2.0,
        written: Written | None = None,
        clock: Clock | None = None,
        recorder: Recorder | None = None,
        file_lock: FileLock | None = None,
    ) -> None:
        self.sandbox = sandbox
        self.index = index
        self.model = model
        self.max_children = max_children
        self.dirty = DirtyFolders(debounce)
        self.previews = Previews()
        self.files = SummaryFiles(sandbox, index, written, recorder, file_lock)
        self.files.redo = lambda lang, rel: self._mark(lang, affected_folders(rel, by_others=True))
        self.clock: Clock = clock or (lambda: datetime.now(UTC))
        self.ready = False  # a full pass has finished: summaries were checked since start
        self.last_pass: PassStats | None = None
        self._retry_fallbacks = False  # the model answered since it failed: a full pass is due
        # (monotonic) the retry on a timer of the folders the model left with the fallback
        # (None: no folder has one)
        self._retry_at: float | None = None
        self._retry_wait = FIRST_RETRY_WAIT  # the wait after it, doubling while it fails
        self._retry_failed = False  # a retry failed: the next waits for its time, not
        # the model's next answer (a folder it always fails on was asked at every change)
        self._down_until = 0.0  # (monotonic) the model gave no answer: not asked before
        self._rewrite_at: float | None = None  # (monotonic) unwritten summaries' next try
        self._rewrite_wait: float | None = None  # the wait after it (None: the first)
        self._future: concurrent.futures.Future[None] | None = None
        self._edited: set[tuple[str, str]] = set()  # summaries edited by hand: made again
        self._edited_lock = threading.Lock()
        self._passes = asyncio.Lock()  # one pass at a time on the jobs loop (``asked_pass``)

    # -- listeners (wired in indexer.daemon.build_core) ----------------------------------

    def vault_changed(self, lang: str, rel: str) -> None:
        """A tool changed ``rel``: its folders' summaries are now stale."""
        self._mark(lang, affected_folders(rel))

    def index_changed(self, lang: str, rel: str, source: str) -> None:
        """The index synced ``rel``; tool changes are already marked by ``vault_changed``
        (and a summary this job wrote is synced as a "tool" change: not marked again).
        Any other change of a summary file was made by hand: that folder is made again
        (not kept for its children being the same), unless the index is being built
        (source "reconcile": the summaries it finds are as they were). A summary file
        still as this job wrote it is the job's own change, whoever tells it: the watcher
        syncs one before the job does at times (5 of a forced pass's 331 at 10,000 notes),
        and each was taken for a hand edit, made again and told again. A file written
        again with the bytes the index held ("rewritten") changed nothing here."""
        if source not in ("tool", "rewritten") and not self.files.still_ours(lang, rel):
            *folders, name = rel.split("/")
            if name == OVERVIEW_FILE and source != "reconcile":
                with self._edited_lock:
                    self._edited.add((lang, "/".join(folders)))
            self._mark(lang, affected_folders(rel, by_others=True))

    def take_edited(self, lang: str, folder: str) -> bool:
        """Whether the folder's summary was edited by hand since it was last made (the
        mark is taken: the pass makes it again)."""
        with self._edited_lock:
            if (lang, folder) not in self._edited:
                return False
            self._edited.discard((lang, folder))
            return True

    def _mark(self, lang: str, folders: list[str]) -> None:
        self.previews.forget(lang, folders)
        self.dirty.mark(lang, folders)

    # -- reading -------------------------------------------------------------------------

    def summary(self, lang: str, path: str = "") -> dict[str, Any]:
        """``summary(lang, path)``: the folder's summary; one being made (or none made yet)
        is marked ``stale`` (a folder without a summary file gets its fallback, unsaved)."""
        try:
            target = self.sandbox.resolve(lang, path, allow_root=True)
        except ForbiddenPathError:
            self._refuse_summary_file(lang, path)
            raise
        folder = target.rel
        where = folder or "the vault root"
        with self.sandbox.open(target) as place:
            info = place.lstat()
        if info is None:
            raise NotFoundError(f"{where} does not exist")
        if not stat.S_ISDIR(info.st_mode):
            raise InvalidArgumentError(f"{folder} is a file; summary takes a folder")
        found = self.files.read_summary(lang, folder)
        stale = not self.ready or self.dirty.is_dirty(lang, folder)
        if found is None:
            found = self._preview(lang, folder)
            if found is None:
                raise NotFoundError(f"{where} holds no notes, so it has no summary")
            stale = True
        return found.result(stale)

    def _refuse_summary_file(self, lang: str, path: str) -> None:
        """A folder's summary file named as the folder (``items/.overview.md``) is a file
        summary does not take, as any file: said so, with the folder to ask for (it was
        refused as a hidden path, which ``read`` of it is not)."""
        try:
            target = self.sandbox.resolve(lang, path, summary=True)
        except VaultError:
            return  # (refused as it was: another hidden or outside path)
        folder, _, name = target.rel.rpartition("/")
        if name == OVERVIEW_FILE:
            raise InvalidArgumentError(
                f"{target.rel} is a file, the summary of {folder or 'the vault root'}:"
                f" summary takes the folder (path={folder!r})"
            )

    def abstracts(self, lang: str, folders: list[str]) -> dict[str, str | None]:
        """Each folder's abstract as its summary file holds it, else as a preview already
        made (None: neither; none is made here, so a folder of thousands of subfolders
        is one quick call: the page's folder listing)."""
        found: dict[str, str | None] = {}
        for folder in folders:
            summary = self.files.read_summary(lang, folder)
            if summary is None:
                summary = self.previews.get(lang, folder)[1]
            found[folder] = summary.abstract if summary is not None else None
        return found

    def _preview(self, lang: str, folder: str) -> Summary | None:
        """The summary ``folder`` would have now (no model, nothing written), kept with
        those of the folders below it until a change below marks them."""
        hit, kept = self.previews.get(lang, folder)
        if hit:
            return kept
        since = self.previews.epoch()
        dag = FolderPass(self, lang, dry=True)
        made = _run_now(dag.run(folder))
        self.previews.keep(lang, dag.previewed, since)
        return made

    # -- running -------------------------------------------------------------------------

    def start(self, jobs: JobRunner) -> None:
        """Run ``run_forever`` on the jobs thread (once)."""
        if self._future is None:
            self._future = jobs.submit(self.run_forever())

    async def run_forever(self) -> None:
        """Wait for the index, check every folder once, then redo dirty folders as they
        come (debounced)."""
        while self.index is not None and not self.index.ready:
            await asyncio.sleep(0.05)
        self.dirty.take()  # what the start-up reconcile marked: the full pass covers it
        await self._logged_pass(None)
        self.dirty.done()
        while True:
            batch = await self._next_batch_or_retry()
            if batch is None:  # the time to try the model again on the fallbacks came
                await self._logged_pass(None, retry=True)
                continue
            ok = await self._logged_pass(batch)
            self.dirty.done(failed=not ok)
            if ok and self._retry_fallbacks and not self._retry_failed:
                await self._logged_pass(None, retry=True)  # the model answers again

    async def _next_batch_or_retry(self) -> Batch | None:
        """The next batch of dirty folders; None once the retry time came while folders
        have the fallback (without a change they kept it for good once the model was
        back: only a pass where it answered started their retry)."""
        timers = [at for at in (self._retry_at, self._rewrite_at) if at is not None]
        if not timers:
            return await self.dirty.next_batch()
        wait = max(0.0, min(timers) - time.monotonic())
        try:  # (cancelled while it waits: nothing taken)
            return await asyncio.wait_for(self.dirty.next_batch(), wait)
        except TimeoutError:
            if self._rewrite_at is not None and self._rewrite_at <= time.monotonic():
                self._rewrite_at = None
                return self.dirty.take()  # the summaries not written (kept dirty)
            return None

    async def asked_pass(self, langs: list[str] | None, *, force: bool) -> PassStats:
        """A pass asked for from outside (``indexer summarize`` beside the server: its
        writes are then this job's, recorded with their reason, not another program's),
        one at a time with the background ones: two never write one folder at once.
        The model answering it is no longer down: the next changes' passes ask it again
        (they gave a minute of changes the fallback, a summary the model had just made
        among them)."""
        async with self._passes:
            stats = await self.run_pass(langs, force=force)
        if stats.llm and not stats.model_errors:
            self._down_until = 0.0
        return stats

    async def _logged_pass(self, batch: Batch | None, *, retry: bool = False) -> bool:
        """One pass, logged; notes when the model failed (the folders it left with the
        fallback are tried again, in a full pass, after a pass where it answered or when
        the timer says). A batch pass does not ask a model that gave no answer lately."""
        unasked = batch is not None and time.monotonic() < self._down_until
        try:
            async with self._passes:
                stats = await self.run_pass(dirty=batch, ask_model=not unasked)
        except Exception:
            log.exception("a directory summaries pass failed")
            return False
        now = time.monotonic()
        self._keep_unwritten(stats, now)
        if stats.model_down:
            self._down_until = now + max(MODEL_DOWN_WAIT, stats.retry_after)
        if stats.model_errors or (unasked and stats.fallback):
            self._retry_fallbacks = False
            if retry or self._retry_at is None:  # the first failure: a retry on a timer,
                self._retry_at = now + self._retry_wait  # change or not
            if retry:  # a retry that failed again: the next waits longer
                self._retry_wait = min(self._retry_wait * 2, MAX_RETRY_WAIT)
                self._retry_failed = True
            self._retry_at = max(self._retry_at, self._down_until)
        elif batch is None:
            self._retry_fallbacks = self._retry_failed = False
            self._retry_wait, self._retry_at = FIRST_RETRY_WAIT, None  # every folder was seen
        elif stats.llm and self._retry_at is not None:
            self._retry_fallbacks = True  # (after a failed retry: the timer's, not now)
        if stats.llm or stats.fallback or stats.removed:
            failed = f"the model failed {_counted(stats.model_errors, 'time')}"
            if unasked:
                failed = "the model not asked: it gave no answer lately"
            unwritten = sum(len(folders) for folders in stats.unwritten.values())
            if unwritten and self._rewrite_at is not None:
                failed += (
                    f"; the summaries of {_counted(unwritten, 'folder')} not written,"
                    f" tried again in {self._rewrite_at - now:.0f}s"
                )
            log.info(
                "summaries: %s in %.1fs (%d by model, %d by fallback, %d unchanged, "
                "%d removed; %s)",
                _counted(stats.folders, "folder"), stats.seconds, stats.llm, stats.fallback,
                stats.skipped, stats.removed, failed,
            )  # fmt: skip
        return True

    def _keep_unwritten(self, stats: PassStats, now: float) -> None:
        """The folders whose summary could not be written stay stale and are tried again
        on a timer; a pass that wrote all it made ends the timer (every pass takes the
        folders kept dirty with its batch)."""
        if not stats.unwritten:
            self._rewrite_at = self._rewrite_wait = None
            return
        self.dirty.keep({lang: set(folders) for lang, folders in stats.unwritten.items()})
        wait = self._rewrite_wait or FIRST_REWRITE_WAIT
        self._rewrite_at = now + wait
        self._rewrite_wait = min(wait * 2, MAX_RETRY_WAIT)

    async def run_pass(
        self,
        langs: Iterable[str] | None = None,
        *,
        dirty: Batch | None = None,
        force: bool = False,
        progress: Progress | None = None,
        ask_model: bool = True,
    ) -> PassStats:
        """One pass over ``langs`` (default: every vault): every folder, or only the
        ``dirty`` ones (and folders below them that have no summary yet); ``force``
        redoes each folder it visits; not ``ask_model``: the model's folders too get the
        fallback."""
        started = time.monotonic()
        stats = PassStats()
        counter = PassCounter(progress)
        if dirty is not None:
            langs = sorted(dirty)
        elif langs is None:
            langs = [lang for lang in self.sandbox.workspace.langs() if is_lang(lang)]
        gate = (
            ModelGate(asyncio.Semaphore(self.model.settings.max_concurrency), down=not ask_model)
            if self.model
            else None
        )
        for lang in langs:
            redo: Callable[[str], bool] = everything
            if dirty is not None:
                redo = dirty[lang].__contains__
            dag = FolderPass(self, lang, redo=redo, force=force, gate=gate, counter=counter)
            await dag.run("")
            stats.add(dag.stats)
        stats.seconds = time.monotonic() - started
        if dirty is None and not force:
            self.ready = True
        self.last_pass = stats
        return stats


def _run_now(job: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to its end from synchronous code (a tool call's worker thread; in
    a thread of its own if this one already runs an event loop)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(job)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, job).result()


def _counted(number: int, noun: str) -> str:
    """``1 folder``, ``2 folders``: the log is read by people."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"
