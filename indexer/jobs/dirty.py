"""Which folders' summaries are out of date, and when to redo them (debounced).

A change to a note makes its folder and every folder above it dirty (each summary is
made of its children's abstracts, so a change travels up to the vault root). A change
to a summary file this job wrote (``a/b/.overview.md``) dirties the folders above ``a/b``
only: the parent reads that abstract, while ``a/b`` was just summarized (no loop). One
changed by anyone else (a hand edit) dirties ``a/b`` too: it is made again.

Marks come from any thread (tool calls, the watcher, the reconcile); the summaries job
awaits ``next_batch`` on its own event loop, which returns once marks stop arriving for
``debounce`` seconds, or at the latest ``max_delay`` seconds after the first one.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable, Iterable

from shared.workspace import OVERVIEW_FILE

Batch = dict[str, set[str]]  # lang -> dirty folders ("" is the vault root)


def affected_folders(rel: str, *, by_others: bool = False) -> list[str]:
    """The folders whose summaries a change of ``rel`` makes stale, deepest first. A
    summary file changed ``by_others`` (edited by hand, damaged, removed) is stale itself
    and is made again; one this job wrote stales only the folders above it."""
    *folders, name = rel.split("/")
    if not marked("/".join(folders)):
        return []
    if name == OVERVIEW_FILE and not by_others:
        if not folders:
            return []  # the vault root's summary: nothing reads it
        folders.pop()
    return ["/".join(folders[:depth]) for depth in range(len(folders), -1, -1)]


def marked(folder: str) -> bool:
    """Whether changes in ``folder`` mark folders (a dot-folder's or an ``.assets``
    folder's files are no notes: no summary reads them, no change there is told)."""
    return not any(p.startswith(".") or p.endswith(".assets") for p in folder.split("/") if p)


class DirtyFolders:
    """Thread-safe set of dirty folders per lang, with a debounced wake-up."""

    def __init__(
        self,
        debounce: float = 2.0,
        max_delay: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.debounce = debounce
        self.max_delay = max_delay if max_delay is not None else max(debounce * 10, debounce)
        self._clock = clock
        self._lock = threading.Lock()
        self._dirty: Batch = {}
        self._working: Batch = {}  # the batch a pass is redoing now
        self._failed: Batch = {}  # a failed pass's batch: still dirty, goes with the next
        self._first = 0.0
        self._last = 0.0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None

    def mark(self, lang: str, folders: Iterable[str]) -> None:
        """Make ``folders`` of ``lang`` dirty and wake the waiting pass (any thread)."""
        folders = list(folders)
        if not folders:
            return
        with self._lock:
            now = self._clock()
            first = not self._dirty
            if first:
                self._first = now
            self._last = now
            self._dirty.setdefault(lang, set()).update(folders)
            loop, wake = self._loop, self._wake
        # Only the first mark of a batch wakes the waiting pass: it looks at ``_last``
        # again when its wait ends (each wake-up cost a thread hop on every write).
        if first and loop is not None and wake is not None:
            with contextlib.suppress(RuntimeError):  # the loop is closed: shutting down
                loop.call_soon_threadsafe(wake.set)

    def is_dirty(self, lang: str, folder: str) -> bool:
        """Whether ``folder`` waits for a pass or is being redone by one."""
        with self._lock:
            batches = (self._dirty, self._working, self._failed)
            return any(folder in batch.get(lang, ()) for batch in batches)

    def take(self) -> Batch:
        """Every dirty folder now (they count as being worked on until ``done``)."""
        with self._lock:
            batch, self._dirty = self._dirty, {}
            for lang, folders in self._failed.items():
                batch.setdefault(lang, set()).update(folders)
            self._failed = {}
            for lang, folders in batch.items():
                self._working.setdefault(lang, set()).update(folders)
            return batch

    def done(self, failed: bool = False) -> None:
        """The pass over the taken folders has finished. Those of a pass that ``failed``
        stay dirty (a summary of them is said to be stale) and go with the next batch,
        which the next change starts (no retry loop on a failure that stays)."""
        with self._lock:
            if failed:
                for lang, folders in self._working.items():
                    self._failed.setdefault(lang, set()).update(folders)
            self._working = {}

    def keep(self, folders: Batch) -> None:
        """``folders`` were not written (the file system refused): they stay dirty (their
        summaries are said to be stale) and go with the next batch."""
        with self._lock:
            for lang, names in folders.items():
                self._failed.setdefault(lang, set()).update(names)

    async def next_batch(self) -> Batch:
        """Wait for dirty folders, then until they settle; take them."""
        with self._lock:
            self._loop = asyncio.get_running_loop()
            if self._wake is None:
                self._wake = asyncio.Event()
            wake = self._wake
        while True:
            with self._lock:
                wait: float | None = None
                if self._dirty:
                    due = min(self._last + self.debounce, self._first + self.max_delay)
                    wait = due - self._clock()
                    if wait <= 0:
                        break
            wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wake.wait(), wait)
        return self.take()
