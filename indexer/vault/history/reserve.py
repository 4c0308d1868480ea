"""Room kept for deletes on a full disk: a file of ``RESERVE_BYTES`` in the history's
folder, given up when SQLite refuses to record a delete for want of space.

On a full disk even a delete's tiny history row is refused (SQLite's log grows by a
page or more), so nothing could be deleted through the tools to free space, and
history must record every delete first (nothing is lost untracked). A user freeing
space expects deletes to work: the store gives up this file and tries the delete's row
again; the file removed leaves room for that row and the next ones. It is made again
once the disk has room for it twice over.
"""

from __future__ import annotations

import logging
import os
from contextlib import suppress
from pathlib import Path

log = logging.getLogger("indexer.history")

RESERVE_NAME = "reserve"
RESERVE_BYTES = 1 << 20


class Reserve:
    """The reserve file of one history folder."""

    def __init__(self, folder: Path, size: int = RESERVE_BYTES) -> None:
        self.path = folder / RESERVE_NAME
        self.size = size
        self._missing = True  # (looked at by ``keep``)

    def keep(self) -> None:
        """Make the file when it is missing and the disk has room for it twice over
        (never the last free space: a full disk stays the user's to free)."""
        if not self._missing:
            return
        try:
            if self.path.stat().st_size >= self.size:
                self._missing = False
                return
        except FileNotFoundError:
            pass
        except OSError:
            return
        try:
            info = os.statvfs(self.path.parent)
            if info.f_bavail * info.f_frsize < 2 * self.size:
                return
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError:
            return
        try:
            os.posix_fallocate(fd, 0, self.size)  # (blocks taken now, not a sparse file)
            self._missing = False
        except OSError:
            with suppress(OSError):
                os.unlink(self.path)
        finally:
            os.close(fd)

    def give_up(self) -> bool:
        """Remove the file to make room; whether there was one to remove."""
        try:
            os.unlink(self.path)
        except OSError:
            return False
        self._missing = True
        log.warning(
            "history: the disk is full; the space kept for deletes (%d KiB) is used so"
            " that a delete can be recorded; free some space",
            self.size >> 10,
        )
        return True
