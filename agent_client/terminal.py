"""Text from notes shown on a terminal: control characters spelled out, never obeyed.

A note (or an entry, which keeps ESC as written) can hold terminal escape sequences:
printed as they are, ``\\x1b]0;...\\x07`` retitles the window and ``\\x1b[2J`` clears it.
On a terminal every control character but the newline and the tab is shown as
``\\xNN`` (as ``cat -v`` would show it); a pipe or a file gets the text as it is.
"""

from __future__ import annotations

import logging
import re
from typing import TextIO

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def for_terminal(text: str, stream: TextIO) -> str:
    """``text`` as it may be written to ``stream``."""
    if not _is_terminal(stream):
        return text
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # closed, or not a real stream
        return False


class TerminalFormatter(logging.Formatter):
    """Log lines as ``for_terminal`` shows text: a model endpoint's error message or a
    note's title in a log line cannot drive the terminal either."""

    def __init__(self, fmt: str, stream: TextIO) -> None:
        super().__init__(fmt)
        self._stream = stream

    def format(self, record: logging.LogRecord) -> str:
        return for_terminal(super().format(record), self._stream)
