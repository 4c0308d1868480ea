"""The Markdown marks a snippet leaves out: they say how a line looks, not what it says.

A search snippet is one line of a note's text, its white space run together, read by
an agent or shown on the browser page. Written as it is, a note's start reads
``# Past tense of "go" The past tense...`` and a table ``| form | word |
|------|------|``. What is left out holds no word search finds (``#``, ``>``, ``-``,
``=``, ``*``, ``_``, ``|`` and ``:`` are no token characters), so a snippet still marks
a hit wherever search found the note:

- a heading's ``#`` marks and a quote's ``>`` marks at the start of a line;
- a line of those marks alone: a setext heading's ``====``, a thematic break, a table's
  ``|---|:---:|`` row.

Links, emphasis and lists stay as written (a link's target holds words search finds).
Only the note's first ``MARKUP_CHARS`` characters (to a line's end) are read so: most
first hits are there, and a note of half a million one-character lines took 60 ms.
"""

from __future__ import annotations

import re

MARKUP_CHARS = 16_384

# Each after a line break: a line's quote and heading marks, or a line of marks alone
# (to its end, or to the end of the text: a line cut there that may grow into one).
_MARKS = re.compile(
    r"\n[ \t]{0,3}(?:(?:>[ \t]?)+(?:#{1,6}(?=\s|$))?|#{1,6}(?=\s|$))"
    r"|\n[ \t]*[-=*_|:][-=*_|: \t\r]*(?=\n|$)"
)


def without_markup(piece: str, body: str) -> str:
    """``piece`` (the start of ``body``, cut before white space) without the marks
    above in its first ``MARKUP_CHARS`` characters of ``body`` (to the end of a line).

    Every piece of one body gives a prefix of what a longer piece gives (a snippet
    reads a note's start first, then more: ``query._READS``): the part read so is
    the same whole lines of ``body`` for each, and of a line cut at a piece's end,
    the marks at its start are read as the whole line's are (a cut is before white
    space), and one that is marks alone so far is left out (what follows it, if
    anything, comes after)."""
    if len(body) <= MARKUP_CHARS:
        reach = len(body)
    else:
        reach = max(0, body.rfind("\n", 0, MARKUP_CHARS + 1))
    head = min(reach, len(piece))
    if not head:
        return piece
    return _MARKS.sub("\n", "\n" + piece[:head])[1:] + piece[head:]
