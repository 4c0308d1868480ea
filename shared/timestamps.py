"""How moments are written in notes, state files and logs: ISO 8601, UTC as ``Z``."""

from __future__ import annotations

from datetime import UTC, datetime


def format_timestamp(value: datetime) -> str:
    """ISO 8601; UTC is written with ``Z``; naive stays naive."""
    if value.tzinfo is not None and value.utcoffset() == UTC.utcoffset(None):
        return value.replace(tzinfo=None).isoformat() + "Z"
    return value.isoformat()


def utc_now(timespec: str = "seconds") -> str:
    """Now, in UTC, as ``2026-11-29T20:01:02Z``."""
    return format_timestamp(datetime.fromisoformat(datetime.now(UTC).isoformat(timespec=timespec)))
