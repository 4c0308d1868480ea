"""A note's abstract: what a folder summary (and anything else) says of it in one line.

The frontmatter's ``abstract``, ``summary`` or ``description`` (the first that is text,
or a number, date or boolean that YAML typed, as written), else the body's first
paragraph of prose (not a heading, code, a table, an HTML or math block, a rule, nor
links or images alone: ``first_paragraph``), else what a reader sees of its first block
(a note of code alone: its code, not the fence), else the title (also for a day file of
events whose first paragraph is the agent client's preamble, the same in every one); on
one line, at most ``ABSTRACT_CHARS`` characters.
The index computes it once per note version (``parse_note``), so reading thousands of
abstracts costs no parsing.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from indexer.index.note_blocks import PROSE, TABLE, blocks
from indexer.index.snippet_spaces import one_space_a_run
from shared.control_chars import BIDI_CONTROLS
from shared.graphemes import cut_chars
from shared.workspace import DAY_FILE_PREAMBLE
from shared.yaml_dialect import scalar_text

ABSTRACT_CHARS = 200
# Prose is looked for in a note's first this many characters, line by line (a fence
# never closed in a note of megabytes was read whole).
PROSE_WINDOW = 1 << 16
# C0/C1 controls but whitespace, and the bidi embeddings, overrides and isolates (one
# left open reorders the rest of a terminal's line: "Trojan source"); \x0b-\x0d stay as
# the whitespace ``split`` takes them for.
_CONTROL = re.compile(f"[\\x00-\\x08\\x0e-\\x1f\\x7f-\\x9f{BIDI_CONTROLS}]")


def one_line(text: str) -> str:
    """``text`` on one line: whitespace runs become one space, control characters (and
    bidi overrides) go; a no-break space stays one (``snippet_spaces``): an abstract is
    a filter-only search's snippet and a summary's quote, and ``1 000 €`` or French
    ``« x »`` turned to plain spaces held the note's text no more."""
    return one_space_a_run(_CONTROL.sub("", text))


