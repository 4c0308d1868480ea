"""Diffs of versions: correct (applying one gives the new text back), bounded in time (a
24,000-line note took difflib 110 s) and short: a long stretch of changes is cut at the
lines both texts hold once before it would be one hunk."""

from __future__ import annotations

import random
import re
import time

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
    began = time.thread_time()
    diff = list(unified_diff(old, new, "a", "b"))
    assert time.thread_time() - began < 2.0
    assert apply(old, diff) == new
    assert diff[2] == "@@ -1,24000 +1,24000 @@\n"  # changes 3 lines apart: one hunk
    assert sum(line[0] in "+-" for line in diff[3:]) == 16_000  # each changed line, once


def test_two_changes_far_apart_are_two_small_hunks() -> None:
    """Past MAX_DIFF_LINES between the first change and the last, the diff was the whole
    note removed and added again (4,200 lines for two changed)."""
    old = [f"line {n}\n" for n in range(2_100)]
    new = ["changed first\n", *old[1:-1], "changed last\n"]
    diff = list(unified_diff(old, new, "a", "b"))
    assert apply(old, diff) == new
    assert [line for line in diff if line.startswith("@@")] == [
        "@@ -1,4 +1,4 @@\n",
        "@@ -2097,4 +2097,4 @@\n",
    ]
    assert [line for line in diff[2:] if line[0] in "+-"] == [
        "-line 0\n",
        "+changed first\n",
        "-line 2099\n",
        "+changed last\n",
    ]


def test_a_long_note_edited_in_places_shows_those_places() -> None:
    """A 30,000-line note with a paragraph rewritten, one moved and lines added between
    repeated ones: each change its own hunk, the rest context."""
    rng = random.Random(11)
    old = [f"{rng.choice(['- item', 'text', ''])} {n}\n" for n in range(30_000)]
    old[1_000:1_000] = ["\n"] * 50  # blank lines: not found once, no anchor
    new = list(old)
    new[5_000:5_020] = [f"rewritten {n}\n" for n in range(25)]
    new[20_000:20_000] = ["\n", "---\n", "\n"]
    moved = new[9_000:9_010]
    del new[9_000:9_010]
    new[25_000:25_000] = moved
    diff = list(unified_diff(old, new, "a", "b"))
    assert apply(old, diff) == new
    changed = sum(line[0] in "+-" for line in diff[2:])
    assert changed == 20 + 25 + 3 + 2 * 10
    assert sum(line.startswith("@@") for line in diff) == 4


@pytest.mark.parametrize("values", [6, 40, 10_000])
def test_a_diff_cut_at_anchors_applied_gives_the_new_text(
    monkeypatch: pytest.MonkeyPatch, values: int
) -> None:
    """A bound of 5 sends every stretch but the smallest to the anchors."""
    monkeypatch.setattr(diffs, "MAX_DIFF_LINES", 5)
    rng = random.Random(values)
    for _ in range(300):
        old = [f"{rng.randrange(values)}\n" for _ in range(rng.randrange(80))]
        new = [line if rng.random() < 0.7 else f"{rng.randrange(values)}\n" for line in old]
        if rng.random() < 0.3:
            rng.shuffle(new)
        diff = list(unified_diff(old, new, "a", "b"))
        assert (diff == []) == (old == new)
        if diff:
            assert apply(old, diff) == new, (old, new, diff)


@pytest.mark.parametrize("shape", ["reversed", "shuffled", "every other", "repeated"])
def test_long_notes_rewritten_are_diffed_quickly(shape: str) -> None:
    """The anchor search reads each line a bounded number of times, and difflib's
    quadratic work is bounded in total: 40,000 lines in 0.1-0.2 s here."""
    rng = random.Random(3)
    old = [f"line {n}\n" if n % 2 else f"entry {n % 101}\n" for n in range(40_000)]
    if shape == "reversed":
        new = old[::-1]
    elif shape == "shuffled":
        new = rng.sample(old, len(old))
    elif shape == "every other":
        new = [f"new {n}\n" if n % 4 == 1 else line for n, line in enumerate(old)]
    else:
        new = [f"entry {rng.randrange(101)}\n" if n % 2 == 0 else ln for n, ln in enumerate(old)]
    began = time.thread_time()
    diff = list(unified_diff(old, new, "a", "b"))
    assert time.thread_time() - began < 3.0
    assert apply(old, diff) == new


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
    old = [f"entry {n % 101}\n" for n in range(60_000)]
    new = list(old)
    new[30_000] = "changed\n"
    began = time.thread_time()
    diff = list(unified_diff(old, new, "a", "b"))
    assert time.thread_time() - began < 1.0
    assert apply(old, diff) == new and diff[2] == "@@ -29998,7 +29998,7 @@\n"
