"""grep's ``ignore_case`` and the Turkish ``İ`` and ``ı``, which RE2's case folding
leaves apart from ``i`` and ``I``.

RE2 folds case by Unicode's simple case folding, which has every one-letter case pair
of every script but these two: the dotted capital ``İ`` (U+0130, whose lower case is
``i`` plus a dot above) and the dotless ``ı`` (U+0131, whose capital is ``I``), so
``istanbul`` missed ``İstanbul`` and ``ılık`` missed ``ILIK``. With ``ignore_case`` (or
a pattern starting ``(?i)``) the four letters ``i I İ ı`` are one letter, as search
reads them (``İ`` and ``ı`` are ``i`` there): a line matches when the pattern matches
it, or when the pattern and the line with ``İ`` and ``ı`` written ``i`` match (each
letter replaced by one letter, so the lines stay the lines). The trigram table holds
``İ`` and ``ı`` as ``i`` already (``shared.reader_folds.CASE_FIXES``), so the index's
candidates hold such lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import re2

DOTTED_I = ("\u0130", "\u0131")
# An ``İ`` or ``ı`` at a range's end (``[ı-ž]``) stays: as ``i`` it would make another
# range (or none). So does a pattern that turns case folding off inside (``(?-i:İ)``).
_FOLDABLE = re.compile("(?<!-)[\u0130\u0131](?!-)")
_CASE_ON_AGAIN = re.compile(r"\(\?[imsU]*-[msU]*i")
_CASE_OFF_FIRST = re.compile(r"\(\?[msU]*i[imsU]*\)")


def folds_case(pattern: str) -> bool:
    """Whether a regex folds case throughout, as ``ignore_case`` does: ``(?i)...``."""
    return _CASE_OFF_FIRST.match(pattern) is not None


def fold_dotted_i(text: str) -> str:
    """``text`` with ``İ`` and ``ı`` as ``i`` (one letter for one)."""
    for letter in DOTTED_I:
        if letter in text:
            text = text.replace(letter, "i")
    return text


def has_dotted_i(text: str) -> bool:
    return DOTTED_I[0] in text or DOTTED_I[1] in text


@dataclass(frozen=True)
class DottedIMatcher:
    """The pattern as it reads a line with ``İ`` and ``ı`` folded: ``line`` for one
    line, ``text`` for a whole text (None: no whole-text check); ``always``: the pattern
    itself holds one of them, so every text is read folded too."""

    line: re2._Regexp
    text: re2._Regexp | None
    always: bool

    def applies(self, text: str) -> bool:
        return self.always or has_dotted_i(text)


def dotted_i_matcher(
    pattern: str, *, fixed: bool, options: re2.Options, whole_text: bool
) -> DottedIMatcher | None:
    """The folded reading of a case-insensitive ``pattern`` (compiled with ``options``),
    or None when it has none (it turns case folding off, or its folded form is no
    pattern)."""
    if fixed:
        folded = fold_dotted_i(pattern)
    elif _CASE_ON_AGAIN.search(pattern) is not None:
        return None
    else:
        folded = _FOLDABLE.sub("i", pattern)
    try:
        line = re2.compile(folded, options)
        text = re2.compile(folded if fixed else "(?m)" + folded, options) if whole_text else None
    except re2.error:
        return None
    return DottedIMatcher(line, text, folded != pattern)
