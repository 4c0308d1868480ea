"""Text from notes shown on a terminal: control characters spelled out, never obeyed.

A note (or an entry, which keeps ESC as written) can hold terminal escape sequences:
printed as they are, ``\\x1b]0;...\\x07`` retitles the window and ``\\x1b[2J`` clears it.
On a terminal every control character but the newline and the tab is shown as
``\\xNN`` (as ``cat -v`` would show it), and a bidi override, embedding or isolate as
``\\uNNNN`` (on a terminal that lays out bidi text, ``\\u202e`` can turn the rest of
the line around); a pipe or a file gets the text as it is. Both commands use it
(``agent-client``, ``indexer history`` and ``indexer search``).

A terminal whose encoding is not UTF-8 (``LANG=en_US.ISO-8859-1``, ``ja_JP.eucJP``)
cannot show most of a vault's scripts: what it cannot show is printed as an escape
(``\\u0111``), as Python's stderr does already, where the command stopped at the first
such character with a codec error and exit status 2 (``shows_any_text``).
"""

from __future__ import annotations

import codecs
import io
import re
from typing import TextIO

from shared.control_chars import BIDI_CONTROLS, CONTROLS

_CONTROL = re.compile(f"[{CONTROLS}{BIDI_CONTROLS}]")


def for_terminal(text: str, stream: TextIO) -> str:
    """``text`` as it may be written to ``stream``."""
    if not is_terminal(stream):
        return text
    return _CONTROL.sub(_spelled, text)


def _spelled(found: re.Match[str]) -> str:
    code = ord(found.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # closed, or not a real stream
        return False


def shows_any_text(stream: TextIO) -> None:
    """Have ``stream`` escape the characters its encoding lacks instead of raising.

    A UTF-8 stream is left strict: it can encode every character, and a lone surrogate
    (no text at all) should still fail loudly.
    """
    if not isinstance(stream, io.TextIOWrapper):
        return
    if codecs.lookup(stream.encoding).name != "utf-8":
        stream.reconfigure(errors="backslashreplace")
