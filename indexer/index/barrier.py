"""grep's barrier on the watcher: how far inotify's reader thread has read.

One inotify instance delivers its events in one order, whatever folder they come from.
``Barrier.wait`` creates a file named by a new ticket in a private folder watched by the
same instance, and waits until the reader has seen that name: every event of a change
made before the call has then been read and handed out (and told to the watcher, which
hears events from the reader thread at once; watchdog reads on one thread and hands the
events out in order from another). Linux only: it is imported where inotify is.
"""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path
from typing import Any

from watchdog.observers.inotify_c import (
    CallbackId,
    InotifyConstants,
    InotifyEvent,
    InotifyFD,
    Mask,
)

BARRIER_PREFIX = "b"


class Barrier:
    """Knows how far inotify's reader thread has read: ``wait`` makes a file named
    by a new ticket in a private folder, watched by the same inotify instance (its
    events come in one order), and waits until the reader has seen that name."""

    def __init__(self, inotify_fd: InotifyFD, folder: Path) -> None:
        self.folder = folder
        self._issued = 0
        self._seen = 0
        self._broken = False
        self._cond = threading.Condition()
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.iterdir():  # a crash's tickets
            with contextlib.suppress(OSError):
                old.unlink()
        inotify_fd.add_callback(
            os.fsencode(folder), Mask(InotifyConstants.IN_CREATE), self, CallbackId(id(self))
        )

    def wait(self, timeout: float) -> bool:
        """True once the reader has read past a ticket made now; False after ``timeout``
        seconds, or when the folder can no longer be used (removed, full disk)."""
        with self._cond:
            if self._broken:
                return False
            self._issued += 1
            ticket = self._issued
        path = self.folder / f"{BARRIER_PREFIX}{ticket}"
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600))
            os.unlink(path)
        except OSError:
            return False
        with self._cond:
            return (
                self._cond.wait_for(lambda: self._seen >= ticket or self._broken, timeout)
                and not self._broken
            )

    def on_event(self, event: InotifyEvent) -> None:
        name = os.fsdecode(event.name)
        if event.is_create and name.startswith(BARRIER_PREFIX) and name[1:].isdigit():
            with self._cond:
                self._seen = max(self._seen, int(name[1:]))
                self._cond.notify_all()

    def on_watch_deleted(self, wd: Any) -> None:
        with self._cond:
            self._broken = True
            self._cond.notify_all()

    def on_queue_overflow(self) -> None:
        pass  # the watch group tells on_lost

    def on_events_lost(self) -> None:
        pass  # (watchdog 7.1.1 calls it after every callback's on_queue_overflow)
