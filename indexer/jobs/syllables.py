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
  and before a consonant after a syllable whose end the script shows (``_closed``):
  ``ก็|กลับ``, ``เป็น|คน``, ``ดัง|กล่าว``, ``นำ|อย่าง``, ``ละ|คร``; where that cut
  falls inside a cluster whose first letter cannot end the syllable before (ห and อ,
  never finals; any first after a syllable that has its final or takes none), it moves
  before the cluster (``_leads_cluster``): ``ครอบ|ครัว``, ``ถึง|อย่าง``, ``ข้าง|หน้า``,
  ``ใน|กลุ่ม`` (not ``ปาก|รับ``: ก may be ปาก's final);
- Khmer: before a letter carrying a vowel sign, a sign or a stacked consonant (a bare
  consonant closes the syllable before it): ``ឆ្មា|ស៊ី``, ``ដេក|នៅ``, ``ពេល|ណា``,
  ``ការ|ងារ``; but a bare letter that ends no syllable but in rare loans (``ថ``, ``អ``)
  starts one after a syllable with its vowel: ``ពី|ថវិ|កា``.
- Myanmar: before every letter but a closing consonant (it carries the asat, ``်``):
  ``ကြောင်|ဘယ်|မှာ|အိပ်``.
"""

from __future__ import annotations

import re

from indexer.index.text import run_units
from shared.graphemes import continues

LEADING_VOWELS = frozenset("เแโใไເແໂໃໄ")
_ASAT = "\u103a"  # Myanmar: the consonant closing a syllable carries it
# Marks written on a syllable's last letter, not on its first (Thai thanthakhat, nikhahit
# and yamakkan, Lao's cancellation mark, Khmer's bantoc and toandakhiat)
_CLOSING_MARKS = frozenset("\u0e4c\u0e4d\u0e4e\u0ecc\u17cb\u17cd")
# Myanmar's vowel signs and medials: the asat beside one is part of the vowel (``တော်``)
_MYANMAR_VOWELS = re.compile("[\u102b-\u1036\u103b-\u103e]")
# Thai and Lao signs after which one consonant, and no more, ends the syllable: mai
# han-akat and Lao's mai kan and mai kon (``กัน``, ``ຝົນ``; ``ตัว``: ว ends the vowel), mai
# taikhu (``เป็น``)
_ONE_FINAL = frozenset("\u0e31\u0e47\u0eb1\u0ebb")
_MAI_TAIKHU = "\u0e47"
# Vowels that end their syllable: SARA A (``ละ``), SARA AM (``นำ``; its m is the final), Lao's
# niggahita (``ບໍ``)
_OPEN_ENDS = frozenset("ะำະຳ\u0ecd")
_VOWEL_O = frozenset("อອ")  # (after mai taikhu, a loan's vowel: ``ล็อก``)
_TONE_MARKS = frozenset("\u0e48\u0e49\u0e4a\u0e4b\u0ec8\u0ec9\u0eca\u0ecb")
_NO_FINAL = frozenset("ใไໃໄ")  # (leading vowels whose syllable takes no final)
# Thai and Lao vowel signs written above or below a consonant, and those of them after
# which ว is a final (``หิว``; ``ตัว``: ว is part of the vowel)
_VOWEL_SIGNS = frozenset(
    "\u0e31\u0e34\u0e35\u0e36\u0e37\u0e38\u0e39\u0e47\u0eb1\u0eb4\u0eb5\u0eb6\u0eb7\u0eb8\u0eb9\u0ebb"
)
_AFTER_VOWEL_SIGNS = _VOWEL_SIGNS - frozenset("\u0e31\u0eb1\u0ebb")
# Khmer letters that end a syllable only in rare Indic loans (the aspirates but ខ, a
# common final: ``មុខ``) or never (អ, a vowel's carrier)
_KHMER_INITIALS = frozenset("ឆឈឋឌឍថផអ")
# The first letters of a Thai initial cluster, by its second (true clusters and those
# written so: ``จริง``, ``สร้าง``, ``ฝรั่ง``, ``สวย``); Lao writes its own with ຫ
_CLUSTER_FIRSTS = {"ร": "กขคตทปพบดฟจซศสฝ", "ล": "กขคปพผบฟส", "ว": "กขคส"}
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
    units = run_units(stem)
    pieces: list[list[str]] = []
    for at, unit in enumerate(units):
        after = units[at + 1] if at + 1 < len(units) else ""
        if pieces and not _starts(unit, pieces[-1], after):
            pieces[-1].append(unit)
        elif pieces and _leads_cluster(pieces[-1], unit):
            pieces.append([pieces[-1].pop(), unit])
        else:
            pieces.append([unit])
    return pieces


def closes(unit: str) -> bool:
    """Whether ``unit`` (a character as the index pairs them) is the Myanmar consonant
    closing a syllable (``င်`` of ``ကြောင်``), not one starting it (``တော်``, whose asat
    is part of its vowel): half of a syllable, no pair or window starts on it."""
    return _ASAT in unit and _MYANMAR_VOWELS.search(unit) is None


def half(unit: str) -> bool:
    """Whether ``unit`` (a character as the index pairs them) only ends a syllable: a
    Myanmar closing consonant (``closes``), or a letter carrying a closing mark (``ស់``
    of ``ណាស់``, ``ร์``)."""
    return closes(unit) or any(char in _CLOSING_MARKS for char in unit)


def bare(piece: str) -> bool:
    """Whether ``piece`` is one letter and nothing of a vowel or tone on it (a bare
    consonant, or one carrying only a closing mark): never sought alone, it walks every
    bigram it starts and means nothing. One letter with its vowel signs, medials or tone
    marks is a syllable, often a word (``ခွေး``, dog; ``စား``, eat; ``ស៊ី``; ``ดู``)."""
    letters = [char for char in piece if not continues(char)]
    signs = [c for c in piece if continues(c) and c not in _CLOSING_MARKS and c != _ASAT]
    return len(letters) < 2 and not signs


def _starts(unit: str, piece: list[str], after: str) -> bool:
    """Whether ``unit`` (a character as the index pairs them) starts a syllable after
    the units of ``piece``, ``after`` coming next."""
    first = unit[0]
    if "\u1000" <= first <= "\u109f":  # Myanmar
        return not closes(unit)
    if first in LEADING_VOWELS or "\u17a3" <= first <= "\u17b3":  # (Khmer's vowel letters)
        return True
    if piece[-1] in LEADING_VOWELS:
        return False
    if _consonant(first) and _closed(piece, first) and not _silent(unit, after):
        return True
    marked = any(continues(char) and char not in _CLOSING_MARKS for char in unit[1:])
    return marked and not _second_of_cluster(first, piece)


def _closed(piece: list[str], next_letter: str) -> bool:
    """Whether the Thai or Lao syllable ending ``piece`` shows it is whole: its vowel
    ends it (``_OPEN_ENDS``), or its one final consonant came after a sign that takes
    one (``_ONE_FINAL``), or it is a consonant with mai taikhu alone (``ก็``: one
    before ``อ`` is a loan's, ``ล็อก``)."""
    last = piece[-1]
    if not _OPEN_ENDS.isdisjoint(last):  # (a tone mark may follow: ``ບໍ່``)
        return True
    if len(piece) == 1 and last[-1] == _MAI_TAIKHU:
        return next_letter not in _VOWEL_O
    if len(last) != 1 or not _consonant(last) or len(piece) < 2:
        return False
    if not _ONE_FINAL.isdisjoint(piece[-2]):
        return not (last in _VOWEL_O and _MAI_TAIKHU in piece[-2])  # (its vowel: ``ล็อ``)
    return len(piece) > 2 and piece[-2] in _VOWEL_O and _MAI_TAIKHU in piece[-3]


def _silent(unit: str, after: str) -> bool:
    """Whether ``unit`` carries a closing mark or comes before one that does: a silent
    letter of the syllable before (``จันทร์``, ``สัตว์``)."""
    return half(unit) or half(after)


def _toned(unit: str) -> bool:
    """Whether ``unit`` is a Thai or Lao consonant with no vowel sign, only tone marks."""
    return _consonant(unit[0]) and all(char in _TONE_MARKS for char in unit[1:])


def _consonant(char: str) -> bool:
    return "\u0e01" <= char <= "\u0e2e" or "\u0e81" <= char <= "\u0eae" or char in "ໜໝໞໟ"


def _leads_cluster(piece: list[str], unit: str) -> bool:
    """Whether the bare consonant ending ``piece`` starts, with ``unit`` (a consonant
    carrying a vowel or tone), a syllable rather than ending the one before: a Khmer
    letter that ends no syllable but in rare loans (``អំ|ពី|ថវិ|កា``; ``ពេល|ណា``, ល is a
    final), ห, never a final (``ข้าง|หน้า``), อ where the syllable before has
    its vowel (``ถึง|อย่าง``; ``ขอ|ยืม``: อ is the vowel), or any first of a cluster where
    the syllable before is whole (``ครอบ|ครัว``, ``ใน|กลุ่ม``; ``ปาก|รับ`` stays: ก may
    be its final)."""
    first, rest = piece[-1], piece[:-1]
    if not rest or len(first) != 1:
        return False
    if first in _KHMER_INITIALS:  # (after a syllable with its vowel: ``រ|ថ`` of ``រថ`` stays)
        return "\u1780" <= unit[0] <= "\u17a2" and any(len(u) > 1 for u in rest)
    if not _clusters(first, unit[0]):
        return False
    if first in "หຫ":
        return True
    if first in _VOWEL_O:
        return _vowel_seen(rest)
    return _whole(rest)


def _clusters(first: str, second: str) -> bool:
    """Whether ``first`` then ``second`` is a Thai or Lao initial cluster."""
    return first in _CLUSTER_FIRSTS.get(second, "") or second in _CLUSTER_SECONDS.get(first, ())


def _vowel_seen(rest: list[str]) -> bool:
    """Whether the last syllable of ``rest`` (a piece's first units) has its vowel, so
    that an ``อ`` after it is no vowel of its own but a consonant."""
    last = rest[-1]
    if last in _VOWEL_O:  # (the vowel: ``ขอ``, ``เพื่อ``)
        return len(rest) > 1
    if rest[0] in LEADING_VOWELS and rest[0] not in "เເ" and all(map(_toned, rest[1:])):
        return True  # (``แต่``, ``โต``; เ-อ is a vowel: ``เธอ``)
    return "\u0e37" not in last and (
        not _VOWEL_SIGNS.isdisjoint(last) or _whole(rest)
    )  # (ื: ``มือ``)


def _whole(rest: list[str]) -> bool:
    """Whether the last syllable of ``rest`` (a piece's first units) can take no more:
    its vowel takes no final (ไ, ใ, เ-า) or its final is written: a bare consonant after
    a vowel (``ครอบ``, ``ถึง``, ``ผม``), not one after a leading vowel (``เทศ``: ท is
    the initial) nor ย or ว written as part of the vowel (``เรีย``, ``ตัว``), or a letter
    with a closing mark (``ศาสตร์``)."""
    last = rest[-1]
    if rest[0] in _NO_FINAL and all(map(_toned, rest[1:])):
        return True  # (``ใน``, ``ไม่``, ``ไกล``)
    if rest[0] in "เເ" and last in "าາ" and all(map(_toned, rest[1:-1])):
        return True  # (เ-า: ``เจ้า``)
    if not _CLOSING_MARKS.isdisjoint(last):
        return True
    if len(last) != 1 or not _consonant(last) or last in _VOWEL_O or len(rest) < 2:
        return False
    before = rest[-2]
    if before in LEADING_VOWELS or (_clusters(before, last) and len(rest) == 2):
        return False  # (``หน`` of ``หนด``: the initial)
    if before == last == "ร":  # (ร หัน, a vowel before a final: ``พรรค``)
        return False
    if last in "ยຍ":
        return "\u0e35" not in before  # (เ-ีย)
    if last in "วວ":
        return before in "าາ" or not _AFTER_VOWEL_SIGNS.isdisjoint(before) or before in "ยຍ"
    return True


def _second_of_cluster(first: str, piece: list[str]) -> bool:
    """Whether ``first`` is the second consonant of an initial cluster whose first,
    bare, is all of ``piece`` (after a vowel written before it)."""
    initial = piece[1:] if piece[0] in LEADING_VOWELS else piece
    if len(initial) != 1 or len(initial[0]) != 1:
        return False
    return first in _CLUSTER_SECONDS[_ANY] or first in _CLUSTER_SECONDS.get(initial[0], ())
