"""Numbers as the command lines and settings read them: ASCII digits only, as REST does.

Python's ``int`` and ``float`` take any script's decimal digits (``int("٣")`` is 3,
``float("１.５")`` 1.5), a sign, ``_`` between digits and spaces around; REST's query
numbers are ``-?[0-9]+`` (``indexer.web.params``). ``indexer search --limit ٣`` listed
three hits where ``GET .../search?limit=٣`` was refused: one rule for both, these.
"""

from __future__ import annotations

import re

_WHOLE = re.compile(r"-?[0-9]+")
_REAL = re.compile(r"-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
_MOST_DIGITS = 30  # past every range a number is checked against (int() stops at 4,300)

WHOLE_WORDS = "ASCII digits"
REAL_WORDS = "ASCII digits and '.'"


def whole(text: str) -> int | None:
    """The whole number ``text`` is written as (``-?[0-9]+``), else None; one of more
    than 30 digits reads as ±10**30, past any range it is checked against."""
    if not _WHOLE.fullmatch(text):
        return None
    digits = text.lstrip("-").lstrip("0")
    if len(digits) > _MOST_DIGITS:
        return -(10**_MOST_DIGITS) if text.startswith("-") else 10**_MOST_DIGITS
    return int(text)


def real(text: str) -> float | None:
    """The number ``text`` is written as (``1``, ``0.5``, ``.5``, ``2e3``), else None:
    no ``inf``, ``nan``, ``_`` or digits of other scripts."""
    if not _REAL.fullmatch(text):
        return None
    return float(text)
