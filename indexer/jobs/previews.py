"""The summaries shown for folders that have no summary file yet, kept until they change.

Why: the ``summary`` tool answers for a folder without ``.overview.md`` (a fresh vault
before its first pass, a read-only one where no summary can be written) with a preview
of its subtree, made on the spot. Made on every call, a folder of thousands of
subfolders cost seconds of CPU each time. A preview is kept here, for its folder and for
every folder below that was previewed with it, until a change below the folder marks
it (the same marks that make summaries stale), and is never kept when a change arrived
while it was being made.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable

from indexer.jobs.dirty import marked
from indexer.jobs.summary_files import Summary

# What the kept previews may hold, in characters of their texts (a fallback overview
# lists up to 50 abstracts: about 12 Ki characters at most); the least recently used go.
MAX_PREVIEW_CHARS = 8 * 1024 * 1024
ENTRY_CHARS = 256  # what an entry costs besides its texts

Key = tuple[str, str]  # (lang, folder)


class Previews:
    """Thread-safe store of previews by folder, forgotten when the folder changes."""

    def __init__(self, limit: int = MAX_PREVIEW_CHARS) -> None:
        self._limit = limit
        self._size = 0
        self._lock = threading.Lock()
        self._kept: OrderedDict[Key, Summary | None] = OrderedDict()
        self._changes = 0  # how many marks so far: a preview made across one is not kept

    def get(self, lang: str, folder: str) -> tuple[bool, Summary | None]:
        """(kept, its preview): a folder previewed as holding no notes is kept as None."""
        with self._lock:
            if (lang, folder) not in self._kept:
                return False, None
            self._kept.move_to_end((lang, folder))
            return True, self._kept[(lang, folder)]

    def epoch(self) -> int:
        """The count of changes so far: give it to ``keep`` with what was made after it."""
        with self._lock:
            return self._changes

    def keep(self, lang: str, made: dict[str, Summary | None], since: int) -> None:
        """Keep the previews ``made`` (by folder), unless anything changed ``since``."""
        with self._lock:
            if self._changes != since:
                return
            for folder, summary in made.items():
                if not marked(folder):
                    continue  # no change there would ever be told: made at each call
                self._drop((lang, folder))
                self._kept[(lang, folder)] = summary
                self._size += _size(summary)
            while self._size > self._limit:
                self._drop(next(iter(self._kept)))

    def forget(self, lang: str, folders: Iterable[str]) -> None:
        """``folders`` of ``lang`` changed (each folder above a change is among them)."""
        with self._lock:
            self._changes += 1
            for folder in folders:
                self._drop((lang, folder))

    def _drop(self, key: Key) -> None:
        if key in self._kept:
            self._size -= _size(self._kept.pop(key))


def _size(summary: Summary | None) -> int:
    if summary is None:
        return ENTRY_CHARS
    return ENTRY_CHARS + len(summary.abstract) + len(summary.overview)
