"""Renames by other programs, told as moves: a note a file manager or Obsidian renamed
reached history as a deletion at its old path and a new file at its new one, two
histories that said nothing of each other (the old versions looked lost to a reader of
the new path's). When history records, close together and in either order, a deletion
and a new file of the same bytes in one vault, each names the other: the deletion
``moved_to``, the new file ``moved_from``, as the rows of a tool's ``move`` do. Their
ops stay what they are (``delete``; ``baseline`` or ``create``): what was seen is still
what history says, and the names only link the two.

A pass that finds the gone files and the new ones at once (the one comparing history
with disk after a crash, a catch-up's told changes: ``indexer.vault.recheck``) pairs them
with ``match``, however long it takes, whatever the clock says; only the watcher's halves
told in two batches pair by time (a deletion, then past the window a file of its bytes,
is a copy made back). Either way, of several files of the same bytes, a new file takes
the gone one whose path ends the same way (the most trailing names in common: ``a/n.md``
-> ``b/a/n.md`` rather than ``c/n.md``); a tie no name settles pairs nothing (a rename
told wrongly would join two histories that are not one).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

from indexer.vault.history.writes import Row

PAIR_WINDOW_MS = 60_000  # a deletion and a new file this far apart are one rename
MAX_UNPAIRED = 32_768  # texts of each kind remembered (a folder of more renamed: the newest)
MAX_ALIKE = 64  # files of one text remembered, of each kind (the newest)
MATCH_ROUNDS = 8  # of ``match`` (each pairs the files a name tells apart, then the rest)


@dataclass(frozen=True, slots=True)
class Unpaired:
    """A deletion or a new file recorded, whose partner has not been seen yet."""

    path: str
    row_id: int
    at_ms: int


Kept = OrderedDict[tuple[str, str], list["Unpaired"]]  # (lang, etag): oldest first


class OutsideRenames:
    """The deletions and new files recorded lately, by (lang, etag), to pair them."""

    def __init__(self, empty_etag: str) -> None:
        self._empty = empty_etag  # (empty files are alike without being one another)
        self._gone: Kept = OrderedDict()
        self._new: Kept = OrderedDict()
        self._lock = threading.Lock()

    def partner(self, row: Row, at_ms: int) -> Unpaired | None:
        """The recent opposite of ``row`` (a deletion for a new file, a new file for a
        deletion) with the same bytes at another path, taken so it pairs once: of
        several, the one whose path ends most like ``row``'s (none on a tie)."""
        key = self._key(row)
        if key is None:
            return None
        with self._lock:
            other = self._new if row.etag is None else self._gone
            recent = [
                u
                for u in other.get(key, [])
                if u.path != row.path  # (its own new text, now gone, is no rename either)
                and at_ms - u.at_ms <= PAIR_WINDOW_MS
            ]
            paths = [u.path for u in recent]
            best = _best(row.path, paths, _by_name(paths)) if recent else None
            found = next((u for u in recent if u.path == best), None)
            left = [u for u in recent if u is not found]
            if left:
                other[key] = left
            else:
                other.pop(key, None)
            return found

    def forget(self, lang: str, etag: str, path: str) -> list[Unpaired]:
        """Drop the deletion of ``path`` (``etag``'s bytes) kept for a partner: a pass
        paired it (``match``). What was dropped (for ``give_back``)."""
        with self._lock:
            kept = self._gone.get((lang, etag), [])
            left = [u for u in kept if u.path != path]
            if left:
                self._gone[(lang, etag)] = left
            else:
                self._gone.pop((lang, etag), None)
            return [u for u in kept if u.path == path]

    def give_back(self, row: Row, taken: list[Unpaired]) -> None:
        """Keep again the partners ``row`` took (``partner``, ``forget``) in a transaction
        that was then rolled back: a new file history refused (a disk full for a moment,
        a file in its batch SQLite cannot take) took its deletion along, and when it was
        recorded after, alone or at a retry, it found none (the rename was lost)."""
        key = self._key(row)
        if key is None or not taken:
            return
        with self._lock:
            other = self._new if row.etag is None else self._gone
            back = {u.path for u in taken}
            kept = [u for u in other.pop(key, []) if u.path not in back] + taken
            other[key] = sorted(kept, key=lambda u: u.at_ms)[-MAX_ALIKE:]
            while len(other) > MAX_UNPAIRED:
                other.popitem(last=False)

    def remember(self, row: Row, row_id: int, at_ms: int) -> None:
        """``row``, recorded without a partner, for one that may come (the latest
        ``MAX_ALIKE`` of one text)."""
        key = self._key(row)
        if key is None:
            return
        with self._lock:
            kept = self._new if row.etag is not None else self._gone
            alike = [u for u in kept.pop(key, []) if u.path != row.path]
            kept[key] = [*alike[-(MAX_ALIKE - 1) :], Unpaired(row.path, row_id, at_ms)]
            while len(kept) > MAX_UNPAIRED:
                kept.popitem(last=False)

    def drop(self, row: Row) -> None:
        """Forget ``row``, remembered in a transaction that was then rolled back (no
        row of that id is there for a partner to name)."""
        key = self._key(row)
        if key is None:
            return
        with self._lock:
            kept = self._new if row.etag is not None else self._gone
            left = [u for u in kept.get(key, []) if u.path != row.path]
            if left:
                kept[key] = left
            else:
                kept.pop(key, None)

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


def match(gone: list[str], new: list[str]) -> list[tuple[str, str]]:
    """(gone path, new path) pairs among files of the same bytes in one vault: each new
    file with the gone one whose path ends most like its own, when that one also ends
    most like it and no other does as well; again among the files left (a few rounds),
    until none pairs. One gone and one new left pair whatever their names."""
    gone, new = sorted(set(gone) - set(new)), sorted(set(new) - set(gone))
    pairs: list[tuple[str, str]] = []
    for _ in range(MATCH_ROUNDS):
        if len(gone) == len(new) == 1:
            pairs.append((gone[0], new[0]))
            break
        gone_named, new_named = _by_name(gone), _by_name(new)
        found = [
            (g, n)
            for n in new
            if (g := _best(n, gone, gone_named)) is not None and _best(g, new, new_named) == n
        ]
        if not found:
            break
        pairs.extend(found)
        taken_gone, taken_new = {g for g, _ in found}, {n for _, n in found}
        gone = [g for g in gone if g not in taken_gone]
        new = [n for n in new if n not in taken_new]
    return pairs


def _by_name(paths: list[str]) -> dict[str, list[str]]:
    named: dict[str, list[str]] = {}
    for path in paths:
        named.setdefault(path.rsplit("/", 1)[-1], []).append(path)
    return named


def _best(path: str, others: list[str], named: dict[str, list[str]]) -> str | None:
    """The one of ``others`` (``named``: by file name) with the most trailing names in
    common with ``path``; None when two share the most. Only those of its file name have
    any in common: the others tie at none."""
    same_name = named.get(path.rsplit("/", 1)[-1], [])
    if not same_name:
        return others[0] if len(others) == 1 else None
    scores = sorted(((_common_tail(path, o), o) for o in same_name), reverse=True)
    if len(scores) > 1 and scores[0][0] == scores[1][0]:
        return None
    return scores[0][1]


def _common_tail(a: str, b: str) -> int:
    """How many of the last names of ``a`` and ``b`` are equal (``x/a/n.md`` and
    ``y/a/n.md``: 2)."""
    count = 0
    for left, right in zip(reversed(a.split("/")), reversed(b.split("/")), strict=False):
        if left != right:
            break
        count += 1
    return count
