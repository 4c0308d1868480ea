"""Text from notes shown on a terminal: control characters spelled out, never obeyed.

A note (or an entry, which keeps ESC as written) can hold terminal escape sequences:
printed as they are, ``\\x1b]0;...\\x07`` retitles the window and ``\\x1b[2J`` clears it.
On a terminal every control character but the newline and the tab is shown as
``\\xNN`` (as ``cat -v`` would show it), and a bidi override, embedding or isolate as
``\\uNNNN`` (on a terminal that lays out bidi text, ``\\u202e`` can turn the rest of
the line around); a pipe or a file gets the text as it is. Both commands use it
(``agent-client``, ``indexer history`` and ``indexer search``).
"""

from __future__ import annotations

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
