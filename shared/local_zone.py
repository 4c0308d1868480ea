"""Whether the ``TZ`` variable names a time zone the C library can read.

glibc reads an unknown ``TZ`` (``Europe/Pariss``, ``Not/AZone``, ``garbage``) as UTC
without a word, so the agent client filed events by the UTC day and the server's log
said UTC times, while the user believed their zone was set. Said once, at start.
"""

from __future__ import annotations

import functools
import logging
import os
import re
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

# A POSIX rule: a name (3+ letters, or quoted in <>) and its offset, then anything (its
# summer name and rules): ``EST5EDT``, ``<+0330>-3:30``, ``CET-1CEST,M3.5.0,M10.5.0/3``
_POSIX_RULE = re.compile(r"(?:[A-Za-z]{3,}|<[A-Za-z0-9+-]{3,}>)[+-]?\d{1,2}(?::\d{1,2}){0,2}")


def unknown_zone(value: str | None) -> bool:
    """Whether ``value`` (a ``TZ``) is set but names no zone: not a zone file (a name
    ``zoneinfo`` finds, or an absolute path), not a POSIX rule. Unset or empty is UTC
    by definition, not unknown."""
    if not value:
        return False
    name = value.removeprefix(":")
    if os.path.isabs(name):
        return not os.path.isfile(name)
    if _POSIX_RULE.match(name) is not None:
        return False
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return True
    return False


@functools.cache
def warn_unknown_zone(log: logging.Logger) -> bool:
    """Warn once (per logger) when the process's ``TZ`` names no zone; whether it did."""
    value = os.environ.get("TZ")
    if not unknown_zone(value):
        return False
    log.warning(
        "TZ=%r names no time zone: the C library reads it as UTC (local times and days "
        "are UTC's); set it to a zone such as Europe/Paris, or unset it",
        (value or "")[:60],
    )
    return True
