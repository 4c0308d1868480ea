"""Outside changes history could not record (a full disk), recorded once it can.

The watcher's change of a note is recorded when the index tells it; history refused on a
full disk, the change was logged with a traceback and never recorded: freeing space did
not bring it back (nor did a restart: the index had the change, so nothing was told
again), and the note's history lacked that text until a tool changed the note. Each
refused path is kept here and recorded again (its file as it then is) on a timer, a
little later each time while history still cannot take it. A server stopped while some
still wait tries them once more (``close``) and, if history still refuses, leaves no
clean mark: the next start compares history with every file (the index had the change,
so that start had nothing to tell, and the change was lost as before).

A file history refuses for good (past SQLite's length limit: ``RefusedFiles``) waits
too, and would so have cost every start after a stop the full check: one still as it
was refused is not lost (no history can take it), so ``close`` leaves it out of its
count and keeps it (``kept_refused``) for the clean mark, and the next start ``seed``s
it back: still refused and said, not read again until it changes.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from indexer.vault.refused_files import Identity, RefusedFiles
from shared.errors import StorageError, VaultError

log = logging.getLogger("indexer.vault")
FIRST_WAIT = 5.0  # seconds before the first retry, doubling while it still fails
MAX_WAIT = 300.0
Outside = tuple[str, str, bool]  # (lang, path, unknown): a change the index told
# Records changes, in batches; returns those history refused (a full disk) with its error:
# ``outside.observe_many``
ObserveMany = Callable[[list[Outside]], tuple[list[Outside], StorageError | None]]
# A file history refused for good, as it was refused: (lang, path, unknown, identity)
Refusal = tuple[str, str, bool, Identity]


class Unrecorded:
    """The outside changes waiting for history to take them, and their retry timer."""

    def __init__(
        self,
        observe: ObserveMany,
        refused: RefusedFiles | None = None,
        still_refused: Callable[[str, str], Identity | None] | None = None,
    ) -> None:
        """``refused``, ``still_refused``: the files history refused for good, and the
        identity one is still refused with (``outside.still_refused``: a stat)."""
        self._observe = observe
        self._refused = refused
        self._still_refused = still_refused
        self.kept_refused: list[Refusal] = []  # (``close``: for the clean mark)
        self._lock = threading.Lock()
        self._waiting: dict[tuple[str, str], bool] = {}  # (lang, path) -> unknown
        self._timer: threading.Timer | None = None
        self._wait = FIRST_WAIT
        self._closed = False  # (no timer after the close: history is closed next)
        self._retrying = threading.Lock()  # one retry at a time (the close's waits)

    def record(self, changes: list[Outside]) -> None:
        """Record outside changes (in batches); those history refuses wait for the next
        retry."""
        left, err = self._observe(changes)
        if err is None:
            return
        with self._lock:
            first = not self._waiting
            self._wait_for_room(left)
            self._schedule()
            wait = self._wait
        if first:  # (one line an outage, not one a change)
            lang, path, _ = left[0]
            more = f" (and {len(left) - 1} more)" if len(left) > 1 else ""
            log.warning(
                "history: could not record the change of %s/%s%s made outside the tools"
                " (%s); it and any more are recorded once history can take them"
                " (tried again in %.0fs)", lang, path, more, err.message, wait,
            )  # fmt: skip

    def _wait_for_room(self, left: list[Outside]) -> None:
        """(lock held) Keep ``left`` for the next retry."""
        for lang, path, unknown in left:
            key = (lang, path)
            self._waiting[key] = self._waiting.get(key, False) or unknown

    def waiting(self) -> int:
        """How many changes wait to be recorded (for status and tests)."""
        with self._lock:
            return len(self._waiting)

    def _schedule(self) -> None:
        """(lock held) Start the retry timer unless one runs."""
        if self._timer is None and not self._closed:
            self._timer = threading.Timer(self._wait, self._retry)
            self._timer.daemon = True
            self._timer.start()

    def seed(self, refusals: list[Refusal]) -> None:
        """The files a clean stop left refused for good (its mark): remembered with the
        identity they were refused with, and waiting, so that this start says them and
        reads none of them until it changes (the index, whole, tells it nothing)."""
        if not refusals or self._refused is None:
            return
        for lang, path, _, identity in refusals:
            self._refused.remember(lang, path, identity)
        with self._lock:
            self._wait_for_room([(lang, path, unknown) for lang, path, unknown, _ in refusals])
            self._schedule()
        lang, path = refusals[0][:2]
        more = f" (and {len(refusals) - 1} more)" if len(refusals) > 1 else ""
        log.warning(
            "history: could not record %s/%s%s (larger than history can store, as at the"
            " last stop); it is read again once it changes",
            lang,
            path,
            more,
        )

    def close(self) -> int:
        """Stop the timer and try the waiting changes once more (before history closes);
        how many history still refused (the caller leaves no clean mark then), but for
        the files it refused for good as they still are (``kept_refused``)."""
        with self._lock:
            self._closed = True
            timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()
        self._retry()  # (after one under way: ``_retrying``)
        with self._lock:
            waiting = dict(self._waiting)
        self.kept_refused = self._refused_for_good(waiting)
        if self.kept_refused:
            log.info(
                "history: %d file(s) larger than history can store are left unrecorded"
                " (%s/%s first); the next start refuses them again without reading them",
                len(self.kept_refused),
                *self.kept_refused[0][:2],
            )
        left = len(waiting) - len(self.kept_refused)
        if left:
            log.warning(
                "history: %d change(s) made outside the tools are not recorded (history"
                " still refuses them); the next start compares history with the files",
                left,
            )
        return left

    def _refused_for_good(self, waiting: dict[tuple[str, str], bool]) -> list[Refusal]:
        """The waiting files history refused for good as they still are."""
        if self._still_refused is None:
            return []
        kept: list[Refusal] = []
        for (lang, path), unknown in waiting.items():
            identity = self._still_refused(lang, path)
            if identity is not None:
                kept.append((lang, path, unknown, identity))
        return kept

    def _retry(self) -> None:
        with self._retrying:
            self._retry_waiting()

    def _retry_waiting(self) -> None:
        with self._lock:
            self._timer = None
            waiting, self._waiting = self._waiting, {}
        left: list[Outside] = []
        try:  # (history still refusing: all from the first batch refused wait again)
            left, _ = self._observe([(*key, unknown) for key, unknown in waiting.items()])
        except VaultError as err:  # (history closed, damaged): nothing more to do
            log.warning("history: could not record %d change(s): %s", len(waiting), err.message)
        with self._lock:
            self._wait_for_room(left)
            if self._waiting:
                self._wait = min(self._wait * 2, MAX_WAIT)
                self._schedule()
                return
            self._wait = FIRST_WAIT
        if not waiting:
            return
        recorded = len(waiting) - len(left)
        log.info(
            "history: recorded %d change(s) made outside the tools while it was full", recorded
        )
