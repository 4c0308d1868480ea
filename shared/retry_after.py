"""A model endpoint's ``Retry-After`` (a 429 or 503): the seconds it asks callers to wait.

Read by the indexer's jobs (``indexer.jobs.llm``) and the agent client's merge, so both
keep the same quiet: a number of seconds or an HTTP date, at most ``MAX_RETRY_AFTER``.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime

MAX_RETRY_AFTER = 3600.0  # seconds: an endpoint asking for a day is asked again in an hour


def retry_after_seconds(said: object) -> float | None:
    """The seconds a ``Retry-After`` value asks for; None if it says none (or nonsense)."""
    if not isinstance(said, str) or not said.strip():
        return None
    said = said.strip()
    if said.isascii() and said.isdecimal():
        seconds = float(said[:9])  # (a 100,000-digit number waits the most, not forever)
    else:
        try:
            when = parsedate_to_datetime(said)
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
        if when.tzinfo is None:
            return None
        seconds = (when - datetime.now(UTC)).total_seconds()
    return min(max(seconds, 0.0), MAX_RETRY_AFTER)


def quiet_end(now: datetime, seconds: float) -> datetime:
    """The moment a ``Retry-After`` of ``seconds`` from ``now`` ends, rounded up to the
    second (a time said or kept in whole seconds: not a moment before)."""
    later = now + timedelta(seconds=seconds)
    whole = later.replace(microsecond=0)
    return whole + timedelta(seconds=1) if whole < later else whole
