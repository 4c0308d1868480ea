"""Where a note's links are, as the page's Markdown parser reads them.

A move must rewrite exactly the links a reader sees: one it misses is broken after the
move, and text it takes for one (in a code block, an HTML block, a quote's code) is
changed. So a note the page renders is read by the page's own parser, markdown-it
(``indexer.page_markdown``), and the links are the ones it makes: Markdown images
``![alt](dest)`` and links ``[text](dest)``, reference definitions (which
reference-style ones use), the ``src`` of ``<img>`` tags, inline or in HTML blocks (as
HTML reads a tag's attributes), and the targets of Obsidian wikilinks,
``![[cat.md.assets/p.png|200]]`` (text to the page, but where Obsidian shows an image or
a link: a wikilink in code is text there too).

markdown-it's tokens say which lines a block spans but not where an inline link sits,
so its image, link and raw-HTML rules are wrapped to note the spans they read, in the
text of each block, and that text is then aligned to the note's lines: markdown-it
builds it from line ends after the containers' markers and indents, with the block's
outer white space trimmed (or, in a table cell, ``\\|`` read as ``|``). A span that does
not align exactly is left alone. A note past the page's bounds is shown there as plain
text: its links are found by the linear scan of ``link_scan`` instead.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any

from indexer.page_markdown import new_parser, page_parser, too_deep, within_bounds
from indexer.vault.html_images import img_sources
from indexer.vault.link_scan import IMG_TAG, WIKILINK, Span, scanned_spans

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.rules_block import StateBlock
    from markdown_it.rules_inline import StateInline

_MAY_HOLD = re.compile(r"\][(:]|<img|\[\[", re.IGNORECASE)  # what any of the links needs
_INLINE_MAY_HOLD = re.compile(r"\]\(|<img|\[\[", re.IGNORECASE)
_LINE_END = re.compile(r"\r\n|\r|\n")  # (markdown-it reads each as one "\n")
# env keys: the text whose inline parse is traced, the spans found in it, definitions
_TRACED, _FOUND, _DEFINITIONS = "vault.traced", "vault.found", "vault.definitions"
Segment = tuple[int, int, int]  # a run of a block's text (start, end) and where it is


def link_target_spans(text: str) -> list[Span]:
    """(start, end, kind) of each link's destination as written in Markdown ``text``
    (an HTML ``src`` value with its quotes, a wikilink's target), in no particular order."""
    if not _MAY_HOLD.search(text):
        return []
    if not within_bounds(text):
        return scanned_spans(text)
    parser = _parser()
    env: dict[str, Any] = {_DEFINITIONS: []}
    tokens = parser.parse(text, env)
    if too_deep(tokens):
        return scanned_spans(text)  # (the page shows it as plain text)
    lines = _Lines(text)
    spans: list[Span] = []
    cursor = 0  # how far a table row's cells were read
    for index, token in enumerate(tokens):
        if token.type == "tr_open":
            cursor = 0
        if token.type == "html_block" and token.map:
            found = _block_sources(token.content)
            segments = _lines_segments(lines, token.content, token.map, trim=False)
            spans += _placed(found, segments, text)
        if token.type != "inline" or not token.map:
            continue
        opener = tokens[index - 1]
        if opener.type in ("th_open", "td_open"):  # (each cell moves the row's cursor)
            segments, cursor = _cell_segments(lines, token.content, token.map[0], cursor)
        if not _INLINE_MAY_HOLD.search(token.content):
            continue
        if opener.type == "heading_open" and opener.markup.startswith("#"):
            segments = _heading_segments(lines, token.content, token.map[0])
        elif opener.type not in ("th_open", "td_open"):  # a paragraph, a setext heading
            segments = _lines_segments(lines, token.content, token.map, trim=True)
        env[_TRACED], env[_FOUND] = token.content, []
        parser.inline.parse(token.content, parser, env, [])
        spans += _placed(env[_FOUND], segments, text)
    for line_pieces in env[_DEFINITIONS]:
        spans += _definition_span(lines, line_pieces)
    return spans


class _Lines:
    """The text's lines as markdown-it numbers them (a line ends at CR LF, CR or LF),
    each as markdown-it reads it (a NUL is U+FFFD) and where it starts in the text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0, *(m.end() for m in _LINE_END.finditer(text))]

    def line(self, number: int) -> tuple[str, int]:
        """Line ``number``'s text (without its end) and where it starts."""
        start = self.starts[number]
        end = self.starts[number + 1] if number + 1 < len(self.starts) else len(self.text)
        return self.text[start:end].rstrip("\r\n").replace("\0", "\ufffd"), start


def _lines_segments(
    lines: _Lines, content: str, span: tuple[int, int] | list[int], *, trim: bool
) -> list[Segment]:
    """Where the lines of a block's ``content`` are, the block spanning the lines
    ``span``: each content line is the end of its line (after containers' markers and
    the block's indent; a tab partly taken by the indent reads as spaces). A trimmed
    block (a paragraph) also lost its outer white space, whole lines of it included,
    so its content lines may start further down."""
    from markdown_it.common.utils import MD_TRIM_CHARS

    parts = content.split("\n")
    if not trim and content.endswith("\n"):
        parts.pop()  # (an HTML block keeps its last line's end)
    first, last = span[0], min(span[1], len(lines.starts))
    for shift in range(max(last - first - len(parts) + 1, 0)):
        segments: list[Segment] = []
        offset = 0
        for number, part in enumerate(parts):
            source, start = lines.line(first + shift + number)
            is_last = trim and number == len(parts) - 1
            end = len(source.rstrip(MD_TRIM_CHARS)) if is_last else len(source)
            at = end - len(part)
            pad = 0 if at >= 0 and source[at:end] == part else len(part) - len(part.lstrip(" "))
            if at + pad < 0 or source[at + pad : end] != part[pad:]:
                break  # (a pad is a tab's spaces, not in the source)
            segments.append((offset + pad, offset + len(part), start + at + pad))
            offset += len(part) + 1
        else:
            return segments
    return []


def _heading_segments(lines: _Lines, content: str, number: int) -> list[Segment]:
    """Where an ATX heading's content is: after its ``#`` marks, before any closing ones."""
    source, start = lines.line(number)
    marks = source.find("#")
    while 0 <= marks < len(source) and source[marks] == "#":
        marks += 1
    at = source.find(content, marks) if content and marks >= 0 else -1
    return [] if at < 0 else [(0, len(content), start + at)]


def _cell_segments(
    lines: _Lines, content: str, number: int, cursor: int
) -> tuple[list[Segment], int]:
    """Where a table cell's content is in its row's line, read from ``cursor`` on (the
    cells come in order), and where the next cell is looked for. markdown-it reads a
    ``\\|`` as ``|`` (the backslash is gone from the content)."""
    source, start = lines.line(number)
    if not content:
        return [], cursor
    pattern = r"\\\|".join(map(re.escape, content.split("|")))
    found = re.compile(pattern).search(source, cursor)
    if found is None:
        return [], cursor
    segments: list[Segment] = []
    offset, at = 0, found.start()
    for piece in content.split("|"):
        segments.append((offset, offset + len(piece), start + at))
        offset, at = offset + len(piece) + 1, at + len(piece) + 2
    return segments, found.end()


def _placed(found: list[Span], segments: list[Segment], text: str) -> list[Span]:
    """The spans ``found`` in a block's text, placed in the note's ``text``: a span
    runs over segments only where they are joined (else it is left alone)."""
    starts = [segment[0] for segment in segments]
    placed: list[Span] = []
    for begin, end, kind in found:
        first = last = bisect_right(starts, begin) - 1
        while first >= 0 and end > segments[last][1] and _joined(segments, last, text):
            last += 1
        if first >= 0 and end <= segments[last][1]:
            start = begin + segments[first][2] - segments[first][0]
            placed.append((start, end + segments[last][2] - segments[last][0], kind))
    return placed


def _joined(segments: list[Segment], index: int, text: str) -> bool:
    """Whether segment ``index`` and the next are one run of the note's text: only what
    the block's text reads as the one character between them lies between them, a line
    end (an HTML value over lines) or a table cell's ``\\|``; not a quote's marker or
    an indent."""
    if index + 1 >= len(segments):
        return False
    (start, end, at), (next_start, _, next_at) = segments[index], segments[index + 1]
    gap = at + end - start
    between = text[gap:next_at]
    return next_start == end + 1 and (_LINE_END.fullmatch(between) is not None or between == "\\|")


def _block_sources(html: str) -> list[Span]:
    """The ``<img>`` sources of an HTML block; the tag that begins a block (its start
    condition) is left alone unless CommonMark and HTML read it alike (see
    ``_traced_html``)."""
    first = len(html) - len(html.lstrip(" \t"))
    return [
        (start, end, "html")
        for start, end, tag in img_sources(html)
        if tag != first or IMG_TAG.match(html, tag)
    ]


def _definition_span(lines: _Lines, pieces: list[tuple[int, int, int]]) -> list[Span]:
    """The destination of a reference definition, read as markdown-it read it from its
    lines' pieces (line number, start and end column): ``[label]:``, white space (a line
    end too), the destination."""
    from markdown_it.helpers import parseLinkDestination

    segments: list[Segment] = []
    string = ""
    for number, begin, end in pieces:
        segments.append((len(string), len(string) + end - begin, lines.starts[number] + begin))
        string += lines.line(number)[0][begin:end] + "\n"
    pos = 1
    while pos < len(string) and string[pos] != "]":
        pos += 2 if string[pos] == "\\" else 1
    pos += 2  # (past "]:", which the rule found there)
    while pos < len(string) and string[pos] in " \t\n":
        pos += 1
    result = parseLinkDestination(string, pos, len(string))
    return _placed([(pos, result.pos, "markdown")], segments, lines.text) if result.ok else []


def reading(text: str) -> list[tuple[str, str]] | None:
    """How the page reads ``text``, but for its links' targets: its definitions' labels,
    each token's type and tag (children included; not its lines: an HTML value over
    lines is written on one); None past the page's bounds. A rewrite must not change
    it: a value holding an HTML block's end (``</pre>``) would, once encoded."""
    if not within_bounds(text):
        return None
    env: dict[str, Any] = {}
    stack = list(reversed(page_parser().parse(text, env)))
    duplicates = [found["label"] for found in env.get("duplicate_refs", [])]
    signature = [("definition", label) for label in [*env.get("references", {}), *duplicates]]
    while stack:
        token = stack.pop()
        signature.append((token.type, token.tag))
        stack += reversed(token.children or [])
    return signature


@cache
def _parser() -> MarkdownIt:
    """The page's parser, its inline reading left to ``link_target_spans`` (only blocks
    that may hold a link are read), its rules for images, links, raw HTML and reference
    definitions wrapped to note where their links are, and one that notes wikilinks."""
    parser = new_parser(raw_html=True)
    parser.core.ruler.disable("inline")
    parser.inline.ruler.before("link", "vault_wikilink", _traced_wikilink)
    _wrap(parser.inline.ruler, "image", _traced_image)
    _wrap(parser.inline.ruler, "link", _traced_link)
    _wrap(parser.inline.ruler, "html_inline", _traced_html)
    _wrap(parser.block.ruler, "reference", _traced_definition)
    return parser


def _wrap(ruler: Any, name: str, wrapper: Callable[[Any], Any]) -> None:
    """Replace rule ``name`` of ``ruler`` by ``wrapper(rule)``, keeping where it applies."""
    rule = next(rule for rule in ruler.__rules__ if rule.name == name)
    ruler.at(name, wrapper(rule.fn), {"alt": list(rule.alt)})


def _traced_image(image: Callable[[StateInline, bool], bool]) -> Any:
    return _traced_destination(image, label_at=1, nested=False)


def _traced_link(link: Callable[[StateInline, bool], bool]) -> Any:
    return _traced_destination(link, label_at=0, nested=True)


def _traced_destination(
    read: Callable[[StateInline, bool], bool], label_at: int, nested: bool
) -> Any:
    """An image or link rule (``read``), noting where the destination of each image or
    link it reads is (its label ``label_at`` characters after its start)."""

    def rule(state: StateInline, silent: bool) -> bool:
        start = state.pos
        if not read(state, silent):
            return False
        if not silent and state.src is state.env.get(_TRACED):  # (not an alt text's)
            span = _destination(state, start + label_at, nested)
            if span is not None:
                state.env[_FOUND].append((*span, "markdown"))
        return True

    return rule


def _destination(state: StateInline, label: int, nested: bool) -> tuple[int, int] | None:
    """Where the destination of the image or link whose label is at ``label`` is, found
    as markdown-it's rule found it (``nested``: its flag for a link's label, where no
    link may be); None for a reference-style one (its definition has it)."""
    label_end = state.md.helpers.parseLinkLabel(state, label, nested)
    pos = label_end + 1
    if label_end < 0 or pos >= state.posMax or state.src[pos] != "(":
        return None
    pos += 1
    while pos < state.posMax and state.src[pos] in " \t\n":
        pos += 1
    result = state.md.helpers.parseLinkDestination(state.src, pos, state.posMax)
    return (pos, result.pos) if result.ok else None


def _traced_wikilink(state: StateInline, silent: bool) -> bool:
    """Notes the wikilink at ``[[`` and reads nothing: the page reads it as text, and
    the other rules read on as they would (code spans were read before it is reached)."""
    if not silent and state.src is state.env.get(_TRACED):
        found = WIKILINK.match(state.src, state.pos, state.posMax)
        if found is not None and found.end(1) > found.start(1):
            state.env[_FOUND].append((found.start(1), found.end(1), "wiki"))
    return False


def _traced_html(html_inline: Callable[[StateInline, bool], bool]) -> Any:
    def rule(state: StateInline, silent: bool) -> bool:
        start = state.pos
        if not html_inline(state, silent):
            return False
        # A tag markdown-it takes for one only as its reading of white space is wider than
        # HTML's (U+2028 after "=") may stop being one once its unquoted value is
        # rewritten: left alone.
        if not silent and state.src is state.env.get(_TRACED):
            tag = state.src[start : state.pos]
            strict = IMG_TAG.fullmatch(tag) is not None
            state.env[_FOUND] += [
                (start + s, start + e, "html")
                for s, e, _ in img_sources(tag)
                if strict or tag[s] in "'\""  # (a quoted value reads alike)
            ]
        return True

    return rule


def _traced_definition(reference: Callable[[StateBlock, int, int, bool], bool]) -> Any:
    def rule(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
        # A footnote (``[^1]: Ibid.``, as Obsidian reads it) is text, its links links:
        # read as a paragraph, not as a definition whose destination is ``Ibid.``.
        if state.src.startswith("[^", state.bMarks[start_line] + state.tShift[start_line]):
            return False
        if not reference(state, start_line, end_line, silent):
            return False
        if not silent:  # (markdown-it read each line from its first character on)
            pieces = []
            for number in range(start_line, state.line):
                line_start = state.src.rfind("\n", 0, state.bMarks[number]) + 1
                begin = state.bMarks[number] + state.tShift[number]
                pieces.append((number, begin - line_start, state.eMarks[number] - line_start))
            state.env[_DEFINITIONS].append(pieces)
        return True

    return rule
