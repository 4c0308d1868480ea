"""Where a long note's links are: a linear scan for notes past the page's bounds.

A note the page renders is read with markdown-it (``link_spans``); one past its bounds
(``indexer.page_markdown``) is shown as plain text there, but other Markdown programs
still show its images, so a move finds them with this scanner, in linear time whatever
the text holds. It follows CommonMark where it matters most (a destination may hold
balanced parentheses, an inline code span needs a closing backtick string of the same
length in the same paragraph, links in code spans and code blocks are text) but reads
blocks with a small reader of its own: a fence in an HTML block, or a paragraph that a
thematic break, a setext underline, a quote or a table row ends, may be read otherwise.
The ``src`` of an ``<img>`` tag is read as HTML reads the tag's attributes
(``html_images``, as the markdown-it path reads them); an Obsidian wikilink's target by
``WIKILINK``, as both paths read it.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from typing import Literal

from indexer.vault.html_images import img_sources

# What a link is: a Markdown destination, an HTML ``src`` value, an Obsidian wikilink's target
Kind = Literal["markdown", "html", "wiki"]
Span = tuple[int, int, Kind]  # a link's place in the text (start, end), and its kind

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$", re.DOTALL)
_LIST_ITEM = re.compile(r"^ {0,3}(?:[-+*]|[0-9]{1,9}[.)])(?:[ \t\r\n]|$)")  # (ASCII, as CommonMark)
_HEADING = re.compile(r"^ {0,3}#{1,6}(?:[ \t\r\n]|$)")
_BACKTICKS = re.compile(r"`+")
_BRACKET = re.compile(r"\\.|!?\[|\]", re.DOTALL)  # (an escaped character is text)
_LINK_OPEN = re.compile(r"\(\s*")
_ANGLED = re.compile(r"<(?:[^<>\\\n]|\\.)*>")
# In a destination: an escaped character (a pair), a parenthesis, or what ends it
_DEST_TOKEN = re.compile(r"\\\S|[()]|[\s\x00-\x1f]")
# A reference definition (not a footnote's, ``[^1]: Ibid.``, which Obsidian shows as text)
_REFERENCE = re.compile(r"^( {0,3}\[(?!\^)[^\]\n]+\]:[ \t]*)(<[^<>\n]*>|\S+)", re.MULTILINE)
# An <img> tag as CommonMark (the page's markdown-it) takes raw HTML for a tag: its name,
# then attributes, each white space, a name and maybe ``=`` and a value (quoted, or
# unquoted without spaces, quotes, ``=<>```), then ``/>`` or ``>``; anything else is text.
# HTML reads the attributes of such a tag the same way. Possessive: each ``<img`` is
# read once, without backtracking, and a quote ends the reading of a value that another
# ``<img`` inside it began, so a paragraph is read in linear time whatever it holds.
_HTML_SPACE = r"[ \t\n\r\f]"
UNQUOTED_CHAR = r"""[^"'=<>`\x00-\x20]"""
_ATTRIBUTE = re.compile(
    rf"{_HTML_SPACE}++([A-Za-z_:][A-Za-z0-9_.:-]*+)"
    rf"""(?:{_HTML_SPACE}*+={_HTML_SPACE}*+("[^"]*+"|'[^']*+'|{UNQUOTED_CHAR}++))?+"""
)
IMG_TAG = re.compile(rf"<img(?:{_ATTRIBUTE.pattern})*+{_HTML_SPACE}*+/?>", re.IGNORECASE)
# An Obsidian wikilink, ``[[target]]``, or an embed, ``![[target|200]]``: its target (group
# 1) ends at ``|`` (``\|`` in a table row), ``#`` or ``]]`` and holds no bracket, backslash
# or line end. Possessive: read once from each ``[[``, up to the next bracket at most.
WIKILINK = re.compile(r"\[\[([^\[\]|#\\\r\n]*+)(?:\\?+[|#][^\[\]\r\n]*+)?+\]\]")


def scanned_spans(text: str) -> list[Span]:
    """The links of Markdown ``text`` (images' and links' destinations, ``src`` values
    and wikilinks' targets, as written), found in one pass."""
    found: list[Span] = []
    offset = 0
    for chunk, prose in _blocks(text):
        if prose:
            found += [(offset + s, offset + e, kind) for s, e, kind in _paragraph_spans(chunk)]
        offset += len(chunk)
    return found


def _blocks(text: str) -> Iterator[tuple[str, bool]]:
    """``text`` cut into (chunk, is prose) pieces: a prose chunk is one paragraph (or
    heading), the unit inline code spans live in; code blocks and blank lines are not
    prose. Code must stay as written, so fenced blocks and indented ones (which cannot
    interrupt a paragraph, and are list content inside a list) are told apart."""
    para: list[str] = []
    fence: str | None = None
    indented = False  # inside an indented code block
    para_open = False  # the previous line continues a paragraph
    in_list = False  # 4+ spaces may then be list content, not code: leave them prose
    for line in _LINE.findall(text):  # (lines end where Markdown ends them, not at U+2028)
        if fence is not None:
            yield line, False
            if line.strip().startswith(fence) and not line.strip().strip(fence[0]):
                fence = None
            continue
        blank = not line.strip()
        indent = _indent(line)
        if indented and (blank or indent >= 4):
            yield line, False
            continue
        indented = False
        opener = _fence_opener(line)
        heading = _HEADING.match(line) is not None
        item = _LIST_ITEM.match(line) is not None
        if not blank and indent == 0 and not para_open and not item:
            in_list = False  # back at the margin after a break: any list has ended
        if (blank or opener or heading or item) and para:
            yield "".join(para), True
            para = []
        if opener is not None:
            fence, para_open = opener, False
            yield line, False
        elif blank:
            para_open = False
            yield line, False
        elif indent >= 4 and not para_open and not in_list:
            indented = True
            yield line, False
        elif heading:
            para_open = False
            yield line, True
        else:
            in_list = in_list or item
            para.append(line)
            para_open = True
    if para:
        yield "".join(para), True


def _indent(line: str) -> int:
    """Columns of leading white space (a tab goes to the next multiple of 4)."""
    columns = 0
    for char in line:
        if char == " ":
            columns += 1
        elif char == "\t":
            columns += 4 - columns % 4
        else:
            break
    return columns


def _fence_opener(line: str) -> str | None:
    """The fence a line opens (its character repeated), or None; a backtick fence's
    info string holds no backtick, else the line is prose with a code span."""
    found = _FENCE.match(line)
    if found is None or (found.group(1)[0] == "`" and "`" in found.group(2)):
        return None
    return found.group(1)


def _code_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of the inline code spans of one paragraph, as CommonMark finds them:
    a backtick string opens one only if a later string of the same length closes it
    (an unmatched one is literal text), and a backslash escapes an opening backtick."""
    runs = [(m.start(), m.end()) for m in _BACKTICKS.finditer(text)]
    by_length: dict[int, list[int]] = {}
    for start, end in runs:
        by_length.setdefault(end - start, []).append(start)
    spans: list[tuple[int, int]] = []
    pos = 0
    for start, end in runs:
        if start < pos:
            continue  # inside the span found last
        if _escaped(text, start):
            start += 1  # that backtick is text; the rest of the string may still open
        if start == end:
            continue
        length = end - start
        closers = by_length.get(length, [])
        index = bisect_left(closers, end)
        if index < len(closers):
            pos = closers[index] + length
            spans.append((start, pos))
    return spans


def _escaped(text: str, index: int) -> bool:
    """Whether the character at ``index`` follows an odd number of backslashes."""
    count = 0
    while index - count > 0 and text[index - count - 1] == "\\":
        count += 1
    return count % 2 == 1


def _paragraph_spans(text: str) -> list[Span]:
    """The links of one paragraph, but those in inline code."""
    spans = _code_spans(text)
    ends = [e for _, e in spans]

    def in_code(start: int, end: int) -> bool:
        index = bisect_right(ends, start)  # the first span ending after ``start``
        return index < len(spans) and spans[index][0] < end

    spans_found: list[Span] = []
    opens = _link_opens(text, spans)
    dest_ends = _destination_ends(text, [start for _, start in opens])
    for alt_end, start in opens:
        found = dest_ends.get(start)
        if found is not None and not in_code(alt_end, found):
            spans_found.append((start, found, "markdown"))
    for m in _REFERENCE.finditer(text):
        if not in_code(m.start(), m.end()):
            spans_found.append((m.start(2), m.end(2), "markdown"))
    for m in IMG_TAG.finditer(text):
        if not in_code(m.start(), m.end()):
            spans_found += [(m.start() + s, m.start() + e, "html") for s, e, _ in img_sources(m[0])]
    for m in WIKILINK.finditer(text):
        if m.end(1) > m.start(1) and not in_code(m.start(), m.end()):
            spans_found.append((m.start(1), m.end(1), "wiki"))
    return spans_found


def _link_opens(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """(its ``]``, where its destination starts) of each ``![alt](`` and ``[text](`` of
    one paragraph, brackets matched as CommonMark matches them, in one pass: a ``]``
    closes the last ``[`` or ``![`` still open; escaped ones and those in code spans
    are text, and a link makes the ``[`` still open before it text (a link holds no
    link). (A regex read the alt text from each ``![`` on, to the paragraph's end:
    quadratic.)"""
    opens: list[tuple[int, int]] = []
    images: list[bool] = []  # the brackets open: whether each opens an image
    inactive = 0  # the links open below this depth of ``images`` are text
    last = 0
    for span_start, span_end in [*spans, (len(text), len(text))]:
        for token in _BRACKET.finditer(text, last, span_start):
            if token.group() in ("[", "!["):
                images.append(token.group() == "![")
            elif token.group() == "]" and images:
                image, depth = images.pop(), len(images)
                active = image or depth >= inactive
                inactive = min(inactive, depth)
                after = _LINK_OPEN.match(text, token.end())
                if after is None or not active:
                    continue
                opens.append((token.start(), after.end()))
                if not image:
                    inactive = len(images)
        last = span_end
    return opens


def _destination_ends(text: str, starts: list[int]) -> dict[int, int | None]:
    """End of the link destination at each of ``starts`` (CommonMark: ``<...>``, or text
    without spaces whose unescaped parentheses balance), or None when there is none or
    it is not followed by white space or the closing ``)``. The text after all of them
    is read once: each start waits on a stack, with the parentheses' depth it began at,
    for the ``)`` that closes below it or the white space that ends every one (reading
    to that end from each start took quadratic time on ``![a](`` repeated)."""
    ends: dict[int, int | None] = {}
    plain: list[int] = []
    for start in starts:
        angled = _ANGLED.match(text, start)
        if angled:
            end = angled.end()
            ends[start] = end if end < len(text) and _ends_destination(text[end]) else None
        elif not text.startswith("<", start):
            plain.append(start)
    pending: list[tuple[int, int]] = []  # (start, depth at it): depths never decrease
    depth, index, pos = 0, 0, 0
    while pending or index < len(plain):
        if not pending:
            pos = max(pos, plain[index])
        token = _DEST_TOKEN.search(text, pos)
        if token is None:
            break  # the text ends: no destination is followed by what ends one
        at, char = token.start(), token.group()
        while index < len(plain) and plain[index] <= at:
            pending.append((plain[index], depth))
            index += 1
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            while pending and pending[-1][1] > depth:
                start = pending.pop()[0]
                ends[start] = at if at > start else None
        elif len(char) == 1:  # white space or a control character: every one ends
            for start, level in pending:
                ends[start] = at if at > start and level == depth and char.isspace() else None
            pending.clear()
        pos = token.end()
    return ends


def _ends_destination(char: str) -> bool:
    """Whether ``char`` may follow a link destination (white space, or the link's end)."""
    return char.isspace() or char == ")"
