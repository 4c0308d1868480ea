"""A note body's inline ``#tags``, as Obsidian reads them, for the tags filter.

Obsidian's tag search finds ``#project`` written in the text as it finds a frontmatter
``tags: [project]``; a vault kept in Obsidian often has no other tags. A tag starts with
``#`` at the start of a line or after white space, and goes on while its characters are
letters, digits, marks, symbols (emoji), ``_``, ``-`` or ``/``; one of digits alone
(``#123``, an issue number) is none, nor one of invisible characters alone (a zero-width
space: ``shared.reader_folds.tag_key``), nor a heading's ``# `` or a link's ``(#part)``.
Fenced code and code spans hold no tags. Linear time: code spans are looked for within
their line and a bounded length.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Iterator

from shared.reader_folds import tag_key

MAX_INLINE_TAGS = 1000  # per note: a hostile note of tags is no index of megabytes
_MAX_SPAN = 1000  # characters a code span is looked for in (longer: its ticks are text)
_TAG_CHARS = r"[^\s!-,.:-@\[-\^`{-~]"  # not white space, not ASCII punctuation but _ - /
_TAG = re.compile(rf"#({_TAG_CHARS}+)")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})([^\n]*)$", re.MULTILINE)
_TICKS = re.compile("`+")
_KEPT_PUNCTUATION = frozenset("_-/")


def inline_tags(body: str) -> list[str]:
    """The ``#tags`` of ``body`` outside code, without their ``#``, each once, in order
    (at most ``MAX_INLINE_TAGS``)."""
    if "#" not in body:
        return []
    candidates = [
        match
        for match in _TAG.finditer(body)
        if not (at := match.start()) or body[at - 1].isspace()  # (not C#, a#b, (#part))
    ]
    if not candidates:
        return []  # (most notes: a heading's "# " is none)
    code = _code_ranges(body) if "`" in body or "~~~" in body else []
    starts = [start for start, _ in code]
    found: dict[str, None] = {}
    for match in candidates:
        inside = bisect.bisect_right(starts, match.start()) - 1
        if inside >= 0 and match.start() < code[inside][1]:
            continue
        tag = _until_punctuation(match[1])
        key = tag_key(tag)  # (``#\u200b`` shows nothing, ``#\u200b123`` is ``#123``)
        if key and not key.isdigit():
            found[tag] = None
            if len(found) == MAX_INLINE_TAGS:
                break
    return list(found)


def _code_ranges(body: str) -> list[tuple[int, int]]:
    """(start, end) of each fenced block (a fence never closed runs to the end) and code
    span outside them, in order."""
    fences: list[tuple[int, int]] = []
    at = 0 if "```" in body or "~~~" in body else len(body)
    while (match := _FENCE.search(body, at)) is not None:
        fence, info = match[1], match[2]
        if fence[0] == "`" and "`" in info:
            at = match.end()  # (not a fence, CommonMark says: a code span's ticks)
            continue
        closing = re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", re.M)
        closed = closing.search(body, match.end())
        fences.append((match.start(), len(body) if closed is None else closed.end()))
        if closed is None:
            break
        at = closed.end()
    ranges: list[tuple[int, int]] = []
    at = 0
    for start, end in [*fences, (len(body), len(body))]:
        if "`" in body[at:start]:
            ranges.extend(_spans(body, at, start))
        ranges.append((start, end))
        at = end
    return ranges


def _spans(body: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """The code spans between ``start`` and ``end``: a run of backticks closed by the
    next run of as many on its line, within ``_MAX_SPAN`` characters."""
    runs = [(m.start(), m.end()) for m in _TICKS.finditer(body, start, end)]
    index = 0
    while index < len(runs):
        opening = runs[index]
        width = opening[1] - opening[0]
        reach = min(opening[1] + _MAX_SPAN, end)
        line_end = body.find("\n", opening[1], reach)
        limit = reach if line_end < 0 else line_end
        for later in range(index + 1, len(runs)):
            closing = runs[later]
            if closing[1] > limit:
                break
            if closing[1] - closing[0] == width:
                yield opening[0], closing[1]
                index = later
                break
        index += 1


def _until_punctuation(text: str) -> str:
    """``text`` up to its first punctuation mark (``#标签，`` is ``标签``), ``_ - /`` kept."""
    if text.isascii():
        return text
    for index, char in enumerate(text):
        if unicodedata.category(char)[0] == "P" and char not in _KEPT_PUNCTUATION:
            return text[:index]
    return text
