"""Unified diffs in bounded time: difflib compares the lines that differ in quadratic
time (a 24,000-line note with every third line changed took 110 s of a core)."""

from __future__ import annotations

import difflib
from collections.abc import Iterator

MAX_DIFF_LINES = 4000  # changed lines (both sides) difflib still compares line by line
CONTEXT = 3


def unified_diff(old: list[str], new: list[str], fromfile: str, tofile: str) -> Iterator[str]:
    """difflib's unified diff of two lists of lines (with their line ends). Past
    ``MAX_DIFF_LINES`` between the common start and end, that middle is one hunk of its
    old lines removed and its new lines added: a correct diff, not the shortest."""
    start = 0
    while start < min(len(old), len(new)) and old[start] == new[start]:
        start += 1
    end = 0
    while end < min(len(old), len(new)) - start and old[-1 - end] == new[-1 - end]:
        end += 1
    removed, added = old[start : len(old) - end], new[start : len(new) - end]
    if len(removed) + len(added) <= MAX_DIFF_LINES:
        yield from difflib.unified_diff(old, new, fromfile=fromfile, tofile=tofile)
        return
    before = old[max(0, start - CONTEXT) : start]
    after = old[len(old) - end : len(old) - end + CONTEXT]
    first = start - len(before)
    yield f"--- {fromfile}\n"
    yield f"+++ {tofile}\n"
    old_range = _range(first, len(before) + len(removed) + len(after))
    new_range = _range(first, len(before) + len(added) + len(after))
    yield f"@@ -{old_range} +{new_range} @@\n"
    yield from (" " + line for line in before)
    yield from ("-" + line for line in removed)
    yield from ("+" + line for line in added)
    yield from (" " + line for line in after)


def _range(start: int, length: int) -> str:
    """A hunk's range as unified diffs write it (1-based; an empty one names the line
    before it)."""
    if length == 1:
        return f"{start + 1}"
    return f"{start + 1 if length else start},{length}"
