"""Directory summaries (seed 001): every folder's abstract and overview, kept current.

``Summaries`` is ``core.summaries``: the ``summary`` tool's reader, the listener that
marks folders dirty (``indexer.jobs.dirty``), and the background loop that redoes them
on the jobs thread. One pass is seed 001's DAG (``_Dag``): ``_dispatch`` lists a folder
(its notes are done at once, their abstracts read while listing) and dispatches the
subfolders to redo concurrently; a folder's pending counter counts those subfolders,
and when it reaches zero ``_summarize`` makes the folder's summary, writes it, and tells
the parent (``_child_done``). So a parent is summarized exactly once, after all its
children, whatever the order in which they finish.

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
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, TypeVar

from indexer.index.service import NoteIndex
from indexer.jobs.dirty import Batch, DirtyFolders, affected_folders
from indexer.jobs.llm import JobModel, ModelError
from indexer.jobs.previews import Previews
from indexer.jobs.runner import JobRunner
from indexer.jobs.summary_files import (
    FolderInput,
    Summary,
    SummaryFiles,
    Written,
    render_summary,
)
from indexer.jobs.summary_texts import (
    Child,
    categories,
    children_digest,
    fallback_abstract,
    fallback_overview,
    most_recent,
    prompt_messages,
    read_answer,
)
from indexer.vault.recording import Recorder
from indexer.vault.sandbox import Sandbox
from shared.errors import InvalidArgumentError, InvalidFrontmatterError, NotFoundError
from shared.langs import is_lang
from shared.workspace import OVERVIEW_FILE

log = logging.getLogger("indexer.jobs.summaries")
# A full pass to retry the folders a model failed on waits this long after one that
# failed again, doubling up to the most (a folder the model never answers well).
FIRST_RETRY_WAIT = 60.0
MAX_RETRY_WAIT = 3600.0
Progress = Callable[[int, int], None]  # (folders done, folders found so far)
Clock = Callable[[], datetime]
T = TypeVar("T")


@dataclass
class PassStats:
    """What one pass did, per folder that holds notes (``removed``: stale summaries of
    folders that no longer hold any)."""

    folders: int = 0
    llm: int = 0
    fallback: int = 0
    skipped: int = 0
    removed: int = 0
    unreadable: int = 0  # notes skipped because they could not be read
    model_errors: int = 0
    seconds: float = 0.0

    def add(self, other: PassStats) -> None:
        for name in ("folders", "llm", "fallback", "skipped", "removed", "unreadable"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.model_errors += other.model_errors


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
    ) -> None:
        self.sandbox = sandbox
        self.index = index
        self.model = model
        self.max_children = max_children
        self.dirty = DirtyFolders(debounce)
        self.previews = Previews()
        self.files = SummaryFiles(sandbox, index, written, recorder)
        self.files.redo = lambda lang, rel: self._mark(lang, affected_folders(rel, by_others=True))
        self.clock: Clock = clock or (lambda: datetime.now(UTC))
        self.ready = False  # a full pass has finished: summaries were checked since start
        self.last_pass: PassStats | None = None
        self._fallbacks_left = False  # the model failed: some folders have the fallback
        self._retry_fallbacks = False  # and it has answered since: a full pass is due
        self._next_retry = 0.0  # (monotonic) not before: a folder it fails on for good
        self._retry_wait = FIRST_RETRY_WAIT  # was asked again at every change
        self._future: concurrent.futures.Future[None] | None = None
        self._edited: set[tuple[str, str]] = set()  # summaries edited by hand: made again
        self._edited_lock = threading.Lock()

    # -- listeners (wired in indexer.daemon.build_core) ----------------------------------

    def vault_changed(self, lang: str, rel: str) -> None:
        """A tool changed ``rel``: its folders' summaries are now stale."""
        self._mark(lang, affected_folders(rel))

    def index_changed(self, lang: str, rel: str, source: str) -> None:
        """The index synced ``rel``; tool changes are already marked by ``vault_changed``
        (and a summary this job wrote is synced as a "tool" change: not marked again).
        Any other change of a summary file was made by hand: that folder is made again
        (not kept for its children being the same), unless the index is being built
        (source "reconcile": the summaries it finds are as they were)."""
        if source != "tool":
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
        target = self.sandbox.resolve(lang, path, allow_root=True)
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

    def _preview(self, lang: str, folder: str) -> Summary | None:
        """The summary ``folder`` would have now (no model, nothing written), kept with
        those of the folders below it until a change below marks them."""
        hit, kept = self.previews.get(lang, folder)
        if hit:
            return kept
        since = self.previews.epoch()
        dag = _Dag(self, lang, dry=True)
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
            batch = await self.dirty.next_batch()
            ok = await self._logged_pass(batch)
            self.dirty.done(failed=not ok)
            if ok and self._retry_fallbacks and time.monotonic() >= self._next_retry:
                await self._logged_pass(None, retry=True)  # the model answers again

    async def _logged_pass(self, batch: Batch | None, *, retry: bool = False) -> bool:
        """One pass, logged; notes when the model failed (the folders it left with the
        fallback are tried again, in a full pass, after a pass where it answered)."""
        try:
            stats = await self.run_pass(dirty=batch)
        except Exception:
            log.exception("a directory summaries pass failed")
            return False
        if stats.model_errors:
            self._fallbacks_left, self._retry_fallbacks = True, False
            if retry:  # a retry that failed again: the next waits longer
                self._next_retry = time.monotonic() + self._retry_wait
                self._retry_wait = min(self._retry_wait * 2, MAX_RETRY_WAIT)
        elif batch is None:
            self._fallbacks_left = self._retry_fallbacks = False  # every folder was seen
            self._retry_wait = FIRST_RETRY_WAIT
        elif stats.llm and self._fallbacks_left:
            self._retry_fallbacks = True
        if stats.llm or stats.fallback or stats.removed:
            log.info(
                "summaries: %d folders in %.1fs (%d by model, %d by fallback, %d unchanged, "
                "%d removed; the model failed %d times)",
                stats.folders, stats.seconds, stats.llm, stats.fallback, stats.skipped,
                stats.removed, stats.model_errors,
            )  # fmt: skip
        return True

    async def run_pass(
        self,
        langs: Iterable[str] | None = None,
        *,
        dirty: Batch | None = None,
        force: bool = False,
        progress: Progress | None = None,
    ) -> PassStats:
        """One pass over ``langs`` (default: every vault): every folder, or only the
        ``dirty`` ones (and folders below them that have no summary yet); ``force``
        redoes each folder it visits."""
        started = time.monotonic()
        stats = PassStats()
        counter = _Counter(progress)
        if dirty is not None:
            langs = sorted(dirty)
        elif langs is None:
            langs = [lang for lang in self.sandbox.workspace.langs() if is_lang(lang)]
        slots = asyncio.Semaphore(self.model.settings.max_concurrency) if self.model else None
        for lang in langs:
            redo: Callable[[str], bool] = _everything
            if dirty is not None:
                redo = dirty[lang].__contains__
            dag = _Dag(self, lang, redo=redo, force=force, slots=slots, counter=counter)
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


