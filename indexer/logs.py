"""The indexer's log output: one handler, one format, and repeats kept in check.

Under attack or a fault, the same line can come thousands of times a second (asyncio
logged a traceback per failed ``accept()`` once the process ran out of descriptors:
79 MB in 25 s). ``RepeatLimiter`` lets through the first ``burst`` warnings or errors
with the same logger, level and message (numbers aside; and subject, for a line that
names one) in each ``window``, drops the rest, and says how many were dropped on the next
one let through.

Times are local with their UTC offset (``2026-10-25 02:30:00,125+0200``): without it,
the hour a DST change repeats read the same twice.
"""

from __future__ import annotations

import logging
import re
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

# The levels `--log-level` and INDEXER_LOG_LEVEL take (by name).
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")

_NUMBERS = re.compile(r"0x[0-9a-f]+|\d+(?:\.\d+)?")  # fds, times, addresses vary
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
MAX_KEYS = 1000


class OffsetFormatter(logging.Formatter):
    """``FORMAT`` with the local time's UTC offset after the milliseconds."""

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        moment = self.converter(record.created)
        clock = time.strftime("%Y-%m-%d %H:%M:%S", moment)
        return f"{clock},{int(record.msecs):03d}{time.strftime('%z', moment)}"


@dataclass
class _Seen:
    start: float
    count: int = 1
    dropped: int = 0


class RepeatLimiter(logging.Filter):
    """See the module docstring; DEBUG and INFO lines are never limited."""

    def __init__(
        self, burst: int = 5, window: float = 60.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__()
        self.burst = burst
        self.window = window
        self._clock = clock
        self._seen: dict[tuple[str, int, str], _Seen] = {}
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        # A line that names its subject (``extra={"limit_key": ...}``) is limited per
        # subject: one skipped name's warning must not silence every other name's.
        message = _NUMBERS.sub("#", str(record.msg)[:300])
        key = (record.name, record.levelno, message + getattr(record, "limit_key", ""))
        now = self._clock()
        with self._lock:
            seen = self._seen.get(key)
            if seen is None or now - seen.start >= self.window:
                if len(self._seen) >= MAX_KEYS:
                    self._seen.clear()
                self._seen[key] = _Seen(now)
                if seen is not None and seen.dropped:
                    record.msg = f"{record.msg} [{seen.dropped} more like this were not logged]"
                return True
            seen.count += 1
            if seen.count <= self.burst:
                return True
            seen.dropped += 1
            return False


def configure(level: str) -> None:
    """Everything (ours, uvicorn's, asyncio's, the MCP SDK's) to stderr through one
    handler; ``indexer.*`` at ``level``, libraries at WARNING."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(OffsetFormatter(FORMAT))
    handler.addFilter(RepeatLimiter())
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
    logger = logging.getLogger("indexer")
    logger.setLevel(level)
    logger.propagate = True
