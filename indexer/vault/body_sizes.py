"""The body sizes ``find(sizes=true)`` measured, kept by file identity.

Measuring a note's body (``shared.memory_view.shown_size``) parses its YAML block: up to
0.2 s of CPU for a 64 KiB block that another program wrote, and the memory tool lists
its folder on every ``view``. A note is measured again only when its file changed: the
key is what ``fstat`` says of it (device, inode, size, mtime and ctime in ns), so an edit
made outside the tools is seen too. A file whose ctime is less than ``SETTLED_NS`` old
is not kept: a second change within one tick of the file system's clock could leave
every part of the key as it was (git's "racy" files); a later change always moves the
ctime past it.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict

MAX_ENTRIES = 20_000  # two full levels of the largest find (10,000 each), ~5 MB
SETTLED_NS = 2_000_000_000  # coarser than any file system's clock tick (FAT's mtime: 2 s)

Identity = tuple[int, int, int, int, int]


def identity(info: os.stat_result) -> Identity:
    """What changes whenever the file's content may have changed."""
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


class BodySizes:
    """The last ``max_entries`` body sizes measured (None: not UTF-8, shown by its size
    on disk), least recently used first out; thread-safe (finds run on a pool)."""

    def __init__(self, max_entries: int = MAX_ENTRIES, settled_ns: int = SETTLED_NS) -> None:
        self._max = max_entries
        self._settled_ns = settled_ns
        self._lock = threading.Lock()
        self._entries: OrderedDict[Identity, int | None] = OrderedDict()

    def get(self, info: os.stat_result) -> tuple[bool, int | None]:
        """(found, body size) of the file ``info`` describes."""
        key = identity(info)
        with self._lock:
            if key not in self._entries:
                return False, None
            self._entries.move_to_end(key)
            return True, self._entries[key]

    def keep(self, before: os.stat_result, after: os.stat_result, size: int | None) -> None:
        """Remember ``size`` for a file read between the stats ``before`` and ``after``,
        when it did not change meanwhile and has not changed for ``settled_ns``."""
        key = identity(before)
        if key != identity(after) or time.time_ns() - before.st_ctime_ns < self._settled_ns:
            return
        with self._lock:
            self._entries[key] = size
            self._entries.move_to_end(key)
            while len(self._entries) > self._max:
                self._entries.popitem(last=False)
