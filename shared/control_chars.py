"""The characters a text written by a model or another program must not keep.

C0 and C1 controls drive a terminal (``\\x1b[2J`` clears it) or are no text at all
(NUL); the bidi embeddings, overrides and isolates make a line read other than it is
(``\\u202e`` turns what follows around: "Trojan source"). Each reader drops or shows
them its own way (an abstract on one line, a summary's overview, USER.md, a recall
block's data, a terminal), from these ranges, so that none of them forgets one.
"""

from __future__ import annotations

import re

# C0 and C1 controls but the tab and the newline (as ranges for a character class)
CONTROLS = "\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f"
# The bidi embeddings and overrides (U+202A-202E) and isolates (U+2066-2069)
BIDI_CONTROLS = "\\u202a-\\u202e\\u2066-\\u2069"
_IN_TEXT = re.compile(f"[{CONTROLS}{BIDI_CONTROLS}]")


def without_controls(text: str) -> str:
    """``text`` without controls (but tab and newline) and bidi overrides, as a note of
    several lines may keep it."""
    return _IN_TEXT.sub("", text)


def printable(raw: str) -> str:
    """``raw`` as a log line can show it: undecodable bytes and every character that is
    not printable (controls, bidi overrides, other format characters) escaped, so that
    a name or a model's text cannot forge a line or turn one around."""
    text = raw.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in text)
