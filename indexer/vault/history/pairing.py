"""Renames by other programs, told as moves: a note a file manager or Obsidian renamed
reached history as a deletion at its old path and a new file at its new one, two
histories that said nothing of each other (the old versions looked lost to a reader of
the new path's). When history records, close together and in either order, a deletion
and a new file of the same bytes in one vault, each names the other: the deletion
``moved_to``, the new file ``moved_from``, as the rows of a tool's ``move`` do. Their
ops stay what they are (``delete``; ``baseline`` or ``create``): what was seen is still
what history says, and the names only link the two.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

from indexer.vault.history.writes import Row

PAIR_WINDOW_MS = 60_000  # a deletion and a new file this far apart are one rename
MAX_UNPAIRED = 32_768  # of each kind remembered (a folder of more renamed: the newest)


@dataclass(frozen=True, slots=True)
class Unpaired:
    """A deletion or a new file recorded, whose partner has not been seen yet."""

    path: str
    row_id: int
    at_ms: int


class OutsideRenames:
    """The deletions and new files recorded lately, by (lang, etag), to pair them."""

    def __init__(self, empty_etag: str) -> None:
        self._empty = empty_etag  # (empty files are alike without being one another)
        self._gone: OrderedDict[tuple[str, str], Unpaired] = OrderedDict()
        self._new: OrderedDict[tuple[str, str], Unpaired] = OrderedDict()
        self._lock = threading.Lock()

    def partner(self, row: Row, at_ms: int) -> Unpaired | None:
        """The recent opposite of ``row`` (a deletion for a new file, a new file for a
        deletion) with the same bytes at another path, taken so it pairs once."""
        key = self._key(row)
        if key is None:
            return None
        with self._lock:
            other = self._new if row.etag is None else self._gone
            found = other.get(key)
            if found is None:
                return None
            del other[key]  # (its own new text, now gone, is no rename either)
            if found.path == row.path or at_ms - found.at_ms > PAIR_WINDOW_MS:
                return None
            return found

    def remember(self, row: Row, row_id: int, at_ms: int) -> None:
        """``row``, recorded without a partner, for one that may come (the latest of one
        text)."""
        key = self._key(row)
        if key is None:
            return
        with self._lock:
            kept = self._new if row.etag is not None else self._gone
            kept[key] = Unpaired(row.path, row_id, at_ms)
            kept.move_to_end(key)
            while len(kept) > MAX_UNPAIRED:
                kept.popitem(last=False)

    def _key(self, row: Row) -> tuple[str, str] | None:
        """(lang, the bytes' etag) of a deletion or a new file; None for other rows."""
        if row.etag is None and row.op == "delete":
            etag = row.prev_etag
        elif row.etag is not None and row.prev_etag is None:
            etag = row.etag  # (a first version, or the first since a deletion)
        else:
            return None
        if etag is None or etag == self._empty:
            return None
        return row.lang, etag
