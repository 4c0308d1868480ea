"""A note's title from its body: the text of its first ``# `` heading (SPEC: a missing
frontmatter block gets ``title`` from it), read as a Markdown reader does, in linear
time: a ``# `` line in fenced code is code, a heading's closing ``#``s are dropped. A
first-level heading written as a line underlined with ``=`` (setext, as in many READMEs)
is one too, when it is a paragraph of its own.
"""

from __future__ import annotations

import re

# A ``# `` heading, the opening of fenced code (whose lines are no heading), or a line
# underlined with ``=`` (a heading when ``_setext_title`` says so)
_TITLE_OR_FENCE = re.compile(
    r"^#[ \t]+(?P<title>[^\n]+)$|^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>[^\n]*)$"
    r"|^(?P<setext> {0,3}[^ \t\r\n][^\n]*)\n {0,3}=+[ \t]*\r?$",
    re.MULTILINE,
)
# A setext heading's underline: the paragraph's lines above it are its heading (``=``:
# the first level, ``-``: the second)
SETEXT_UNDERLINE = re.compile(r" {0,3}(?:=+|-+)[ \t]*\r?$")
# A line that ends the block above it (so the next line starts a paragraph): a heading,
# a fence, a thematic break.
_BLOCK_LINE = re.compile(r" {0,3}(?:#{1,6}(?:[ \t]|\r?$)|`{3,}|~{3,}|(?:[-*_][ \t]*){3,}\r?$)")
# What the line above an ``=`` underline may not be to make a heading: another block's
# start (an ATX heading, a list item, a quote, a line of ``=``); its underline is text.
_NOT_SETEXT = re.compile(r" {0,3}(?:#{1,6}(?:[ \t]|\r?$)|[-+*][ \t]|[0-9]{1,9}[.)][ \t]|>|=)")


def title_from_body(body: str) -> str:
    """The text of the first ``# `` heading (CommonMark closing ``#``s dropped), or ``""``;
    a ``# `` line in fenced code is code (a shell block's ``# install deps``), not one.
    A fence indented inside a list item ends with the item: at a line indented less (a
    heading at the margin after it is one)."""
    at = 0
    looks = [_LIST_LOOKS]  # (lines looked back at in all: 100,000 indented fences)
    while (match := _TITLE_OR_FENCE.search(body, at)) is not None:
        if match["title"] is not None:
            return _without_closing_hashes(match["title"])
        if match["setext"] is not None:
            if _setext_title(body, match):
                return match["setext"].strip()
            at = match.end("setext")  # (the search goes on from its underline)
            continue
        fence = match["fence"]
        if fence[0] == "`" and "`" in match["info"]:  # (not a fence: CommonMark)
            at = match.end()
            continue
        closing = rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*\r?$"
        indent = len(match["indent"])
        if indent and _in_list_item(body, match.start(), indent, looks):
            closing += rf"|^ {{0,{indent - 1}}}(?P<out>\S)"
        end = re.compile(closing, re.MULTILINE).search(body, match.end())
        if end is None:  # (a fence never closed runs to the end)
            return ""
        at = end.start() if end.groupdict().get("out") else end.end()
    return ""


_LIST_ITEM = re.compile(r" {0,3}(?:[-+*]|[0-9]{1,9}[.)])(?:[ \t]|$)")
_LIST_LOOKS = 4096


def _in_list_item(body: str, start: int, indent: int, looks: list[int]) -> bool:
    """Whether the line at ``start``, indented ``indent`` spaces, is inside a list item:
    the nearest line above it indented less (blank lines passed) starts one. Looked for
    in the last 256 lines, within ``looks`` lines in all (a top-level fence, else)."""
    end = start
    for _ in range(256):
        if end <= 0 or looks[0] <= 0:
            return False
        looks[0] -= 1
        begin = body.rfind("\n", 0, end - 1) + 1
        line = body[begin : end - 1]
        end = begin
        if line.strip() and len(line) - len(line.lstrip(" ")) < indent:
            return _LIST_ITEM.match(line) is not None
    return False


def _setext_title(body: str, match: re.Match[str]) -> bool:
    """Whether the underlined line is a paragraph of its own, after a blank line, a
    heading, a fence or a break (a line of text further up would make the whole
    paragraph the heading: no title is guessed from that)."""
    start = match.start()
    before = body[body.rfind("\n", 0, max(0, start - 1)) + 1 : max(0, start - 1)]
    apart = start == 0 or not before.strip() or _BLOCK_LINE.match(before) is not None
    return apart and not _NOT_SETEXT.match(match["setext"])


def _without_closing_hashes(text: str) -> str:
    """A heading's text without its closing ``#`` run (one after white space only: ``C#``
    keeps its ``#``), trimmed; read from the end, in linear time (a regex for it took
    seconds for a heading of 40,000 spaces)."""
    text = text.rstrip(" \t\r")
    bare = text.rstrip("#")
    if bare != text and bare and bare[-1] in " \t":
        text = bare
    return text.strip()
