"""A note's abstract: what a folder summary (and anything else) says of it in one line.

The frontmatter's ``abstract``, ``summary`` or ``description`` (the first that is text),
else the body's first paragraph (a run of non-blank lines that is not a heading), else
the title; on one line, at most ``ABSTRACT_CHARS`` characters. The index computes it
once per note version (``parse_note``), so reading thousands of abstracts costs no
parsing.
"""

from __future__ import annotations

import re
from typing import Any

from shared.graphemes import cut_chars

ABSTRACT_CHARS = 200
# A line that is not blank and not an ATX heading, then more such lines.
_LINE = r"[ \t]*(?!#{1,6}(?:[ \t]|$))\S[^\n]*"
_PARAGRAPH = re.compile(rf"^{_LINE}(?:\n{_LINE})*", re.MULTILINE)
# C0/C1 controls but whitespace, and the bidi embeddings, overrides and isolates (one
# left open reorders the rest of a terminal's line: "Trojan source").
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def one_line(text: str) -> str:
    """``text`` on one line: whitespace runs become one space, control characters (and
    bidi overrides) go."""
    return " ".join(_CONTROL.sub("", text).split())


def clip(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters (an ellipsis marks the cut), never
    inside a character as seen (a flag, an emoji sequence, a letter and its marks)."""
    return cut_chars(text, limit, "…")


def first_paragraph(body: str, limit: int = 4 * ABSTRACT_CHARS) -> str:
    """The first run of non-blank lines of a Markdown body that is not a heading, on one
    line (its first ``limit`` characters: an abstract needs no more)."""
    found = _PARAGRAPH.search(body)
    return one_line(found.group(0)[:limit]) if found else ""


def note_abstract(meta: dict[str, Any], body: str, title: str) -> str:
    """A note's abstract (see the module's docstring)."""
    for key in ("abstract", "summary", "description"):
        value = meta.get(key)
        if isinstance(value, str) and one_line(value[: 4 * ABSTRACT_CHARS]):
            return clip(one_line(value[: 4 * ABSTRACT_CHARS]), ABSTRACT_CHARS)
    return clip(first_paragraph(body) or one_line(title), ABSTRACT_CHARS)
