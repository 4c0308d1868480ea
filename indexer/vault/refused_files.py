"""Files history refused for good, by their identity, so an unchanged one is not read
again at every retry.

A file past SQLite's length limit (1e9 bytes; ``INDEXER_MAX_FILE_BYTES`` raised above
it) is refused whenever it is recorded: it waits in ``Unrecorded``, whose retries, up to
every 300 s, read it whole each time (5 s for 1 GB) to be refused again. Its refusal is
kept here by (lang, path) with the file's identity then (device, inode, size, mtime and
ctime in ns): a retry that finds the same identity leaves it waiting unread; a file
changed since (another identity) is read and tried again. Kept in memory, and across a
clean stop in its mark (``indexer.clean_mark``): a start after a crash reads it once.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable

Identity = tuple[int, int, int, int, int]  # (dev, ino, size, mtime_ns, ctime_ns)
MAX_KEPT = 4096  # files remembered (the most recently refused)


def identity_of(info: os.stat_result) -> Identity:
    # (ctime too: a same-size rewrite within mtime's tick, or an mtime put back with
    # `touch -d` or `rsync -t`, changes it)
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns


class RefusedFiles:
    """The files history refused for good, (lang, path) -> their identity then."""

    def __init__(self) -> None:
        self._kept: OrderedDict[tuple[str, str], Identity] = OrderedDict()
        self._lock = threading.Lock()

    def __bool__(self) -> bool:
        with self._lock:
            return bool(self._kept)

    def refused(self, lang: str, path: str, now: Callable[[], Identity | None]) -> bool:
        """Whether the file at (lang, path) was refused as it is ``now()`` (asked only
        of a file refused before: a stat)."""
        with self._lock:
            kept = self._kept.get((lang, path))
        return kept is not None and now() == kept

    def kept(self, lang: str, path: str) -> Identity | None:
        """The identity the file at (lang, path) was refused with (None: not refused)."""
        with self._lock:
            return self._kept.get((lang, path))

    def remember(self, lang: str, path: str, identity: Identity) -> None:
        with self._lock:
            self._kept.pop((lang, path), None)
            self._kept[(lang, path)] = identity
            while len(self._kept) > MAX_KEPT:
                self._kept.popitem(last=False)

    def forget(self, lang: str, path: str) -> None:
        """The file at (lang, path) was recorded, or is gone: nothing to skip there."""
        with self._lock:
            self._kept.pop((lang, path), None)
