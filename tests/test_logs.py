"""RepeatLimiter: a flood of one warning becomes a few lines and a count."""

from __future__ import annotations

import logging
import time

import pytest

from indexer.logs import FORMAT, OffsetFormatter, RepeatLimiter


def record(msg: str, level: int = logging.ERROR, name: str = "asyncio") -> logging.LogRecord:
    return logging.LogRecord(name, level, __file__, 1, msg, None, None)


def test_repeats_are_limited_per_window_and_counted() -> None:
    now = [0.0]
    limiter = RepeatLimiter(burst=3, window=60.0, clock=lambda: now[0])
    kept = [limiter.filter(record(f"accept failed on fd={n}")) for n in range(1000)]
    assert sum(kept) == 3  # the numbers differ, the line is the same
    assert limiter.filter(record("another line"))
    now[0] = 61.0
    summary = record("accept failed on fd=7")
    assert limiter.filter(summary)
    assert "[997 more like this were not logged]" in summary.getMessage()


def test_debug_and_info_lines_are_never_limited() -> None:
    limiter = RepeatLimiter(burst=1, window=60.0, clock=lambda: 0.0)
    assert all(limiter.filter(record("tool=read", logging.DEBUG)) for _ in range(100))
    assert all(limiter.filter(record("reconciled", logging.INFO)) for _ in range(100))


@pytest.mark.parametrize(
    ("zone", "created", "stamp"),
    [  # 2026-10-25 is the day Europe/Paris leaves DST: 02:30 happens twice
        ("Europe/Paris", 1792888200.125, "2026-10-25 02:30:00,125+0200"),
        ("Europe/Paris", 1792891800.5, "2026-10-25 02:30:00,500+0100"),
        ("Asia/Kolkata", 1792888200.0, "2026-10-25 06:00:00,000+0530"),
        ("UTC", 1792888200.0, "2026-10-25 00:30:00,000+0000"),
    ],
)
def test_log_times_carry_their_utc_offset(
    monkeypatch: pytest.MonkeyPatch, zone: str, created: float, stamp: str
) -> None:
    monkeypatch.setenv("TZ", zone)
    time.tzset()
    try:
        record = logging.LogRecord("indexer", logging.INFO, __file__, 1, "hello", None, None)
        record.created, record.msecs = created, (created % 1) * 1000
        assert OffsetFormatter(FORMAT).format(record) == f"{stamp} INFO indexer: hello"
    finally:
        monkeypatch.undo()
        time.tzset()
