"""A number sought as its digits are grouped too: ``85000`` finds ``85,000``, ``85.000``,
``85 000`` (a narrow no-break space, as French writes it), ``85'000`` (Swiss) and
``٨٥٬٠٠٠``; ``123456`` finds Indian ``1,23,456`` as well as ``123,456``; and ``85,000``
finds ``85000``. A sign or punctuation on the number is a word break to the index, so
``$85000``, ``85,000?`` and ``(85000)`` are sought so too (``number_spellings``).

The index reads a separator between digits as a word break (``85,000`` is the words
``85`` and ``000``), so each grouping is the phrase of its groups, asked beside the
number: no schema change, nothing new kept. The phrase finds the groups apart by any
separator (``85-000`` too) and the decimal ``85.000`` of a text that writes its point
so, as the word ``85,000`` of a query always did; a phrase in quotes is as written.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from shared.reader_folds import DIGIT_FOLDS

# A number worth grouping: 5 digits or more (``10,000``), no leading zero (a code,
# ``0850``, is never grouped); up to ``_MOST_DIGITS`` (each grouping is one more phrase).
# Not 4: a year (``2024``) would be the phrase ``2 024`` too, which reads the one-digit
# word's matches (a year's search 0.9 -> 1.9 ms at 10,000 notes, 21 ms where ``2`` is
# everywhere) and finds ranges and chapters (``1500`` found ``1-500``); ``1,500`` still
# finds ``1500``.
_MOST_DIGITS = 24
_NUMBER = re.compile(rf"[1-9][0-9]{{4,{_MOST_DIGITS - 1}}}")


# A number written in groups, one separator throughout: in thousands (``1,234,567``),
# or in the Indian lakh and crore (``12,34,567``)
_SEPARATOR = "([,.'\u2019\u066c])"
_GROUPED = re.compile(
    rf"[1-9][0-9]{{0,2}}{_SEPARATOR}[0-9]{{3}}(?:\1[0-9]{{3}})*"
    rf"|[1-9][0-9]?{_SEPARATOR}[0-9]{{2}}(?:\2[0-9]{{2}})*\2[0-9]{{3}}"
)


# What the index reads as a word break around a number: a currency sign, punctuation,
# a sign (``$85000``, ``85,000?``, ``(85000)``, ``-85000``, ``85.000,-``)
_AROUND = re.compile(r"^[\W_]+|[\W_]+$")


def number_spellings(word: str) -> tuple[str, ...]:
    """``grouped_spellings`` of the number ``word`` holds between signs and punctuation
    (a query's ``$85000`` or ``85,000?``: the index reads them as breaks, and found the
    number only as written there)."""
    return grouped_spellings(_AROUND.sub("", word))


def grouped_spellings(word: str) -> tuple[str, ...]:
    """The groupings of the number ``word`` (ASCII digits, as ``searchable`` leaves
    them) as the words of a phrase: in thousands (``1 234 567``), and in the Indian
    lakh and crore (``12 34 567``) when it differs. A number written in groups
    (``1,234,567``: the phrase of its groups already) is the bare number and its other
    grouping. None for any other word."""
    grouped = _GROUPED.fullmatch(word)
    if grouped is not None:
        bare = re.sub(r"[^0-9]", "", word)
        own = re.sub(r"[^0-9]+", " ", word)
        others = [s for s in grouped_spellings(bare) if s != own]
        return (bare, *others) if len(bare) <= _MOST_DIGITS else ()
    if _NUMBER.fullmatch(word) is None:
        return ()
    thousands = _groups(word, 3)
    indian = [*_groups(word[:-3], 2), word[-3:]] if len(word) > 3 else [word]
    return tuple(dict.fromkeys([" ".join(thousands), " ".join(indian)]))


def _groups(digits: str, size: int) -> list[str]:
    """``digits`` cut into groups of ``size`` from the right (the first may be shorter)."""
    head = len(digits) % size
    return ([digits[:head]] if head else []) + [
        digits[at : at + size] for at in range(head, len(digits), size)
    ]


# The spaces that group digits (no-break, narrow no-break, thin, figure): ``85 000``
# pasted from a French text is a number, not the words ``85`` and ``000``
_GROUP_SPACES = "\u00a0\u202f\u2009\u2007"
# Digits in any script apart by the grouping separators, not inside a word (a candidate:
# ``grouped_numbers`` keeps those ``_GROUPED`` reads as one number)
_WRITTEN = re.compile(rf"(?<![\w,.'\u2019\u066c])\d+(?:[,.'\u2019\u066c{_GROUP_SPACES}]\d+)+(?!\w)")
_ASCII_DIGITS = str.maketrans(DIGIT_FOLDS)
_SPACES_AS_COMMAS = str.maketrans(dict.fromkeys(_GROUP_SPACES, ","))


def grouped_numbers(text: str) -> Iterator[tuple[int, str]]:
    """Where each number written in groups in ``text`` starts (``85,000``, ``1,23,456``,
    ``٨٥٬٠٠٠``, ``85 000``), and the number (spaces between its groups as commas): a
    question's keyword each, whole (its groups alone, ``85`` and ``000``, found any note
    with an ``85`` and none with ``85000``)."""
    for found in _WRITTEN.finditer(text):
        number = found.group().translate(_SPACES_AS_COMMAS)
        if _GROUPED.fullmatch(number.translate(_ASCII_DIGITS)) is not None:
            yield found.start(), number


def space_grouped_joined(text: str) -> str:
    """``text`` (a query) with each number grouped by no-break or thin spaces
    (``85 000``) written with commas, one word: the query's words part at those spaces."""
    if not any(space in text for space in _GROUP_SPACES):
        return text
    out, last = [], 0
    for start, number in grouped_numbers(text):
        out += [text[last:start], number]
        last = start + len(number)
    return "".join([*out, text[last:]])
