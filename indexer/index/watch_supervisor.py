"""Keeps the index's file watcher alive: restarts an observer that died, follows its
folder when it is moved or replaced, and falls back to polling while none can start
(the index reconciles periodically then); ``state()`` says which. An observer that
could not watch every folder (``fs.inotify.max_user_watches``) counts as polling, and
is started again now and then to watch them all. The observer itself is
``observer.new_observer``."""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from pathlib import Path

from watchdog.events import FileSystemEventHandler
from watchdog.observers.api import BaseObserver

from indexer.index.observer import WATCHED_EVENTS, OnLost, OnPath, new_observer

log = logging.getLogger("indexer.index.watcher")
RETRY_SECONDS = 60.0
UNWATCHED = (
    "the inotify watch limit is reached (fs.inotify.max_user_watches): some folders are not"
    " watched, and changes there are found by a periodic reconcile"
)


def _identity(path: Path) -> tuple[int, int] | None:
    """The folder at ``path`` as (device, inode); None when there is none."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return (found.st_dev, found.st_ino)


class Supervisor:
    """Runs a watchdog observer on ``root``; restarts it if it dies; polls meanwhile.

    ``on_lost(reason)`` is told whenever events may have been missed (the observer
    died, restarted, could not start, or dropped events): the index reconciles then.
    ``on_path(kind, path, is_folder)``, when given, hears every event at once from
    inotify's reader thread (Linux); plain file events (created, written, closed,
    deleted) come only there, moves and folders to ``handler`` as well.
    ``barrier_dir``: a private folder for ``caught_up`` (see ``barrier.Barrier``).
    """

    def __init__(
        self,
        root: Path,
        handler: FileSystemEventHandler,
        on_lost: OnLost,
        on_path: OnPath | None = None,
        barrier_dir: Path | None = None,
    ) -> None:
        self.root = root
        self.handler = handler
        self.on_lost = on_lost
        self.on_path = on_path
        self.barrier_dir = barrier_dir
        self.restarts = 0
        self.last_error: str | None = None
        self._observer: BaseObserver | None = None
        self._root_id: tuple[int, int] | None = None  # the folder the observer watches
        self._retry_at = 0.0
        self._failed_root: tuple[int, int] | None = None  # the root a start failed on
        self._stopped = False  # for good: a check after the stop starts nothing
        self._lock = threading.Lock()

    def caught_up(self, timeout: float) -> bool:
        """Whether every change made before this call has been told (see ``on_path``),
        with every folder watched; False when that cannot be known (no inotify, no
        barrier, an observer down, a folder left unwatched, ``timeout`` seconds)."""
        observer = self._observer
        check = getattr(observer, "caught_up", None)
        if check is None or _identity(self.root) != self._root_id:
            return False  # (moved or replaced: inotify follows the folder it watched)
        return bool(check(timeout))

    def start(self) -> None:
        """Start watching; on failure the state is "polling" and a retry is scheduled."""
        with self._lock:
            self._stopped = False
            self._start_locked()

    def _start_locked(self) -> None:
        observer: BaseObserver | None = None
        tried = _identity(self.root)  # (before: it may come back while the start fails)
        try:  # inotify_init itself may fail (fs.inotify.max_user_instances)
            observer = new_observer(self.on_lost, self.on_path, self.barrier_dir)
            observer.schedule(
                self.handler, str(self.root), recursive=True, event_filter=WATCHED_EVENTS
            )
            observer.start()
            self._root_id = _identity(self.root)
        except Exception as err:
            if observer is not None:
                with contextlib.suppress(Exception):
                    observer.stop()
            self._observer = None
            self._retry_at = time.monotonic() + RETRY_SECONDS
            self._failed_root = tried
            self.last_error = f"{type(err).__name__}: {err}"[:300]
            log.warning(
                "the file watcher could not start (%s); the index is reconciled"
                " periodically instead",
                self.last_error,
            )
            self.on_lost("the file watcher could not start")
            return
        self._observer = observer

    def check(self) -> None:
        """Restart a dead observer; retry a failed start, or one that left folders
        unwatched, now and then. Nothing once stopped: the watcher's thread checks after
        each batch, and one that ends after the stop would start an observer no one stops."""
        with self._lock:
            if self._stopped:
                return
            observer = self._observer
            if observer is not None:
                healthy = getattr(observer, "healthy", observer.is_alive)
                moved = _identity(self.root) != self._root_id
                if healthy() and not moved:
                    if not self._unwatched(observer) or time.monotonic() < self._retry_at:
                        return
                    log.info("the file watcher tries again to watch every folder")
                    self._retry_at = time.monotonic() + RETRY_SECONDS
                else:
                    if moved:  # inotify follows the folder it watches wherever it goes
                        log.warning("the watched folder %s was moved or replaced", self.root)
                    log.warning("the file watcher stopped; restarting it")
                with contextlib.suppress(Exception):
                    observer.stop()
                self._observer = None
            elif time.monotonic() < self._retry_at and not self._root_back():
                return
            self.restarts += 1
            self._start_locked()
            if self._observer is not None:
                self.on_lost("the file watcher stopped and was restarted")

    def _unwatched(self, observer: BaseObserver) -> bool:
        """Whether ``observer`` left a folder unwatched (see ``UNWATCHED``); once it
        watches them all again, the error is cleared."""
        unwatched = bool(getattr(observer, "unwatched", bool)())
        if unwatched and self.last_error != UNWATCHED:
            self.last_error = UNWATCHED
            self._retry_at = time.monotonic() + RETRY_SECONDS
            log.warning("%s", UNWATCHED)
        elif not unwatched and self.last_error == UNWATCHED:
            self.last_error = None
            log.info("the file watcher watches every folder again")
        return unwatched

    def _root_back(self) -> bool:
        """The watched folder is another than the one a start failed on (a restore
        moved it back, or made it again): no reason to wait for the retry (a minute of
        polling, saves found up to 10 s late)."""
        now = _identity(self.root)
        return now is not None and now != self._failed_root

    def stop(self) -> None:
        with self._lock:
            observer, self._observer = self._observer, None
            self._stopped = True
        if observer is not None:
            try:  # watchdog forgets a watch whose folder was swapped: it raises KeyError
                observer.stop()
            except Exception as err:
                log.warning(
                    "the file watcher did not stop cleanly (%s: %s)", type(err).__name__, err
                )
            observer.join(timeout=10)

    def state(self) -> dict:
        """``{"state": "running" | "polling", "restarts": n, "last_error": ...}``."""
        observer = self._observer
        unwatched = observer is not None and bool(getattr(observer, "unwatched", bool)())
        return {
            "state": "running" if self._observer is not None and not unwatched else "polling",
            "restarts": self.restarts,
            "last_error": None
            if self.last_error == UNWATCHED and not unwatched
            else self.last_error,
        }
