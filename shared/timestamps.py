"""How moments are written in notes, state files and logs: ISO 8601, UTC as ``Z``; and
how a moment given as text (a CLI flag, a model's JSON) is read back."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

# A zone's offset is less than a day: a moment a day inside the range datetime holds can be
# shown in every zone (an event's day file is named in the configured one).
_ZONE_MARGIN = timedelta(days=1)


def format_timestamp(value: datetime) -> str:
    """ISO 8601; UTC is written with ``Z``; naive stays naive."""
    if value.tzinfo is not None and value.utcoffset() == UTC.utcoffset(None):
        return value.replace(tzinfo=None).isoformat() + "Z"
    return value.isoformat()


def parse_timestamp(text: str) -> datetime:
    """An ISO 8601 moment with its zone (``Z`` or ``+01:00``); ``ValueError`` otherwise."""
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:
        raise ValueError(
            f"{text[:60]!r} is not an ISO 8601 time with a zone, e.g. 2026-11-29T20:00:00+01:00"
        )
    if not storable(moment):  # year 1 at +14:00 is before the first moment in UTC
        raise ValueError(f"{text[:60]!r} is outside the times that can be stored")
    return moment


def storable(moment: datetime) -> bool:
    """Whether an aware ``moment`` can be shown in every time zone: year 9999's last
    hours in UTC are year 10000 at +14:00 (an OverflowError deep in the writer)."""
    try:
        utc = moment.astimezone(UTC)
        return datetime.min.replace(tzinfo=UTC) + _ZONE_MARGIN <= utc and (
            utc <= datetime.max.replace(tzinfo=UTC) - _ZONE_MARGIN
        )
    except OverflowError:
        return False


def utc_now(timespec: str = "seconds") -> str:
    """Now, in UTC, as ``2026-11-29T20:01:02Z``."""
    return format_timestamp(datetime.fromisoformat(datetime.now(UTC).isoformat(timespec=timespec)))
