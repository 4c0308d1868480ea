"""Diffs of versions: correct (applying one gives the new text back) and bounded in time
(a 24,000-line note took difflib 110 s; the changed middle is now one hunk past a bound)."""

from __future__ import annotations

import random
import re

import pytest

from indexer.vault import diffs
from indexer.vault.diffs import unified_diff

HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def apply(old: list[str], diff: list[str]) -> list[str]:
    """The new lines, from the old ones and a unified diff of them."""
    out: list[str] = []
    at = 0
    for line in diff[2:]:
        found = HUNK.match(line)
        if found:
            start = int(found.group(1)) - (0 if found.group(2) != "0" else -1) - 1
            out += old[at:start]
            at = start
        elif line.startswith(" "):
            out.append(line[1:])
            at += 1
        elif line.startswith("-"):
            at += 1
        elif line.startswith("+"):
            out.append(line[1:])
    return out + old[at:]


@pytest.mark.parametrize("bound", [4000, 5])
def test_a_diff_applied_gives_the_new_text(monkeypatch: pytest.MonkeyPatch, bound: int) -> None:
    monkeypatch.setattr(diffs, "MAX_DIFF_LINES", bound)
    rng = random.Random(bound)
    for _ in range(300):
        old = [f"{rng.randrange(6)}\n" for _ in range(rng.randrange(30))]
        new = [line if rng.random() < 0.6 else f"{rng.randrange(6)}\n" for line in old]
        new += [f"{rng.randrange(6)}\n" for _ in range(rng.randrange(4))]
        diff = list(unified_diff(old, new, "a", "b"))
        assert (diff == []) == (old == new)
        if diff:
            assert apply(old, diff) == new, (old, new, diff)


def test_a_long_note_changed_everywhere_is_diffed_at_once() -> None:
    old = [f"line {n}\n" for n in range(24_000)]
    new = [f"line {n} changed\n" if n % 3 == 0 else line for n, line in enumerate(old)]
    diff = list(unified_diff(old, new, "a", "b"))
    assert apply(old, diff) == new
    assert diff[2] == "@@ -1,24000 +1,24000 @@\n"  # the middle as one hunk, with 2 lines after


def test_a_diff_of_long_files_applied_gives_the_new_text() -> None:
    """difflib now sees the middle and its context only: its hunks are numbered as in
    the whole files."""
    rng = random.Random(7)
    for _ in range(200):
        old = [f"{rng.randrange(9)}\n" for _ in range(rng.randrange(20, 300))]
        new = list(old)
        for _ in range(rng.randrange(1, 4)):
            at = rng.randrange(len(new))
            new[at : at + rng.randrange(3)] = [f"{rng.randrange(9)}x\n"] * rng.randrange(3)
        diff = list(unified_diff(old, new, "a", "b"))
        assert (diff == []) == (old == new)
        if diff:
            assert apply(old, diff) == new, (old, new, diff)


def test_one_change_in_a_long_file_of_repeated_lines_is_quick() -> None:
    """Every line repeated just below difflib's "popular" bar made it compare whole files
    in quadratic time: 265 KB with one line changed took 11 s a diff."""
    import time

    old = [f"entry {n % 101}\n" for n in range(60_000)]
    new = list(old)
    new[30_000] = "changed\n"
    began = time.thread_time()
    diff = list(unified_diff(old, new, "a", "b"))
    assert time.thread_time() - began < 1.0
    assert apply(old, diff) == new and diff[2] == "@@ -29998,7 +29998,7 @@\n"
