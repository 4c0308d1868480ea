"""Unified diffs in bounded time: difflib compares the lines that differ in quadratic
time (a 24,000-line note with every third line changed took 110 s of a core).

A stretch of changes too long for difflib is first cut at the lines it shares with the
new text, each found once on either side (patience diff's anchors): two lines changed
at the two ends of a long note are two small hunks, not the whole note removed and
added again. Only a stretch with no such line left, or past the work bounds, is one
hunk of its old lines removed and its new lines added: a correct diff, not the shortest.
"""

from __future__ import annotations

import difflib
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterator

MAX_DIFF_LINES = 4000  # changed lines (both sides) difflib still compares line by line
CONTEXT = 3

Opcode = tuple[str, int, int, int, int]  # difflib's (tag, i1, i2, j1, j2)


def unified_diff(old: list[str], new: list[str], fromfile: str, tofile: str) -> Iterator[str]:
    """The unified diff of two lists of lines (with their line ends), as
    ``difflib.unified_diff`` writes it, in time bounded by the lines' count."""
    groups = list(_grouped(_Matcher(old, new).opcodes(), CONTEXT))
    if not groups:
        return
    yield f"--- {fromfile}\n"
    yield f"+++ {tofile}\n"
    for group in groups:
        first, last = group[0], group[-1]
        old_range = _range(first[1], last[2] - first[1])
        new_range = _range(first[3], last[4] - first[3])
        yield f"@@ -{old_range} +{new_range} @@\n"
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                yield from (" " + line for line in old[i1:i2])
                continue
            yield from ("-" + line for line in old[i1:i2])
            yield from ("+" + line for line in new[j1:j2])


