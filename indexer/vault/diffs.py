"""Unified diffs in bounded time: difflib compares the lines that differ in quadratic
time (a 24,000-line note with every third line changed took 110 s of a core)."""

from __future__ import annotations

import difflib
import re
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
        # difflib on the middle and its context only: on whole files it cost the square
        # of their length when every line repeats just below its "popular" bar (a 265 KB
        # file with one line changed: 11 s).
        first = max(0, start - CONTEXT)
        old_part = old[first : len(old) - end + CONTEXT]
        new_part = new[first : len(new) - end + CONTEXT]
        for line in difflib.unified_diff(old_part, new_part, fromfile=fromfile, tofile=tofile):
            yield _HUNK.sub(lambda m: _moved(m, first), line, count=1) if first else line
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


_HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")


def _moved(hunk: re.Match[str], by: int) -> str:
    """A hunk header of a slice's diff, numbered as in the whole files."""
    old_start, old_length, new_start, new_length = hunk.groups()
    return (
        f"@@ -{int(old_start) + by}{old_length or ''} +{int(new_start) + by}{new_length or ''} @@"
    )


def _range(start: int, length: int) -> str:
    """A hunk's range as unified diffs write it (1-based; an empty one names the line
    before it)."""
    if length == 1:
        return f"{start + 1}"
    return f"{start + 1 if length else start},{length}"
