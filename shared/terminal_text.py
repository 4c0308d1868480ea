"""Text from notes shown on a terminal: control characters spelled out, never obeyed.

A note (or an entry, which keeps ESC as written) can hold terminal escape sequences:
printed as they are, ``\\x1b]0;...\\x07`` retitles the window and ``\\x1b[2J`` clears it.
On a terminal every control character but the newline and the tab is shown as
``\\xNN`` (as ``cat -v`` would show it); a pipe or a file gets the text as it is. Both
commands use it (``agent-client``, ``indexer history`` and ``indexer search``).
"""

from __future__ import annotations

import re
from typing import TextIO

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def for_terminal(text: str, stream: TextIO) -> str:
    """``text`` as it may be written to ``stream``."""
    if not is_terminal(stream):
        return text
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # closed, or not a real stream
        return False
