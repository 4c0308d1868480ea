"""A note's abstract: what a folder summary (and anything else) says of it in one line.

The frontmatter's ``abstract``, ``summary`` or ``description`` (the first that is text),
else the body's first paragraph (a run of non-blank lines that is not a heading), else
the title (also for a day file of events whose first paragraph is the agent client's
preamble, the same in every one); on one line, at most ``ABSTRACT_CHARS`` characters.
The index computes it once per note version (``parse_note``), so reading thousands of
abstracts costs no parsing.
"""

from __future__ import annotations

import re
from typing import Any

from shared.body_title import SETEXT_UNDERLINE
from shared.control_chars import BIDI_CONTROLS
from shared.graphemes import cut_chars
from shared.workspace import DAY_FILE_PREAMBLE

ABSTRACT_CHARS = 200
# Prose is looked for in a note's first this many characters, line by line (a fence
# never closed in a note of megabytes was read whole); past them, its first paragraph.
PROSE_WINDOW = 1 << 16
# A line that is not blank and not an ATX heading, then more such lines.
_LINE = r"[ \t]*(?!#{1,6}(?:[ \t]|$))\S[^\n]*"
_PARAGRAPH = re.compile(rf"^{_LINE}(?:\n{_LINE})*", re.MULTILINE)
# C0/C1 controls but whitespace, and the bidi embeddings, overrides and isolates (one
# left open reorders the rest of a terminal's line: "Trojan source"); \x0b-\x0d stay as
# the whitespace ``split`` takes them for.
_CONTROL = re.compile(f"[\\x00-\\x08\\x0e-\\x1f\\x7f-\\x9f{BIDI_CONTROLS}]")


def one_line(text: str) -> str:
    """``text`` on one line: whitespace runs become one space, control characters (and
    bidi overrides) go."""
    return " ".join(_CONTROL.sub("", text).split())


