"""The one Markdown reading that the page and a move's link rewriting share.

The page renders a note with markdown-it-py (CommonMark, tables, strikethrough, raw
HTML); a move locates the images it must fix with the same parser, so that what it
rewrites is what the page shows. Both stop at the same bounds: a note past them is
shown as plain text (markdown-it's time grows with its brackets, lines and nesting,
and it runs on threads nothing can stop).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

# Bounds on the work one reading takes: markdown-it takes about 70 µs per link bracket
# or emphasis mark (256 Ki of "![" took 10 s) and 10 µs a character of headings.
MAX_RENDERED_CHARS = 64 * 1024  # a longer note is shown as plain text
MAX_MARKUP_SIGNS = 8_000  # brackets, emphasis, tags, table cells: more, and plain text
MAX_RENDERED_LINES = 4_000  # markdown-it takes about 170 µs a list item or table row
# Block levels markdown-it parses (a list level is two: the list and its item; a quote
# one). Its preset's 20 dropped an ordinary outline 10 deep, and every paragraph after
# it, silently; a note reaching this many is shown as plain text instead.
MAX_MARKDOWN_NESTING = 32  # (each level costs markdown-it a pass over lazy lines: at
# 120, a quote 117 deep with 3,990 lazy lines took 2.6 s to render; at 32, 0.5-0.8 s)
_MARKUP_SIGNS = "[*_~<`|"


def within_bounds(markdown: str) -> bool:
    """Whether ``markdown`` is short and plain enough to be read as Markdown at all."""
    if len(markdown) > MAX_RENDERED_CHARS:
        return False
    lines = markdown.count("\n") + markdown.count("\r")  # (a lone CR ends a line too)
    signs = sum(map(markdown.count, _MARKUP_SIGNS))
    return signs <= MAX_MARKUP_SIGNS and lines <= MAX_RENDERED_LINES


def too_deep(tokens: Sequence[Token]) -> bool:
    """Whether markdown-it stopped at its nesting limit (dropping what is deeper and
    the rest of the list): the note is then shown as plain text."""
    return max((token.level for token in tokens), default=0) >= MAX_MARKDOWN_NESTING - 1


@cache
def page_parser(*, raw_html: bool = True) -> MarkdownIt:
    """The page's parser, shared (a parse keeps its state apart from the parser's)."""
    return new_parser(raw_html=raw_html)


def new_parser(*, raw_html: bool = True) -> MarkdownIt:
    """A parser as the page configures it, of the caller's own (to change its rules);
    markdown-it loads on first use, not at the server's start."""
    from markdown_it import MarkdownIt

    options = {"html": raw_html, "maxNesting": MAX_MARKDOWN_NESTING}
    return MarkdownIt("commonmark", options).enable(["table", "strikethrough"])
