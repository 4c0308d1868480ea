"""A Thai, Lao, Khmer or Myanmar chunk cut where a syllable surely starts, for recall.

A question glues its words (``แมวกินอะไร``, what does the cat eat?; ``ကြောင်ဘယ်မှာ
အိပ်လဲ``, where does the cat sleep?), and a note says them apart, other words between.
The chunk's pairs and windows (``short_chunks``, ``keywords``) are pieces of two or four
characters wherever they fall: a word of three (``แมว``) or one between two others
(``အိပ်``) was no keyword of its own. Without a dictionary, the chunk is cut only where
its script marks a syllable's start (the pieces may hold several syllables: ``ฝนตก``
stays whole):

- Thai and Lao: before a vowel written before its consonant (``เ แ โ ใ ไ``), and before a
  consonant carrying a vowel sign or a tone mark, unless it is the second of an initial
  cluster (``ปล่อย``, ``เปลี่ยน``, ``หลับ``): ``แมว|กิน``, ``หมา|กัด``, ``ปลา|ว่าย``;
- Khmer: before a letter carrying a vowel sign, a sign or a stacked consonant (a bare
  consonant closes the syllable before it): ``ឆ្មា|ស៊ី``, ``ដេក|នៅ``;
- Myanmar: before every letter but a closing consonant (it carries the asat, ``်``):
  ``ကြောင်|ဘယ်|မှာ|အိပ်``.
"""

from __future__ import annotations

import re

from indexer.index.text import run_units
from shared.graphemes import continues

_LEADING_VOWELS = frozenset("เแโใไເແໂໃໄ")
# Marks written on a syllable's last letter, not on its first (Thai thanthakhat, nikhahit
# and yamakkan, Lao's cancellation mark, Khmer's bantoc and toandakhiat)
_CLOSING_MARKS = frozenset("\u0e4c\u0e4d\u0e4e\u0ecc\u17cb\u17cd")
_ASAT = "\u103a"  # Myanmar: the consonant closing a syllable carries it
# Myanmar's vowel signs and medials: the asat beside one is part of the vowel (``တော်``)
_MYANMAR_VOWELS = re.compile("[\u102b-\u1036\u103b-\u103e]")
# The second letter of an initial cluster, after the first (any first: ``_ANY``)
_ANY = ""
_CLUSTER_SECONDS = {
    _ANY: frozenset("รลวຣລວ"),
    "ห": frozenset("งญนมยรลว"),  # (ห leading a sonorant: หลับ, หมู)
    "ຫ": frozenset("ງຍນມລວຣ"),
    "อ": frozenset("ย"),  # (อย่า, อยู่)
}


def syllables(stem: str) -> list[list[str]]:
    """``stem`` cut where a syllable surely starts (see the module): each piece as its
    characters as the index pairs them (``run_units``)."""
    pieces: list[list[str]] = []
    for unit in run_units(stem):
        if pieces and not _starts(unit, pieces[-1]):
            pieces[-1].append(unit)
        else:
            pieces.append([unit])
    return pieces


def closes(unit: str) -> bool:
    """Whether ``unit`` (a character as the index pairs them) is the Myanmar consonant
    closing a syllable (``င်`` of ``ကြောင်``), not one starting it (``တော်``, whose asat
    is part of its vowel): half of a syllable, no pair or window starts on it."""
    return _ASAT in unit and _MYANMAR_VOWELS.search(unit) is None


def letters(piece: str) -> int:
    """How many letters ``piece`` holds (its marks apart): a piece of one is never sought
    alone (a lone Thai letter walks every bigram it starts; Myanmar's one-letter
    syllables are mostly particles, ``ကို``, ``မှာ``)."""
    return sum(not continues(char) for char in piece)


def _starts(unit: str, piece: list[str]) -> bool:
    """Whether ``unit`` (a character as the index pairs them) starts a syllable after
    the units of ``piece``."""
    first = unit[0]
    if "\u1000" <= first <= "\u109f":  # Myanmar
        return not closes(unit)
    if first in _LEADING_VOWELS or "\u17a3" <= first <= "\u17b3":  # (Khmer's vowel letters)
        return True
    if piece[-1] in _LEADING_VOWELS:
        return False
    marked = any(continues(char) and char not in _CLOSING_MARKS for char in unit[1:])
    return marked and not _second_of_cluster(first, piece)


def _second_of_cluster(first: str, piece: list[str]) -> bool:
    """Whether ``first`` is the second consonant of an initial cluster whose first,
    bare, is all of ``piece`` (after a vowel written before it)."""
    initial = piece[1:] if piece[0] in _LEADING_VOWELS else piece
    if len(initial) != 1 or len(initial[0]) != 1:
        return False
    return first in _CLUSTER_SECONDS[_ANY] or first in _CLUSTER_SECONDS.get(initial[0], ())