def clip(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters (an ellipsis marks the cut), never
    inside a character as seen (a flag, an emoji sequence, a letter and its marks)."""
    return cut_chars(text, limit, "…")


def first_paragraph(body: str, limit: int = 4 * ABSTRACT_CHARS, *, plain: bool = False) -> str:
    """The first paragraph of prose of a Markdown body, on one line (its first ``limit``
    characters: an abstract needs no more); else the first run of non-blank lines that
    is not a heading (a note of only a table or code still says something). ``plain``:
    as a reader sees it (``plain_text``)."""
    shown = plain_text if plain else str
    window = body[:PROSE_WINDOW]
    for _ in range(8):  # (a paragraph of images alone shows no words: the next one)
        prose = _first_prose(window, limit)
        if not prose:
            break
        if text := one_line(shown(prose[:limit])):
            return text
        at = window.find(prose)
        if at < 0:
            break
        window = window[at + len(prose) :]
    for found in _PARAGRAPH.finditer(body):  # (a comment is hidden text: never shown)
        if not found.group(0).lstrip().startswith(("<!--", "%%")):
            return one_line(shown(found.group(0)[:limit]))
    return ""


_BLOCK_OPEN = re.compile(r"---[ \t]*\r?\n")
_BLOCK_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*(?:\r?\n|\r?\Z)", re.MULTILINE)


def past_broken_block(text: str) -> str:
    """A note whose frontmatter cannot be read, without that block (``---`` to ``---``
    or ``...``, in any line ending, after a BOM): its abstract is its text, not its
    ``id: ... title: ...`` lines."""
    start = 1 if text.startswith("\ufeff") else 0
    opening = _BLOCK_OPEN.match(text, start)
    if opening is None:
        return text
    closing = _BLOCK_CLOSE.search(text, opening.end())
    return text[closing.end() :] if closing is not None else text


# Lines that open what is not prose: a fence, an HTML block or comment, an Obsidian
# comment, a table row, a thematic break, a block of indented code.
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_NOT_PROSE = re.compile(r" {0,3}(?:\||(?:[-*_][ \t]*){3,}$)| {4}|\t")
_HEADING = re.compile(r"[ \t]*#{1,6}(?:[ \t]|$)")
_HTML_BLOCK = re.compile(r"<[A-Za-z/!?]")


def _first_prose(body: str, limit: int) -> str:
    """The first paragraph that is prose: outside fenced code, HTML blocks and
    comments, Obsidian comments, tables and headings (``#`` or underlined), what a
    reader does not take for the note's text (an HTML block ends at a blank line, as in
    CommonMark); its first ``limit`` characters or more."""
    lines: list[str] = []
    size = 0
    closing: str | None = None  # what ends the block being skipped ("": a blank line)
    for line in body.split("\n"):  # (a window of the note: ``PROSE_WINDOW``)
        if closing is not None:
            if closing == "":
                ended = not line.strip()
            elif closing.startswith(("```", "~~~")):
                fence = _FENCE.match(line)
                ended = (
                    fence is not None
                    and fence.group(1).startswith(closing)
                    and not line[fence.end() :].strip()
                )
            else:
                ended = closing in line
            if ended:
                closing = None
            continue
        if not line.strip() or _HEADING.match(line):
            if lines:
                break
            continue
        if lines:
            if SETEXT_UNDERLINE.match(line):  # ``Title`` over ``=====``: no prose
                lines, size = [], 0
                continue
            lines.append(line)
            size += len(line) + 1
            if size >= limit:  # (an abstract needs no more)
                break
            continue
        text = line.lstrip()
        if fence := _FENCE.match(line):
            closing = fence.group(1)
        elif text.startswith("<!--"):
            closing = None if "-->" in text[4:] else "-->"
        elif text.startswith("%%"):
            closing = None if "%%" in text[2:] else "%%"
        elif _HTML_BLOCK.match(text):
            closing = ""
        elif not _NOT_PROSE.match(line):
            lines.append(line)
            size = len(line) + 1
    return "\n".join(lines)


# Markup that a reader of an abstract sees as its text: Obsidian's embeds (shown as the
# file, not words) and wikilinks (their alias, else their target, ``a#h`` as Obsidian
# shows it: ``a > h``), Markdown images and links (their text), a callout's ``[!type]``,
# a quote's ``>``, the bullet it starts with (``-``, ``*``, ``+``, and a task's box: a
# reader sees a dot, never the character; later items keep theirs, as the items'
# bounds), and emphasis, highlight and strike marks around words. A number (``1.``,
# ``1)``) stays: a reader sees it, and ``3. Oktober`` is a date, not a list's step.
_EMBED = re.compile(r"!\[\[[^\[\]\n]*\]\]")
_WIKILINK = re.compile(r"\[\[([^\[\]|\n]*)(?:\|([^\[\]\n]*))?\]\]")
_IMAGE = re.compile(r"!\[[^\[\]\n]*\]\([^()\s]*(?:\s+\"[^\"\n]*\")?\)")
_LINK = re.compile(r"\[([^\[\]\n]+)\]\([^()\s]*(?:\s+\"[^\"\n]*\")?\)")
_QUOTE = re.compile(r"^[ \t]*(?:>[ \t]?)+(?:\[![^\]\n]*\][+-]?[ \t]*)?", re.MULTILINE)
_BULLET = re.compile(r"\A {0,3}[-*+](?:[ \t]+(?:\[[ xX]\](?:[ \t]+|$))?|$)")
_MARKS = re.compile(r"(\*\*|==|~~)(?=\S)([^\n]*?\S)\1")
_CODE_SPAN = re.compile(r"(`[^`\n]*`)")


def _link_text(found: re.Match[str]) -> str:
    target, alias = found.group(1), found.group(2)
    if alias is not None and alias.strip():
        return alias.strip()
    target = target.split("#^", 1)[0] if not target.startswith("#^") else target[2:]
    return " > ".join(part.strip() for part in target.split("#") if part.strip())


def plain_text(markdown: str) -> str:
    """The text a reader sees of a paragraph's Markdown (see ``_EMBED`` and the
    others): a folder summary read ``[[Core plugins|core plugin]]`` and
    ``[iframe](https://developer.mozilla.org/...)`` where a reader sees "core plugin" and
    "iframe", its 50 characters spent on markup; a first paragraph that is a list was
    ``- a preference ...``, a bullet no reader sees in a line of text."""
    parts = _CODE_SPAN.split(_BULLET.sub("", _QUOTE.sub("", markdown), count=1))
    for i in range(0, len(parts), 2):  # (what is in a code span is shown as written)
        text = _EMBED.sub("", parts[i])
        text = _IMAGE.sub("", text)
        text = _WIKILINK.sub(_link_text, text)
        text = _LINK.sub(r"\1", text)
        parts[i] = _MARKS.sub(r"\2", text)
    return "".join(parts)


def note_abstract(meta: dict[str, Any], body: str, title: str, *, markdown: bool = True) -> str:
    """A note's abstract (see the module's docstring); a ``markdown`` body's first
    paragraph as a reader sees it (``plain_text``)."""
    for key in ("abstract", "summary", "description"):
        value = meta.get(key)
        if isinstance(value, str) and one_line(value[: 4 * ABSTRACT_CHARS]):
            return clip(one_line(value[: 4 * ABSTRACT_CHARS]), ABSTRACT_CHARS)
    paragraph = first_paragraph(body, plain=markdown)
    if paragraph == DAY_FILE_PREAMBLE and meta.get("type") == "events":
        paragraph = ""  # (a day file written before it had a description: its title)
    return clip(paragraph or one_line(title), ABSTRACT_CHARS)