class _Matcher:
    """The opcodes of two lists of lines. difflib runs on stretches of at most
    ``MAX_DIFF_LINES`` lines, its quadratic work bounded in total by one such stretch's;
    the anchor search reads each line a bounded number of times."""

    def __init__(self, old: list[str], new: list[str]) -> None:
        self.old, self.new = old, new
        # difflib's work, the sum of its stretches' a*b: what one stretch of
        # MAX_DIFF_LINES, half on each side, may cost (0.2 s of a core at worst)
        self.difflib_work = (MAX_DIFF_LINES // 2) ** 2
        self.reads = 8 * (len(old) + len(new)) + MAX_DIFF_LINES  # lines anchors may read

    def opcodes(self) -> list[Opcode]:
        """Every opcode in order, runs of ``equal`` joined."""
        out: list[Opcode] = []
        todo: list[Opcode] = [("region", 0, len(self.old), 0, len(self.new))]
        while todo:
            item = todo.pop()
            if item[0] != "region":
                _add(out, item)
                continue
            todo.extend(reversed(self._region(*item[1:])))
        return out

    def _region(self, a0: int, a1: int, b0: int, b1: int) -> list[Opcode]:
        """A region's opcodes, or smaller ``region`` items to look at in its place."""
        old, new = self.old, self.new
        start = 0
        while start < min(a1 - a0, b1 - b0) and old[a0 + start] == new[b0 + start]:
            start += 1
        end = 0
        while end < min(a1 - a0, b1 - b0) - start and old[a1 - 1 - end] == new[b1 - 1 - end]:
            end += 1
        head = [("equal", a0, a0 + start, b0, b0 + start)] if start else []
        tail = [("equal", a1 - end, a1, b1 - end, b1)] if end else []
        a0, a1, b0, b1 = a0 + start, a1 - end, b0 + start, b1 - end
        return [*head, *self._middle(a0, a1, b0, b1), *tail]

    def _middle(self, a0: int, a1: int, b0: int, b1: int) -> list[Opcode]:
        """A region whose first and last lines differ on the two sides."""
        if a0 == a1 and b0 == b1:
            return []
        if a0 == a1 or b0 == b1:
            return [("insert" if a0 == a1 else "delete", a0, a1, b0, b1)]
        work = (a1 - a0) * (b1 - b0)
        if (a1 - a0) + (b1 - b0) <= MAX_DIFF_LINES and work <= self.difflib_work:
            self.difflib_work -= work
            matcher = difflib.SequenceMatcher(None, self.old[a0:a1], self.new[b0:b1])
            return [
                (tag, a0 + i1, a0 + i2, b0 + j1, b0 + j2)
                for tag, i1, i2, j1, j2 in matcher.get_opcodes()
            ]
        anchors = self._anchors(a0, a1, b0, b1)
        if not anchors:
            return [("replace", a0, a1, b0, b1)]
        items: list[Opcode] = []
        at_a, at_b = a0, b0
        for i, j in anchors:
            items.append(("region", at_a, i, at_b, j))
            items.append(("equal", i, i + 1, j, j + 1))
            at_a, at_b = i + 1, j + 1
        items.append(("region", at_a, a1, at_b, b1))
        return items

    def _anchors(self, a0: int, a1: int, b0: int, b1: int) -> list[tuple[int, int]]:
        """The longest run, in order on both sides, of lines found once in each side
        of the region (none once the reading bound is spent)."""
        self.reads -= (a1 - a0) + (b1 - b0)
        if self.reads < 0:
            return []
        old_counts, new_counts = Counter(self.old[a0:a1]), Counter(self.new[b0:b1])
        in_old = {self.old[i]: i for i in range(a0, a1) if old_counts[self.old[i]] == 1}
        pairs = [
            (in_old[line], j)
            for j in range(b0, b1)
            if new_counts[line := self.new[j]] == 1 and line in in_old
        ]
        return _longest_rising(pairs)


def _longest_rising(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest subsequence of ``pairs`` (in rising second items) whose first
    items rise too: patience sorting, n log n."""
    tops: list[int] = []  # the first item ending the best run of each length
    ends: list[int] = []  # the index in pairs of that run's last pair
    before: list[int] = []  # each pair's predecessor in its run (-1: none)
    for index, (i, _) in enumerate(pairs):
        length = bisect_left(tops, i)
        before.append(ends[length - 1] if length else -1)
        if length == len(tops):
            tops.append(i)
            ends.append(index)
        else:
            tops[length], ends[length] = i, index
    run: list[tuple[int, int]] = []
    at = ends[-1] if ends else -1
    while at >= 0:
        run.append(pairs[at])
        at = before[at]
    return run[::-1]


def _add(out: list[Opcode], code: Opcode) -> None:
    """Append an opcode, joining it to an ``equal`` run it continues."""
    if out and code[0] == "equal" and out[-1][0] == "equal":
        tag, i1, _, j1, _ = out[-1]
        out[-1] = (tag, i1, code[2], j1, code[4])
    elif code[1] != code[2] or code[3] != code[4]:
        out.append(code)


def _grouped(codes: list[Opcode], context: int) -> Iterator[list[Opcode]]:
    """The hunks: changes with ``context`` equal lines around them, as difflib's
    ``get_grouped_opcodes`` groups them."""
    if not any(code[0] != "equal" for code in codes):
        return
    codes = list(codes)
    if codes[0][0] == "equal":
        tag, i1, i2, j1, j2 = codes[0]
        codes[0] = (tag, max(i1, i2 - context), i2, max(j1, j2 - context), j2)
    if codes[-1][0] == "equal":
        tag, i1, i2, j1, j2 = codes[-1]
        codes[-1] = (tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context))
    group: list[Opcode] = []
    for tag, i1, i2, j1, j2 in codes:
        if tag == "equal" and i2 - i1 > 2 * context:
            group.append((tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context)))
            yield group
            group = []
            i1, j1 = max(i1, i2 - context), max(j1, j2 - context)
        group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        yield group


def _range(start: int, length: int) -> str:
    """A hunk's range as unified diffs write it (1-based; an empty one names the line
    before it)."""
    if length == 1:
        return f"{start + 1}"
    return f"{start + 1 if length else start},{length}"