def _everything(folder: str) -> bool:
    return True


def _nothing(folder: str) -> bool:
    return False


class _Counter:
    """Folders found and done across a pass, for a progress display."""

    def __init__(self, progress: Progress | None) -> None:
        self.progress = progress
        self.found = 0
        self.done = 0

    def add(self, found: int = 0, done: int = 0) -> None:
        self.found += found
        self.done += done
        if self.progress is not None:
            self.progress(self.done, self.found)


@dataclass
class _Node:
    """A folder in the DAG (seed 001's DirNode): its listing, the subfolders it still
    waits for (``pending``), and the subfolders' summaries as they arrive."""

    folder: str
    parent: str | None
    found: FolderInput | None
    pending: int = 0
    folders: list[Child] = field(default_factory=list)


class _Dag:
    """One bottom-up pass over one vault (or, ``dry``, a preview: no model, no writes)."""

    def __init__(
        self,
        owner: Summaries,
        lang: str,
        *,
        redo: Callable[[str], bool] = _nothing,
        force: bool = False,
        dry: bool = False,
        slots: asyncio.Semaphore | None = None,
        counter: _Counter | None = None,
    ) -> None:
        self.owner = owner
        self.files = owner.files
        self.lang = lang
        self.redo = redo
        self.force = force
        self.dry = dry
        self.model = None if dry else owner.model
        self.slots = slots or asyncio.Semaphore(1)
        self.counter = counter or _Counter(None)
        self.stats = PassStats()
        self.nodes: dict[str, _Node] = {}
        self.result: Summary | None = None
        self.previewed: dict[str, Summary | None] = {}  # (dry) every folder's preview
        self._tasks: asyncio.TaskGroup | None = None

    async def run(self, top: str) -> Summary | None:
        """Summarize ``top`` and, first, what below it must be redone."""
        async with asyncio.TaskGroup() as tasks:
            self._tasks = tasks
            tasks.create_task(self._dispatch(top, None))
        return self.result

    def _spawn(self, job: Any) -> None:
        assert self._tasks is not None
        self._tasks.create_task(job)

    async def _dispatch(self, folder: str, parent: str | None) -> None:
        """List ``folder``; dispatch the subfolders to redo, or summarize it at once."""
        found, ready, todo = self._list(folder)
        node = _Node(folder, parent, found, pending=len(todo), folders=ready)
        self.nodes[folder] = node
        self.counter.add(found=1)
        if not todo:
            self._spawn(self._summarize(node))
        for sub in todo:
            self._spawn(self._dispatch(sub, folder))

    def _list(self, folder: str) -> tuple[FolderInput | None, list[Child], list[str]]:
        """(listing, summaries of the subfolders kept as they are, subfolders to redo)."""
        found = self.files.read(self.lang, folder)
        ready: list[Child] = []
        todo: list[str] = []
        for name in found.folders if found is not None else []:
            sub = f"{folder}/{name}" if folder else name
            existing = None if self.redo(sub) else self.files.read_summary(self.lang, sub)
            if existing is None and self.dry:
                hit, existing = self.owner.previews.get(self.lang, sub)
                if hit and existing is None:
                    continue  # previewed: it holds no notes
            if existing is None:
                todo.append(sub)  # to redo, or no summary yet
            else:
                ready.append(existing.as_child())
        return found, ready, todo

    def _child_done(self, parent: str, child: Child | None) -> None:
        """A subfolder is done: one less to wait for; the last one starts the parent."""
        node = self.nodes[parent]
        if child is not None:
            node.folders.append(child)
        node.pending -= 1
        if node.pending == 0:
            self._spawn(self._summarize(node))

    async def _summarize(self, node: _Node) -> None:
        found = node.found
        notes = found.notes if found is not None else []
        children = sorted(notes + node.folders, key=lambda child: child.name)
        existing = found.summary if found is not None else None
        self.stats.unreadable += len(found.unreadable) if found is not None else 0
        summary: Summary | None = None
        if not children:
            if found is not None and found.unreadable:
                log.warning("summaries: no note of %s/%s could be read", self.lang, node.folder)
            if existing is not None and not self.dry:
                await self._commit(node.folder, None)
                self.stats.removed += 1
        else:
            summary = await self._make(node.folder, children, existing)
            self.stats.folders += 1
        self.counter.add(done=1)
        if self.dry:
            self.previewed[node.folder] = summary
        del self.nodes[node.folder]  # done: only its parent's node is still needed
        if node.parent is None:
            self.result = summary
        else:
            self._child_done(node.parent, summary.as_child() if summary else None)

    async def _make(self, folder: str, children: list[Child], existing: Summary | None) -> Summary:
        """The folder's summary: the current one when nothing changed, else a new one
        (by the model when there is one and it answers well, else the fallback)."""
        digest = children_digest(folder, children)
        edited = (
            not self.dry
            and self.owner.take_edited(self.lang, folder)
            and existing is not None
            and existing.saved_after_written()
        )
        if (
            existing is not None
            and not (self.force or edited)
            and existing.children_digest == digest
            and (existing.generated_by == "llm" or self.model is None)
        ):
            self.stats.skipped += 1
            return existing
        shown = most_recent(children, self.owner.max_children)
        made = await self._ask_model(folder, children, shown, digest)
        if made is None:
            made = self._fallback(folder, children, shown, digest)
            if existing is not None and existing.children_digest == digest and not edited:
                if not self.force:
                    self.stats.fallback += 1  # the model failed again: the file stays
                    return existing
                if existing.generated_by == "llm":
                    # Forced without a model (or the model failing): the fallback is no
                    # better than a current model summary (``summarize --force`` from a
                    # shell without the server's model wrote fallbacks over them all).
                    self.stats.skipped += 1
                    return existing
        if self.dry:
            return made
        try:
            data = render_summary(made, existing, self.owner.clock())
        except (InvalidFrontmatterError, ValueError):  # not with our texts; a model's, maybe
            log.warning("summaries: the model's summary of %s cannot be written", folder)
            made = self._fallback(folder, children, shown, digest)
            data = render_summary(made, existing, self.owner.clock())
        if made.generated_by == "llm":
            self.stats.llm += 1
        else:
            self.stats.fallback += 1
        await self._commit(folder, data)
        return replace(made, mtime_ns=time.time_ns())

    async def _ask_model(
        self, folder: str, children: list[Child], shown: list[Child], digest: str
    ) -> Summary | None:
        if self.model is None:
            return None
        messages = prompt_messages(self.lang, folder, shown, len(children))
        try:
            async with self.slots:
                answer = await self.model.complete_json(messages)
            abstract, overview = read_answer(answer)
        except (ModelError, ValueError) as err:
            self.stats.model_errors += 1
            # One warning a pass (the pass's line counts them): a model that is down
            # would otherwise log once per folder.
            level = logging.WARNING if self.stats.model_errors == 1 else logging.DEBUG
            log.log(level, "summaries: %s/%s: the model failed (%s)", self.lang, folder, err)
            return None
        cats = categories(children)
        return Summary(folder, abstract, overview, len(children), cats, digest, "llm")

    def _fallback(
        self, folder: str, children: list[Child], shown: list[Child], digest: str
    ) -> Summary:
        return Summary(
            folder,
            fallback_abstract(self.lang, children),
            fallback_overview(self.lang, shown, len(children) - len(shown)),
            len(children),
            categories(children),
            digest,
            "fallback",
        )

    async def _commit(self, folder: str, data: bytes | None) -> None:
        rel = f"{folder}/{OVERVIEW_FILE}" if folder else OVERVIEW_FILE
        self.owner.previews.forget(self.lang, affected_folders(rel, by_others=True))
        try:
            await asyncio.to_thread(self.files.commit, self.lang, folder, data)
        except OSError as err:  # a full disk, a read-only vault: the next change retries
            log.warning("summaries: cannot write the summary of %s/%s: %s", self.lang, folder, err)
