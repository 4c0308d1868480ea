"""The blocks a Markdown body starts with, as a line scanner: what an abstract is read from.

A note's abstract is its first paragraph of prose (``indexer.index.abstract``); what
comes before it (a code fence, a table, an HTML block, a math block) is no prose, but a
note of nothing else still says something through it: each block comes with the text a
reader sees of it (a fence's code without its markers, a table's cells). Headings,
thematic breaks and comments (HTML's, Obsidian's) are not blocks here: they show no
text of the note's (a heading is its title's, see ``shared.body_title``).

A scanner, not markdown-it: abstracts are read at every indexing of every note, and
markdown-it's block parse alone of 10,000 generated notes took 1.2 s, where their whole
abstracts take 0.3 s with this scanner (a reindex of them, some 11 s).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from html import unescape
from typing import NamedTuple

from shared.body_title import SETEXT_UNDERLINE

PROSE = "prose"
CODE = "code"
MATH = "math"
TABLE = "table"
HTML = "html"


class _Patterns(NamedTuple):
    fence: re.Pattern[str]
    math: re.Pattern[str]
    heading: re.Pattern[str]
    rule: re.Pattern[str]
    indented: re.Pattern[str]
    table_row: re.Pattern[str]
    delimiter_row: re.Pattern[str]
    html_block: re.Pattern[str]
    interrupting_html: re.Pattern[str]
    hidden_html: re.Pattern[str]
    tag: re.Pattern[str]
    cell_bar: re.Pattern[str]


@functools.cache
def _patterns() -> _Patterns:
    """Compiled at the first abstract, not at import (the start builds no pattern it
    does not use at once: some 8 ms of it were these)."""
    return _Patterns(
        fence=re.compile(r" {0,3}(`{3,}|~{3,})"),
        math=re.compile(r" {0,3}\$\$"),
        heading=re.compile(r"[ \t]*#{1,6}(?:[ \t]|\r?$)"),
        rule=re.compile(r" {0,3}(?:[-*_][ \t]*){3,}\r?$"),
        indented=re.compile(r" {4}|\t"),
        table_row=re.compile(r" {0,3}\|"),
        # A table's delimiter row (``|---|:--:|``, ``--- | ---``): under a first line
        # with a ``|``, that line was the table's header, not a paragraph.
        delimiter_row=re.compile(
            r" {0,3}\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*\r?$"
        ),
        # (``<https://...>`` is a link, not HTML)
        html_block=re.compile(r"<(?![A-Za-z][A-Za-z0-9+.-]{1,31}:)[A-Za-z/!?]"),
        # The HTML blocks that may interrupt a paragraph (CommonMark's kinds 1 to 6: a
        # comment, ``<?``, ``<!X``, and the block-level tags); another tag (``<img>``) is
        # inline HTML.
        interrupting_html=re.compile(
            r" {0,3}<(?:!--|\?|![A-Za-z]|!\[CDATA\[|(?:pre|script|style|textarea)(?:[\s>]|$)"
            r"|/?(?:address|article|aside|base|basefont|blockquote|body|caption|center|col"
            r"|colgroup|dd|details|dialog|dir|div|dl|dt|fieldset|figcaption|figure|footer|form"
            r"|frame|frameset|h[1-6]|head|header|hr|html|iframe|legend|li|link|main|menu"
            r"|menuitem|nav|noframes|ol|optgroup|option|p|param|search|section|summary|table"
            r"|tbody|td|tfoot|th|thead|title|tr|track|ul)(?:[\s/>]|$))",
            re.IGNORECASE,
        ),
        hidden_html=re.compile(r"<(?:script|style)(?:[\s>]|$)", re.IGNORECASE),
        tag=re.compile(r"<[^<>]*>"),
        cell_bar=re.compile(r"(?<!\\)\|"),
    )


# The characters a line opening anything but prose starts with (past its indent).
_MARKUP_STARTS = frozenset("#`~$<%|-*_")


@dataclass(frozen=True, slots=True)
class Block:
    """One block: its ``kind`` (``PROSE``, ``CODE``...) and its first lines (some
    ``limit`` characters of them); ``text`` is what a reader sees of them."""

    kind: str
    lines: list[str]

    @property
    def text(self) -> str:
        """The lines as a reader sees them (prose as Markdown, for ``plain_text``):
        worked out only when asked (most blocks before a note's prose never are)."""
        return _shown(self.kind, self.lines)


class _Reading:
    """The block being read: its kind, what ends it, and its lines kept so far."""

    __slots__ = ("closing", "kind", "limit", "lines", "size")

    def __init__(self, kind: str, closing: str | None, limit: int) -> None:
        self.kind = kind
        self.closing = closing  # "": a blank line ends it; None: one line, or prose
        self.limit = limit
        self.lines: list[str] = []
        self.size = 0

    def add(self, line: str) -> None:
        """Keep ``line`` while the block is under its limit (an abstract needs no more;
        a fence never closed is read to the end of the window, not kept)."""
        if self.size < self.limit:
            self.lines.append(line)
            self.size += len(line) + 1

    def block(self) -> Block:
        return Block(self.kind, self.lines)


def blocks(body: str, limit: int) -> Iterator[Block]:
    """The blocks of ``body`` (a window of a note: read line by line, a generator that
    stops where its reader does), each with what a reader sees of it."""
    pat = _patterns()
    reading: _Reading | None = None
    for line in body.split("\n"):
        if reading is not None:
            if reading.closing:  # a fence, a math block, a comment: to its closing line
                if _closes(reading.closing, line):
                    if reading.kind:  # (a comment's kind is "": never shown)
                        yield reading.block()
                    reading = None
                elif reading.kind:
                    reading.add(line)
                continue
            if reading.closing == "":  # an HTML block: to a blank line, as in CommonMark
                if line.strip():
                    reading.add(line)
                    continue
            elif reading.kind == CODE:  # indented code: to a line that is not
                if not line.strip() or pat.indented.match(line):
                    reading.add(line[1:] if line.startswith("\t") else line[4:])
                    continue
            elif line.strip():
                if reading.kind == PROSE and SETEXT_UNDERLINE.match(line):
                    reading = None  # ``Title`` over ``=====``: a heading, no prose
                    continue
                if not _ends(reading, line):
                    continue
            if reading.kind:  # (a script's or style's is "": never shown)
                yield reading.block()
            reading = None
        if not line.strip():
            continue
        reading = _opening(line, limit)
        if reading is not None and reading.closing == "-":  # (opened and closed at once)
            if reading.kind:
                yield reading.block()
            reading = None
    if reading is not None and reading.kind:  # (a block the window ends: a fence never
        yield reading.block()  # closed runs to the note's end, as in CommonMark)


def _ends(reading: _Reading, line: str) -> bool:
    """Whether ``line`` ends the paragraph or table being read (a heading, a fence, a
    math block, a thematic break: its line then opens what follows); else it is added
    (a paragraph's one line over a delimiter row was a table's header)."""
    pat = _patterns()
    if pat.fence.match(line) or pat.math.match(line) or pat.heading.match(line):
        return True
    if pat.interrupting_html.match(line) or line.lstrip().startswith("%%"):
        return True  # (an HTML block that may stop a paragraph, as in CommonMark; a comment)
    if reading.kind == PROSE:
        header = reading.lines[0] if len(reading.lines) == 1 else ""
        if header and "|" in header.strip().strip("|") + line and pat.delimiter_row.match(line):
            reading.kind = TABLE
        elif pat.rule.match(line):
            return True
    reading.add(line)
    return False


def _opening(line: str, limit: int) -> _Reading | None:
    """The block ``line`` opens (its closing ``"-"``: it is whole on this line); None for
    a heading or a thematic break (no block: the next line starts anew)."""
    pat = _patterns()
    text = line.lstrip()
    if text[:1] not in _MARKUP_STARTS and not pat.indented.match(line):
        reading = _Reading(PROSE, None, limit)  # (most lines: told by their first character)
        reading.add(line)
        return reading
    if pat.heading.match(line) or pat.rule.match(line):
        return None
    if fence := pat.fence.match(line):
        return _Reading(CODE, fence.group(1), limit)
    if math := pat.math.match(line):
        rest = line[math.end() :]
        reading = _Reading(MATH, "$$", limit)
        if "$$" in rest:  # ``$$ E = mc^2 $$``
            reading.add(rest.split("$$", 1)[0])
            reading.closing = "-"
        else:
            reading.add(rest)
        return reading
    if pat.indented.match(line):
        reading = _Reading(CODE, None, limit)
        reading.add(line[1:] if line.startswith("\t") else line[4:])
        return reading
    for opener, closer in (("<!--", "-->"), ("%%", "%%")):
        if text.startswith(opener):
            closed = closer in text[len(opener) :]
            return _Reading("", "-" if closed else closer, limit)
    if pat.html_block.match(text):
        kind = "" if pat.hidden_html.match(text) else HTML
        reading = _Reading(kind, "", limit)
        reading.add(line)
        return reading
    reading = _Reading(TABLE if pat.table_row.match(line) else PROSE, None, limit)
    reading.add(line)
    return reading


def _closes(closing: str, line: str) -> bool:
    """Whether ``line`` ends the block that ``closing`` ends (a fence: one as long or
    longer of its character, alone on its line; else that text anywhere in it)."""
    pat = _patterns()
    if closing.startswith(("```", "~~~")):
        fence = pat.fence.match(line)
        return (
            fence is not None
            and fence.group(1).startswith(closing)
            and not line[fence.end() :].strip()
        )
    return closing in line


def _shown(kind: str, lines: list[str]) -> str:
    """What a reader sees of a block's lines: code and math as written, up to their
    first blank line (a snippet's first lines say what it does; its fence markers
    became ``\\`\\`\\``` in an overview), an HTML block's text without its tags, a
    table's cells (``a · b; 1 · 2``: a row's cells, then the next row's), prose as
    it is (Markdown, for ``plain_text``)."""
    pat = _patterns()
    if kind in (CODE, MATH):
        text = "\n".join(lines).strip("\n")
        return text.split("\n\n", 1)[0]
    if kind == HTML:
        return unescape(pat.tag.sub(" ", "\n".join(lines)))
    if kind == TABLE:
        rows = []
        for row in lines:
            if pat.delimiter_row.match(row):
                continue
            cells = [c.strip() for c in pat.cell_bar.split(row.strip().strip("|"))]
            if shown := " · ".join(c for c in cells if c):
                rows.append(shown)
        return "; ".join(rows)
    return "\n".join(lines)
