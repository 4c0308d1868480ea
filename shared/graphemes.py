"""Cutting text where a character as a reader sees it ends, near enough (no Unicode
segmentation library): never between a letter and its marks, inside an emoji sequence
(joiner, variation selector, skin tone, tag), inside an Indic conjunct (a virama and the
letter after it), between the two halves of a flag, after a prepended mark (the Arabic
number sign before its digits) or before a half-width kana's voicing mark."""

from __future__ import annotations

import unicodedata

_ZWJ = "\u200d"
# Signs of combining class 9 (virama) that are shown and join nothing to what follows
_VISIBLE_KILLERS = frozenset("\u103a\u0e3a")
_REGIONAL, _REGIONAL_LAST = 0x1F1E6, 0x1F1FF
# Unicode's Prepend characters (GraphemeBreakProperty): one cluster with what follows.
_PREPEND = frozenset(
    (
        *range(0x0600, 0x0606), 0x06DD, 0x070F, 0x0890, 0x0891, 0x08E2, 0x0D4E, 0x110BD,
        0x110CD, 0x111C2, 0x111C3, 0x1193F, 0x11941, 0x11A3A, *range(0x11A84, 0x11A8A),
        0x11D46, 0x11F02,
    )
)  # fmt: skip


def continues(char: str) -> bool:
    """A character that belongs to the one before it."""
    code = ord(char)
    return (
        unicodedata.category(char) in ("Mn", "Mc", "Me")
        or char in (_ZWJ, "\u200c")  # joiners (a ZWNJ is Extend too)
        or code in (0xFF9E, 0xFF9F)  # half-width kana's voicing marks: ｶﾞ is one
        or 0xFE00 <= code <= 0xFE0F  # variation selectors
        or 0x1F3FB <= code <= 0x1F3FF  # skin tones
        or 0xE0020 <= code <= 0xE007F  # tags (subdivision flags)
        or code == 0x20E3  # the keycap of 1️⃣
        or 0x1160 <= code <= 0x11FF  # a Hangul syllable's vowel and final jamo
        or 0xD7B0 <= code <= 0xD7FB  # (and their extended ones)
        or code in (0x0E33, 0x0EB3)  # Thai SARA AM, Lao AM: letters (Lo), but Unicode's
        # clusters keep them with the consonant before (SpacingMark): น้ำ is one
    )


def unmarked(text: str) -> str:
    """``text`` without what opens it that belongs to a character before it (a mark, a
    joiner, a selector, a half-width voicing mark): a piece cut out of a run may open
    with one, and a keyword that does is a mark hanging on nothing."""
    start = 0
    while start < len(text) and continues(text[start]):
        start += 1
    return text[start:]


def character_start(text: str, end: int, least: int = 0) -> int:
    """``end``, moved back to where a character as seen starts (see the module); never
    before ``least`` (a bound on the walk back over a run of marks)."""
    while least < end < len(text) and _inside(text, end):
        end -= 1
    flags = 0
    while flags < end - least and _REGIONAL <= ord(text[end - 1 - flags]) <= _REGIONAL_LAST:
        flags += 1
    return end - flags % 2


def character_end(text: str, at: int, most: int | None = None) -> int:
    """``at``, moved on to where the character as seen that holds it ends (a mark after
    a highlighted word is the word's last letter's: ``الطالبُ``, ``กรุงเทพ``); never past
    ``most``. One walk forward (from each place back, a run of marks was quadratic)."""
    limit = len(text) if most is None else min(most, len(text))
    while 0 < at < limit and _inside(text, at):
        at += 1
    flag = 0 < at < limit and _REGIONAL <= ord(text[at]) <= _REGIONAL_LAST
    if flag and character_start(text, at, max(0, at - 64)) != at:  # (a flag's second)
        at += 1
    return at


def _inside(text: str, at: int) -> bool:
    """Whether ``at`` (0 < at < len) is inside a character as seen, flags apart (a ZWJ
    joins what follows it unless a space, a punctuation mark or a control: Malayalam's
    ``ന്‍`` ends its word)."""
    return (
        continues(text[at])
        or (text[at - 1] == _ZWJ and unicodedata.category(text[at])[0] not in "ZPC")
        or ord(text[at - 1]) in _PREPEND
        or _after_virama(text, at)
        or _after_leading_jamo(text, at)
    )


def _after_leading_jamo(text: str, end: int) -> bool:
    """A leading Hangul jamo and the jamo or syllable after it are one syllable as seen
    (``ᄀ`` + ``가``): no cut between them."""
    after = ord(text[end])
    return _leading_jamo(ord(text[end - 1])) and (_leading_jamo(after) or 0xAC00 <= after <= 0xD7A3)


def _leading_jamo(code: int) -> bool:
    return 0x1100 <= code <= 0x115F or 0xA960 <= code <= 0xA97C


def _after_virama(text: str, end: int) -> bool:
    """A letter after a virama (``स्`` + ``त``) is one conjunct with it in Devanagari and
    the other Indic scripts: no cut between them. A visible killer ends its syllable
    (Myanmar's asat, Thai's phinthu: ``မြန်မာ`` is ``မြန်`` + ``မာ``); Myanmar stacks
    with U+1039."""
    before = text[end - 1]
    return (
        unicodedata.combining(before) == 9
        and before not in _VISIBLE_KILLERS
        and unicodedata.category(text[end]) == "Lo"
    )


def cut_chars(text: str, limit: int, suffix: str = "") -> str:
    """``text`` within ``limit`` characters, cut where a character as seen ends, with
    ``suffix`` (counted in the limit) after a cut."""
    if len(text) <= limit:
        return text
    return text[: character_start(text, max(0, limit - len(suffix)))].rstrip() + suffix
