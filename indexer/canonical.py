"""Texts composed (NFC) at the cost of what they change, for search and grep alike.

``stream_safe``: a text whose normalizing takes linear time. ``is_nfc``: whether a text
is NFC, at the cost of a regex scan (2 us/KB): ``unicodedata.is_normalized`` normalizes
a whole text once it holds one character that may compose with the one before it (NFC_QC
"Maybe"), as every Bengali, Tamil, Malayalam or Kannada text does (their vowel sign AA,
which ``ে`` and ``া`` make ``ো`` with): it read a Bengali note at 25-30 us/KB to learn it
was NFC, 60 times grep's match of it.

A text is NFC when it holds no character NFC replaces (a decomposable letter that does
not stay composed, as U+212B, or one excluded from composition, as ``क़``), no pair that
composes (``e`` and U+0301, ``ে`` and ``া``, a Hangul leading consonant and vowel, a
syllable without a final consonant and one), and no combining mark after another or after
a letter that ends in one (their order NFC may change: those texts, few, are checked by
``is_normalized``).
"""

from __future__ import annotations

import functools
import unicodedata

import re2

_PLANES = 0x30000  # (every character with a decomposition or a combining class is below)
# A run of more combining marks than a reader's text ever has (UAX #15's stream-safe
# format cuts runs at 30): NFC and NFKC put a run in order by an insertion sort, whose
# time grows with the square of its length (120 KB of marks took 4.5 s, holding the GIL).
# (The halfwidth sound marks are letters that NFKC makes marks.)
_MARK_RUN_CUT = 30


def composed(text: str) -> str:
    """``text`` in NFC, in linear time (``stream_safe``), itself when it is NFC."""
    return text if is_nfc(text) else unicodedata.normalize("NFC", stream_safe(text))


def is_nfc(text: str) -> bool:
    """``unicodedata.is_normalized("NFC", text)``, the same answer."""
    if text.isascii():
        return True
    if _may_change().search(text) is None:
        return True
    return unicodedata.is_normalized("NFC", text)


def warm() -> None:
    """Build the patterns now (``text.build_tables``): 0.1 s, once."""
    _may_change()
    _long_mark_run()


@functools.cache
def _long_mark_run() -> re2._Regexp:
    """A run of more than ``_MARK_RUN_CUT`` marks (RE2's program for it: 10 ms of every
    start, were it compiled at import)."""
    return re2.compile(rf"[\pM\x{{ff9e}}\x{{ff9f}}]{{{_MARK_RUN_CUT + 1},}}")


def stream_safe(text: str) -> str:
    """``text`` with a combining grapheme joiner (U+034F, which nothing is reordered
    across) after every 30 marks of a longer run, so that normalizing it is linear."""
    if text.isascii() or _long_mark_run().search(text) is None:
        return text
    parts, last = [], 0
    for found in _long_mark_run().finditer(text):
        start, end = found.span()
        run = text[start:end]
        cut = [run[at : at + _MARK_RUN_CUT] for at in range(0, len(run), _MARK_RUN_CUT)]
        parts += [text[last:start], "\u034f".join(cut)]
        last = end
    parts.append(text[last:])
    return "".join(parts)


@functools.cache
def _may_change() -> re2._Regexp:
    """What NFC may change: a character it replaces, a pair it composes, two marks."""
    replaced: list[int] = []
    firsts: dict[str, list[int]] = {}
    marks: list[int] = []
    marked: list[int] = []  # (letters ending in a mark: ``ṥ`` then U+0327 is reordered)
    for code in range(0x80, _PLANES):
        char = chr(code)
        if unicodedata.combining(char):
            marks.append(code)
        if unicodedata.normalize("NFC", char) != char:
            replaced.append(code)
            continue
        decomposed = unicodedata.normalize("NFD", char)
        if unicodedata.combining(decomposed[-1]):
            marked.append(code)
        if len(decomposed) > 1:
            first = unicodedata.normalize("NFC", decomposed[:-1])
            if len(first) == 1:  # (``ḗ``: ``ē`` and U+0301, and ``ē`` composes)
                firsts.setdefault(decomposed[-1], []).append(ord(first))
    parts = [re2_class(replaced), f"{re2_class(sorted(set(marks + marked)))}{re2_class(marks)}"]
    for second, first_codes in sorted(firsts.items()):
        parts.append(f"{re2_class(sorted(set(first_codes)))}\\x{{{ord(second):x}}}")
    parts.append(r"[\x{1100}-\x{1112}][\x{1161}-\x{1175}]")
    lv = [code for code in range(0xAC00, 0xD7A4) if (code - 0xAC00) % 28 == 0]
    parts.append(f"{re2_class(lv)}[\\x{{11a8}}-\\x{{11c2}}]")
    return re2.compile("|".join(parts))


def re2_class(codes: list[int]) -> str:
    """``codes`` (sorted) as an RE2 class of ranges (``nfkc``'s too)."""
    out: list[str] = []
    start = previous = codes[0]
    for code in [*codes[1:], -1]:
        if code == previous + 1:
            previous = code
            continue
        out.append(f"\\x{{{start:x}}}" + (f"-\\x{{{previous:x}}}" if previous > start else ""))
        start = previous = code
    return "[" + "".join(out) + "]"
