"""One pass of the directory summaries over one vault: seed 001's DAG, bottom-up.

``FolderPass.run`` lists a folder (its notes are done at once, their abstracts read
while listing) and dispatches the subfolders to redo concurrently; a folder's pending
counter counts those subfolders, and when it reaches zero ``_summarize`` makes the
folder's summary, writes it, and tells the parent (``_child_done``). So a parent is
summarized exactly once, after all its children, whatever the order they finish in.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from indexer.jobs.dirty import affected_folders
from indexer.jobs.folder_changes import FolderChangedError
from indexer.jobs.llm import ModelError
from indexer.jobs.summary_files import FolderInput, Summary, render_summary
from indexer.jobs.summary_texts import (
    Child,
    categories,
    children_digest,
    fallback_abstract,
    fallback_overview,
    most_recent,
    older_fallback,
    prompt_messages,
    read_answer,
)
from shared.errors import InvalidFrontmatterError, StorageError
from shared.workspace import OVERVIEW_FILE

if TYPE_CHECKING:
    from indexer.jobs.summaries import Summaries

log = logging.getLogger("indexer.jobs.summaries")
Progress = Callable[[int, int], None]  # (folders done, folders found so far)
UNREADABLE_SAMPLE = 5  # unreadable notes a pass names (it counts them all)


@dataclass
class PassStats:
    """What one pass did, per folder that holds notes (``removed``: stale summaries of
    folders that no longer hold any)."""

    folders: int = 0
    llm: int = 0
    fallback: int = 0
    skipped: int = 0
    removed: int = 0
    noteless: int = 0  # folders looked at that hold no note (now): no summary
    unreadable: int = 0  # notes skipped because they could not be read
    # the first few of them, "lang/path" (``indexer summarize`` names them, not the log only)
    unreadable_sample: list[str] = field(default_factory=list)
    model_errors: int = 0
    model_down: bool = False  # one gave no answer at all (``ModelGate.down``)
    retry_after: float = 0.0  # the seconds the endpoint asked callers to wait
    seconds: float = 0.0
    # lang -> folders whose summary the file system would not take (a full disk): they
    # stay stale and are written again on a timer (``Summaries``)
    unwritten: dict[str, list[str]] = field(default_factory=dict)

    def add(self, other: PassStats) -> None:
        names = ("folders", "llm", "fallback", "skipped", "removed", "noteless", "unreadable")
        for name in names:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        room = UNREADABLE_SAMPLE - len(self.unreadable_sample)
        self.unreadable_sample.extend(other.unreadable_sample[: max(room, 0)])
        for lang, folders in other.unwritten.items():
            self.unwritten.setdefault(lang, []).extend(folders)
        self.model_errors += other.model_errors
        self.model_down = self.model_down or other.model_down
        self.retry_after = max(self.retry_after, other.retry_after)


def everything(folder: str) -> bool:
    return True


def nothing(folder: str) -> bool:
    return False


@dataclass
class ModelGate:
    """The model's turns in one pass: at most ``slots`` calls at once, and none once it
    gave no answer at all (``ModelError.down``): a hanging model cost its whole timeout
    at each level of a 31-level tree, 31 minutes for one pass of fallbacks. A gate
    made ``down`` asks nothing (the model gave no answer a pass ago)."""

    slots: asyncio.Semaphore
    down: bool = False
    retry_after: float = 0.0  # the most seconds an answer's ``Retry-After`` asked for


class PassCounter:
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


class FolderPass:
    """One bottom-up pass over one vault (or, ``dry``, a preview: no model, no writes)."""

    def __init__(
        self,
        owner: Summaries,
        lang: str,
        *,
        redo: Callable[[str], bool] = nothing,
        force: bool = False,
        dry: bool = False,
        gate: ModelGate | None = None,
        counter: PassCounter | None = None,
    ) -> None:
        self.owner = owner
        self.files = owner.files
        self.lang = lang
        self.redo = redo
        self.force = force
        self.dry = dry
        self.model = None if dry else owner.model
        self.gate = gate or ModelGate(asyncio.Semaphore(1))
        self.counter = counter or PassCounter(None)
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
        if found is not None and found.unreadable:
            self.stats.unreadable += len(found.unreadable)
            sample = self.stats.unreadable_sample
            prefix = f"{self.lang}/{node.folder}/" if node.folder else f"{self.lang}/"
            room = max(UNREADABLE_SAMPLE - len(sample), 0)
            sample.extend(prefix + name for name in found.unreadable[:room])
        summary: Summary | None = None
        if not children:
            self.stats.noteless += 1
            if found is not None and found.unreadable:
                log.warning("summaries: no note of %s/%s could be read", self.lang, node.folder)
            if existing is not None and not self.dry:
                await self._commit(node.folder, None)
                self.stats.removed += 1
        else:
            listed = found.names if found is not None else None
            summary = await self._make(node.folder, children, existing, listed)
            self.stats.folders += 1
        self.counter.add(done=1)
        if self.dry:
            self.previewed[node.folder] = summary
        del self.nodes[node.folder]  # done: only its parent's node is still needed
        if node.parent is None:
            self.result = summary
        else:
            self._child_done(node.parent, summary.as_child() if summary else None)

    async def _make(
        self,
        folder: str,
        children: list[Child],
        existing: Summary | None,
        listed: frozenset[str] | None = None,
    ) -> Summary:
        """The folder's summary: the current one when nothing changed, else a new one
        (by the model when there is one and it answers well, else the fallback), written
        unless the folder's names are no longer ``listed`` (``folder_changes``)."""
        digest = children_digest(folder, children, self.owner.max_children)
        edited = (
            not self.dry
            and self.owner.take_edited(self.lang, folder)
            and existing is not None
            and existing.saved_after_written()
        )
        # A fallback in older words (English, written before the vault's language had
        # words of its own) is no current one: it is written again in them.
        current = (
            existing is not None
            and existing.children_digest == digest
            and not (
                existing.generated_by == "fallback"
                and older_fallback(self.lang, children, existing.abstract)
            )
        )
        if (
            existing is not None
            and current
            and not (self.force or edited)
            and (existing.generated_by == "llm" or self.model is None)
        ):
            self.stats.skipped += 1
            return existing
        shown = most_recent(children, self.owner.max_children)
        made = await self._ask_model(folder, children, shown, digest)
        if made is None:
            made = self._fallback(folder, children, shown, digest)
            if existing is not None and current and not edited:
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
            render_summary(made, existing, self.owner.clock())  # (rendered again to write)
        except (InvalidFrontmatterError, ValueError):  # not with our texts; a model's, maybe
            log.warning("summaries: the model's summary of %s cannot be written", folder)
            made = self._fallback(folder, children, shown, digest)
        if made.generated_by == "llm":
            self.stats.llm += 1
        else:
            self.stats.fallback += 1
        written: Summary = made  # (a name the closure sees narrowed)

        def render() -> bytes:
            """The file's text, its ``updated`` taken as it is written: a pass's writes
            wait their turn (3.7 s at 10,000 notes, minutes at 100,000), and one saved
            over 5 s after its ``updated`` was taken for a hand edit once heard as others'
            (``Summary.saved_after_written``)."""
            return render_summary(written, existing, self.owner.clock())

        await self._commit(folder, render, listed)
        return replace(made, mtime_ns=time.time_ns())

    async def _ask_model(
        self, folder: str, children: list[Child], shown: list[Child], digest: str
    ) -> Summary | None:
        if self.model is None or self.gate.down:
            return None
        messages = prompt_messages(self.lang, folder, shown, len(children))
        try:
            async with self.gate.slots:
                if self.gate.down:  # (it went down while this call waited for a slot)
                    return None
                answer = await self.model.complete_json(messages)
            abstract, overview = read_answer(answer)
        except (ModelError, ValueError) as err:
            self.stats.model_errors += 1
            down = isinstance(err, ModelError) and err.down
            self.gate.down = self.gate.down or down
            self.stats.model_down = self.stats.model_down or down
            if isinstance(err, ModelError) and err.retry_after is not None:
                self.gate.retry_after = max(self.gate.retry_after, err.retry_after)
                self.stats.retry_after = self.gate.retry_after
            # One warning a pass (the pass's line counts them): a model that is down
            # would otherwise log once per folder.
            level = logging.WARNING if self.stats.model_errors == 1 else logging.DEBUG
            rest = "; the pass's other folders get the fallback" if down else ""
            log.log(
                level, "summaries: %s/%s: the model failed (%s)%s", self.lang, folder, err, rest
            )
            return None
        cats = categories(children)
        return Summary(folder, abstract, overview, len(children), cats, digest, "llm")

    def _fallback(
        self, folder: str, children: list[Child], shown: list[Child], digest: str
    ) -> Summary:
        return Summary(
            folder,
            fallback_abstract(self.lang, children),
            fallback_overview(self.lang, children, shown),
            len(children),
            categories(children),
            digest,
            "fallback",
        )

    async def _commit(
        self,
        folder: str,
        render: Callable[[], bytes] | None,
        listed: frozenset[str] | None = None,
    ) -> None:
        """Write the folder's summary (``render`` makes it in the writing thread) or
        remove it (None); one whose folder changed since ``listed`` is left for later."""
        rel = f"{folder}/{OVERVIEW_FILE}" if folder else OVERVIEW_FILE
        self.owner.previews.forget(self.lang, affected_folders(rel, by_others=True))

        def write() -> None:
            self.files.commit(self.lang, folder, render() if render is not None else None, listed)

        try:
            await asyncio.to_thread(write)
        except FolderChangedError:  # (another program's change, as rm -rf empties it)
            log.debug("summaries: %s/%s changed while summarized: later", self.lang, folder)
            self.stats.unwritten.setdefault(self.lang, []).append(folder)
        except (OSError, StorageError) as err:  # a full disk, a read-only vault: the folder
            # stays stale and is tried again on a timer (a full disk is a StorageError: the
            # file's or history's write)
            why = err.message if isinstance(err, StorageError) else err
            log.warning("summaries: cannot write the summary of %s/%s: %s", self.lang, folder, why)
            self.stats.unwritten.setdefault(self.lang, []).append(folder)