def clip(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters (an ellipsis marks the cut), never
    inside a character as seen (a flag, an emoji sequence, a letter and its marks)."""
    return cut_chars(text, limit, "…")


def first_paragraph(body: str, limit: int = 4 * ABSTRACT_CHARS, *, plain: bool = False) -> str:
    """The first paragraph of prose of a Markdown body, on one line (its first ``limit``
    characters: an abstract needs no more); ``plain``: as a reader sees it
    (``plain_text``), and a paragraph of links or images alone is no prose (a note's
    ``[Home](index.md) | [Next](b.md)``, its badges). A note of no prose still says
    something: what a reader sees of its first block that shows any (``note_blocks``:
    a fence's code without its markers, a table's cells, an HTML block's text)."""
    shown = plain_text if plain else str
    fallback = ""
    for block in blocks(body[:PROSE_WINDOW], limit):
        if fallback and block.kind != PROSE:
            continue  # (what a later block shows is never needed)
        whole = block.text
        text = one_line(shown(whole[:limit]) if block.kind in (PROSE, TABLE) else whole[:limit])
        if block.kind == PROSE and text and (not plain or says_words(whole)):
            return text
        fallback = fallback or text
    return fallback


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


# Markup that a reader of an abstract sees as its text: Obsidian's embeds (shown as the
# file, not words) and wikilinks (their alias, else their target, ``a#h`` as Obsidian
# shows it: ``a > h``), Markdown images and links (their text), a callout's ``[!type]``,
# a quote's ``>``, the bullet it starts with (``-``, ``*``, ``+``, and a task's box: a
# reader sees a dot, never the character; later items keep theirs, as the items'
# bounds), and emphasis, highlight and strike marks around words. A number (``1.``,
# ``1)``) stays: a reader sees it, and ``3. Oktober`` is a date, not a list's step.
_EMBED = re.compile(r"!\[\[[^\[\]\n]*\]\]")
_WIKILINK = re.compile(r"\[\[([^\[\]|\n]*)(?:\|([^\[\]\n]*))?\]\]")
_TITLE = r"(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'))?"  # (a link's ``"title"`` or ``'title'``)
# (inline, ``[text](url)``, or by reference, ``[text][ref]``)
_IMAGE = re.compile(rf"!\[[^\[\]\n]*\](?:\([^()\s]*{_TITLE}\)|\[[^\[\]\n]*\])?")
_LINK = re.compile(rf"\[([^\[\]\n]*)\](?:\([^()\s]*{_TITLE}\)|\[[^\[\]\n]*\])")
_QUOTE = re.compile(r"^[ \t]*(?:>[ \t]?)+(?:\[![^\]\n]*\][+-]?[ \t]*)?", re.MULTILINE)
_BULLET = re.compile(r"\A {0,3}[-*+](?:[ \t]+(?:\[[ xX]\](?:[ \t]+|$))?|$)")
_MARKS = re.compile(r"(\*\*|==|~~)(?=\S)([^\n]*?\S)\1")
_CODE_SPAN = re.compile(r"(`[^`\n]*`)")
# A link whose text is a code span (``[`libnpmfund`](https://...)``): the span is shown.
_CODE_LINK = re.compile(rf"\[(`[^`\n]*`)\](?:\([^()\s]*{_TITLE}\)|\[[^\[\]\n]*\])")


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
    text = _CODE_LINK.sub(r"\1", _BULLET.sub("", _QUOTE.sub("", markdown), count=1))
    parts = _CODE_SPAN.split(text)
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
        if isinstance(value, bool | int | float | date):  # (a person's `abstract: 12345`,
            value = scalar_text(value)  # a date or `true`: YAML typed it; shown as written)
        if isinstance(value, str) and one_line(value[: 4 * ABSTRACT_CHARS]):
            return clip(one_line(value[: 4 * ABSTRACT_CHARS]), ABSTRACT_CHARS)
    paragraph = first_paragraph(body, plain=markdown)
    if paragraph == DAY_FILE_PREAMBLE and meta.get("type") == "events":
        paragraph = ""  # (a day file written before it had a description: its title)
    return clip(paragraph or one_line(title), ABSTRACT_CHARS)


# What is no word of a paragraph's own, besides its links and images: a line's list
# marker (and task box), a link's reference definition (``[ref]: url``, never shown), an
# autolink or a bare URL.
_ITEM = re.compile(r"^[ \t]*(?:[-*+]|[0-9]{1,9}[.)])(?=[ \t]|$)(?:[ \t]+\[[ xX]\])?", re.M)
_DEFINITION = re.compile(r"^[ \t]{0,3}\[[^\[\]\n]+\]:[^\n]*", re.MULTILINE)
_URL = re.compile(r"<[A-Za-z][A-Za-z0-9+.-]{1,31}:[^<>\s]*>|https?://\S+")
_WORD = re.compile(r"[^\W_]")
_MARKER = re.compile(r"[ \t]*(?:>|[-*+]|[0-9]{1,9}[.)])")
_OPENER = re.compile(r"\[|<|https?://")


def says_words(markdown: str) -> bool:
    """Whether a paragraph holds a letter or a digit of its own, outside its links and
    images (and ``_ITEM`` and the others): ``See [[Plan]]`` does, ``- [A](a.md)`` over
    ``- [B](b.md)`` does not, nor ``[Home](index.md) | [Next](b.md)`` or a row of
    badges (``[![build](b.svg)](ci)``: an image in a link)."""
    first = _WORD.search(markdown)
    if first is None:
        return False
    opener = _OPENER.search(markdown)
    if not _MARKER.match(markdown) and (opener is None or first.start() < opener.start()):
        return True  # (a word before any link: most paragraphs, told without a ``sub``)
    text = _ITEM.sub("", _QUOTE.sub("", _DEFINITION.sub("", markdown)))
    text = _LINK.sub("", _WIKILINK.sub("", _IMAGE.sub("", _EMBED.sub("", text))))
    return _WORD.search(_URL.sub("", text)) is not None
