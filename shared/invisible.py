"""Characters that show nothing themselves, allowed in a name only where they spell
something: a zero-width joiner inside an emoji sequence or a Persian word, a variation
selector after a character it varies, tags inside a subdivision flag. Letters that show
nothing anywhere (``INVISIBLE_LETTERS``) never are.

Elsewhere they only make a name that reads as another one beside it: ``go\\u200d.md``,
``café\\ufe0f.md`` and ``日本\\ufe0f.md`` look like ``go.md``, ``café.md`` and
``日本.md``. The indexer's ``names.check_char`` refuses the other format characters
whatever their place; these are checked here, in their context (``check_in_context``).
The agent client makes its slugs with ``spelled``, so that they pass.
"""

from __future__ import annotations

import unicodedata

from shared.errors import ForbiddenPathError

ZWNJ, ZWJ = "\u200c", "\u200d"
BLACK_FLAG = "\U0001f3f4"  # a subdivision flag: this, tags spelling the region, cancel tag
CANCEL_TAG = "\U000e007f"
MONGOLIAN_VOWEL_SEPARATOR = "\u180e"
# Letters that show nothing (a Hangul filler, Khmer's inherent vowels, the combining
# grapheme joiner): "g\u034fo.md" reads as "go.md" beside it.
INVISIBLE_LETTERS = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u3164\uffa0")
# What shows nothing on its own though it is no mark or format character: those letters
# and the braille blank.
SHOW_NOTHING = INVISIBLE_LETTERS | {"\u2800"}
# Format characters that show something (prepended concatenation marks: the Arabic
# number sign, the Syriac abbreviation mark...) or spell a word (the Mongolian vowel
# separator): allowed wherever they are.
VISIBLE_FORMAT = frozenset(
    "\u0600\u0601\u0602\u0603\u0604\u0605\u06dd\u070f\u0890\u0891\u08e2"
    "\U000110bd\U000110cd" + MONGOLIAN_VOWEL_SEPARATOR
)
# Scripts whose letters have standardized variants (StandardizedVariants.txt).
_VARIED_SCRIPTS = ("CJK", "MYANMAR", "MONGOLIAN", "PHAGS-PA", "MANICHAEAN", "EGYPTIAN")


def is_selector(char: str) -> bool:
    """A variation selector (U+FE00-FE0F, U+E0100-E01EF, Mongolian's free ones): it
    picks a glyph of the character before it and shows nothing of its own."""
    code = ord(char)
    return (
        0xFE00 <= code <= 0xFE0F
        or 0xE0100 <= code <= 0xE01EF
        or 0x180B <= code <= 0x180D
        or code == 0x180F
    )


def is_tag(char: str) -> bool:
    """A tag character (U+E0020-E007F): spelling a region in a subdivision flag."""
    return 0xE0020 <= ord(char) <= 0xE007F


def allowed_anywhere(char: str) -> bool:
    """Format characters ``check_char`` lets through, to be checked in context here."""
    return char in (ZWNJ, ZWJ) or char in VISIBLE_FORMAT or is_tag(char)


# Format characters a line of text needs in some scripts: the soft hyphen, and the marks
# that set the direction of a neutral character (left-to-right, right-to-left, Arabic).
_TEXT_MARKS = frozenset("\u00ad\u200e\u200f\u061c")


def hides_in_line(char: str) -> bool:
    """Whether ``char`` in a one-line text (a change's reason) hides or reorders what it
    shows: a control or line break, a lone surrogate, a bidi override, embedding or
    isolate (``\u202e`` turns what follows around), a zero-width space, a BOM..."""
    category = unicodedata.category(char)
    if category in ("Cc", "Cs", "Zl", "Zp"):  # (Cs: a lone surrogate is no text)
        return True
    return category == "Cf" and not (allowed_anywhere(char) or char in _TEXT_MARKS)


def check_in_context(segment: str) -> None:
    """Refuse a joiner, selector or tag that spells nothing where it stands."""
    for index, char in enumerate(segment):
        why = _unspelled(segment, index)
        if why is not None:
            raise ForbiddenPathError(
                f"the path contains U+{ord(char):04X}, {why}: the name would read as another"
            )


def spelled(text: str) -> str:
    """``text`` without the characters ``check_in_context`` would refuse (and without
    invisible letters): a slug made of it is a name the server takes."""
    text = "".join(char for char in text if char not in INVISIBLE_LETTERS)
    for _ in range(4):  # a dropped character can leave another one spelling nothing
        kept = "".join(c for i, c in enumerate(text) if _unspelled(text, i) is None)
        if kept == text:
            break
        text = kept
    return text


def _unspelled(text: str, index: int) -> str | None:
    """Why the character at ``index`` spells nothing there, or None."""
    char = text[index]
    before = text[index - 1] if index else ""
    after = text[index + 1 : index + 2]
    if char in (ZWNJ, ZWJ):
        if not before or before.isascii() or before.isspace() or after in ("", ".", " "):
            return "a joiner that joins nothing"
    elif is_selector(char):
        if not _varies(char, before, after):
            return "a variation selector that varies nothing"
    elif is_tag(char) and not _in_flag(text, index):
        return "a tag outside a flag"
    return None


def _varies(selector: str, before: str, after: str) -> bool:
    """Whether ``selector`` after ``before`` is a variation one can see."""
    if not before or before.isspace() or is_selector(before) or before in (ZWNJ, ZWJ):
        return False
    code = ord(selector)
    name = unicodedata.name(before, "")
    if 0x180B <= code <= 0x180F:  # Mongolian's own
        return name.startswith("MONGOLIAN")
    if code >= 0xE0100:  # ideographic variation sequences
        return "IDEOGRAPH" in name
    category = unicodedata.category(before)
    if code in (0xFE0E, 0xFE0F):  # text or emoji style: symbols, keycaps, ℹ
        return category[0] == "S" or before in "0123456789#*\u2139" or category == "No"
    return category[0] in "SN" or name.startswith(_VARIED_SCRIPTS)


def _in_flag(segment: str, index: int) -> bool:
    """Whether the tag at ``index`` belongs to 🏴 + tags + cancel tag."""
    start = index
    while start > 0 and is_tag(segment[start - 1]):
        start -= 1
    end = index
    while end + 1 < len(segment) and is_tag(segment[end + 1]):
        end += 1
    run = segment[start : end + 1]
    return (
        start > 0
        and segment[start - 1] == BLACK_FLAG
        and len(run) >= 2
        and run[-1] == CANCEL_TAG
        and CANCEL_TAG not in run[:-1]
    )
