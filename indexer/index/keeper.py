"""Keeping the index caught up with disk, and saying when it is not.

The index can fall behind in ways nobody sees at once: the kernel drops file events
(inotify queue overflow), the watcher dies or cannot start, a write to the index fails
(a full disk). Each of these calls ``Keeper.behind(reason)``; the keeper's thread then
reconciles the whole index with disk, retries with a growing pause until a pass
succeeds, and meanwhile ``partial`` is true (search results say so, ``status`` shows
why; a new failure is handed to ``on_failure``: a server checks a file SQLite called
damaged, ``late_check``). While no watcher runs (``polling()``), it reconciles every
``poll_seconds``. Its ``tidier`` merges the full-text index's segments while the index
is idle (``tidy``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from indexer.index.reconcile import ReconcileStats, Stopped
from indexer.index.tidy import Tidier
from indexer.sqlite_errors import said_plainly

log = logging.getLogger("indexer.index")

RETRY_FIRST = 0.5
RETRY_MAX = 15.0
POLL_SECONDS = 10.0


class Keeper:
    """One background thread: the start-up reconcile, then whatever catching up is due."""

    def __init__(
        self,
        reconcile: Callable[[], ReconcileStats],
        *,
        polling: Callable[[], bool] = lambda: False,
        poll_seconds: float = POLL_SECONDS,
        tidier: Tidier | None = None,
        on_failure: Callable[[Exception], None] | None = None,
    ) -> None:
        self._reconcile = reconcile
        self._on_failure = on_failure  # (a new failure's error: a damaged file is checked)
        self._tidier = tidier  # (its own thread, started and stopped with this one)
        self._polling = polling
        self._poll_seconds = poll_seconds
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stopping = False
        self._marks = 1  # the start-up reconcile is due
        self._caught = 0  # the marks the last successful pass covered
        self.reason: str | None = "the start-up reconcile has not finished"
        self.last_error: str | None = None
        self.passes = 0
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="index-keeper", daemon=True)
        self._thread.start()
        if self._tidier is not None:
            self._tidier.start()

    def stop(self, timeout: float = 30) -> None:
        if self._tidier is not None:
            self._tidier.stop(timeout)
        with self._lock:
            self._stopping = True
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=timeout)
            self._thread = None

    def behind(self, reason: str) -> None:
        """The index may miss changes (``reason`` in plain words): reconcile soon."""
        with self._lock:
            first = self._caught == self._marks
            self._marks += 1
            self.reason = reason
        if first:
            log.warning("the index fell behind (%s); reconciling with disk", reason)
        self._wake.set()

    @property
    def partial(self) -> bool:
        """True while some change on disk may be missing from the index."""
        with self._lock:
            return self._caught < self._marks

    def state(self) -> dict:
        with self._lock:
            partial = self._caught < self._marks
            return {
                "partial": partial,
                "reason": self.reason if partial else None,
                "last_error": self.last_error,
                "reconciles": self.passes,
            }

    def _run(self) -> None:
        pause = RETRY_FIRST
        next_poll = time.monotonic() + self._poll_seconds
        while True:
            with self._lock:
                if self._stopping:
                    return
                due = self._caught < self._marks
                target = self._marks
            if not due and self._polling() and time.monotonic() >= next_poll:
                due = True
            if due:
                next_poll = time.monotonic() + self._poll_seconds
                if not self._pass(target):
                    self._sleep(pause)  # new marks do not cut a retry's pause short
                    pause = min(pause * 2, RETRY_MAX)
                    continue
                pause = RETRY_FIRST
            timeout = self._poll_seconds if self._polling() else None
            self._wake.wait(timeout)
            self._wake.clear()

    def _sleep(self, seconds: float) -> None:
        """Wait ``seconds`` (or until stopped), whatever wakes the thread meanwhile."""
        deadline = time.monotonic() + seconds
        while True:
            with self._lock:
                if self._stopping:
                    return
            left = deadline - time.monotonic()
            if left <= 0:
                return
            self._wake.wait(left)
            self._wake.clear()

    def _pass(self, target: int) -> bool:
        """One reconcile covering the marks up to ``target``; False when it failed."""
        try:
            self._reconcile()
        except Stopped:
            with self._lock:
                self._stopping = True
            return True
        except Exception as err:
            text = f"{type(err).__name__}: {err}"[:300]
            with self._lock:
                repeated = text == self.last_error
                self.last_error = text
            if repeated:
                log.debug("reconciling the index failed again: %s", text)
            else:
                log.warning(  # (a full disk's words say it all: no traceback)
                    "reconciling the index failed (%s); retrying",
                    text,
                    exc_info=not said_plainly(err),
                )
                if self._on_failure is not None:
                    self._on_failure(err)
            return False
        with self._lock:
            self.passes += 1
            fell_behind = target > self._caught  # (not a poll's pass: said every 10 s)
            self._caught = max(self._caught, target)
            if self._caught == self._marks:
                if self.last_error is not None or (self.passes > 1 and fell_behind):
                    log.info("the index has caught up with disk")
                self.reason = None
                self.last_error = None
        return True
