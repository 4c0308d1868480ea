"""How the tools' changes reach the index: writes by group commit, appends deferred.

A write (``changed``) is indexed before its tool call returns (read-your-writes).
Concurrent writes share one transaction: the first to arrive leads and commits every
change queued so far; the others wait for that commit (or lead the next one) and
return once their own change is in. A path queued twice is synced once. A leader alone
in the queue while writes came together of late (a group of several in the last
``together`` seconds) first waits ``gather`` (0.5 ms) for the others' changes: with 8
clients writing, 0.8 transactions a write, gathered 0.3, and a note synced in a group
of 8 costs two thirds of one synced alone (0.63-0.76 -> 0.43-0.50 ms of CPU). A lone
writer never waits.

An append (``appended``) only marks its file pending: re-indexing a day file costs
its whole size (its words and trigrams are rebuilt), while an append must cost the
same on any file. The pending files are indexed by a background flush, at most
``delay`` after the append, the delay growing with what the last flush cost (so
flushing never takes more than about a tenth of a CPU), and by anything that reads
the index first (``flush``), so a search right after an append finds its text. grep
needs no flush: a file whose size or mtime differ from its row is read anyway, and
``unflushed`` names the files whose rows lack an append (grep reads those too when it
takes the watcher's word for the rest).

Each pending append keeps the etag the tool left: when the file holds other bytes by
the time it is indexed, someone changed it outside the tools meanwhile, and the change
is told as the watcher's (history records it as such).
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable

from indexer.vault.no_wait import may_wait

log = logging.getLogger("indexer.index")

Key = tuple[str, str]  # (lang, path)
Told = list[tuple[str, str, str]]  # (lang, path, source)
# Sync a batch {key: etag left by the tool (None: not told)} in one transaction; returns
# what changed and from where. Never raises (a failure marks the index behind).
Sync = Callable[[dict[Key, str | None]], Told]
Tell = Callable[[Told], None]

MIN_DELAY = 0.2
MAX_DELAY = 10.0
COST_SHARE = 10  # wait this many times what the last flush took
GATHER_SECONDS = 0.0005  # a leader's wait for concurrent writers' changes (see above)
TOGETHER_SECONDS = 0.1  # how long a group of several makes the next leaders wait


class ToolChanges:
    """The queue of changes made through the tools, not yet in the index."""

    def __init__(
        self,
        sync: Sync,
        tell: Tell,
        *,
        min_delay: float = MIN_DELAY,
        max_delay: float = MAX_DELAY,
        gather: float = GATHER_SECONDS,
        together: float = TOGETHER_SECONDS,
    ) -> None:
        self._sync = sync
        self._tell = tell
        self._min_delay = min_delay
        self._max_delay = max(max_delay, min_delay)
        self._delay = min_delay
        self._queue_lock = threading.Lock()
        self._writes: dict[Key, str | None] = {}
        self._writes_queued = 0
        self._writes_done = 0
        self._commit_lock = threading.Lock()  # held by the leader of a group commit
        self._gather, self._together_for = gather, together
        self._together_at = -math.inf  # when a group commit last took in several calls
        self._appends: dict[Key, str | None] = {}
        self._flushing: dict[Key, str | None] = {}  # taken by a flush, not committed yet
        self._appends_queued = 0
        self._appends_done = 0
        self._flush_lock = threading.Lock()
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    # -- writes ------------------------------------------------------------------------

    def changed(self, key: Key, etag: str | None = None) -> None:
        """Index ``key`` now; returns once that is committed (by us or a leader).
        ``etag``: what the tool left there (None: gone, or not told), to tell an outside
        change made in the meantime from the tool's own."""
        self.changed_all({key: etag})

    def changed_all(self, changes: dict[Key, str | None]) -> None:
        """Index every key of ``changes`` (key: etag, as ``changed`` takes them) now, in
        one transaction: a folder moved or an entry undone commits once, not per file."""
        with self._queue_lock:
            self._writes_queued += 1
            ticket = self._writes_queued
            self._writes.update(changes)
        told: Told = []
        with self._commit_lock:
            if self._writes_done < ticket:
                if self._writes_queued == ticket and self._together():
                    time.sleep(self._gather)
                with self._queue_lock:
                    batch, self._writes = self._writes, {}
                    upto = self._writes_queued
                if upto - self._writes_done > 1:
                    self._together_at = time.monotonic()
                told = self._sync(batch)
                self._writes_done = upto
        own = [change for change in told if change[2] == "tool"]
        if own:
            self._tell(own)
        if outside := [change for change in told if change[2] != "tool"]:
            # Made outside the tools while a tool held the note (rare): history reads
            # it under the note's lock, which the tool holds until this call returns
            threading.Thread(
                target=self._tell, args=(outside,), name="index-tell-outside", daemon=True
            ).start()

    def _together(self) -> bool:
        """Whether writes came together of late (a leader alone then waits ``gather``)."""
        return self._gather > 0 and time.monotonic() - self._together_at < self._together_for

    # -- appends -----------------------------------------------------------------------

    def appended(self, key: Key, etag: str) -> None:
        """``key`` was appended to (leaving ``etag``): index it soon, or before a read."""
        with self._queue_lock:
            self._appends_queued += 1
            self._appends[key] = etag
        self._wake.set()
        if self._thread is None:
            self._start()

    def pending(self, key: Key) -> bool:
        """Whether ``key`` waits for a flush (the watcher leaves it to the flush)."""
        with self._queue_lock:
            return key in self._appends

    def unflushed(self, lang: str) -> set[str]:
        """The files of ``lang`` appended to whose rows do not hold the append yet."""
        with self._queue_lock:
            keys = [*self._appends, *self._flushing]
        return {path for key_lang, path in keys if key_lang == lang}

    def flush(self) -> None:
        """Index every append made so far (returns at once when there is none)."""
        wanted = self._appends_queued
        if self._appends_done >= wanted:
            return
        may_wait()  # (a search on the event loop moves to a thread: this takes the lock)
        told: Told = []
        with self._flush_lock:
            if self._appends_done >= wanted:
                return  # another flush covered ours while we waited
            with self._queue_lock:
                batch, self._appends = self._appends, {}
                self._flushing = batch
                upto = self._appends_queued
            try:
                if batch:
                    told = self._sync(batch)
            finally:
                with self._queue_lock:
                    self._flushing = {}
            self._appends_done = upto
        if told:
            self._tell(told)

    # -- the background flush ----------------------------------------------------------

    def _start(self) -> None:
        with self._queue_lock:
            if self._thread is not None or self._stopping.is_set():
                return
            self._thread = threading.Thread(target=self._run, name="index-flush", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the background flush, then flush what is pending."""
        self._stopping.set()
        self._wake.set()
        thread = self._thread
        if thread is not None:
            thread.join(timeout=60)
        self.flush()

    def _run(self) -> None:
        while not self._stopping.is_set():
            self._wake.wait()
            if self._stopping.wait(self._delay):
                return
            self._wake.clear()  # appends from now on wake the next round
            started = time.monotonic()
            try:
                self.flush()
            except Exception:  # never seen; keep flushing later ones
                log.exception("flushing appended notes into the index failed")
            took = time.monotonic() - started
            self._delay = min(self._max_delay, max(self._min_delay, took * COST_SHARE))

    @property
    def delay(self) -> float:
        """How long the next background flush waits after an append."""
        return self._delay
