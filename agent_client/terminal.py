"""Log lines shown on a terminal as notes' text is (``shared.terminal_text``)."""

from __future__ import annotations

import logging
from typing import TextIO

from shared.terminal_text import for_terminal

__all__ = ["TerminalFormatter", "for_terminal"]


class TerminalFormatter(logging.Formatter):
    """Log lines as ``for_terminal`` shows text: a model endpoint's error message or a
    note's title in a log line cannot drive the terminal either."""

    def __init__(self, fmt: str, stream: TextIO) -> None:
        super().__init__(fmt)
        self._stream = stream

    def format(self, record: logging.LogRecord) -> str:
        return for_terminal(super().format(record), self._stream)
