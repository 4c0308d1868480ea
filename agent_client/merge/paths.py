"""Where a knowledge note goes, and when two titles name the same note.

A new note for an entry is ``items/<slug>.md`` (the rule ``prompts/vault_spec.md`` gives
the model); titles are compared by ``title_key``, so case, punctuation and spacing do
not make two notes of one topic. Two titles can share a slug ("C++ templates" and "C#
templates"): the second note then goes to ``<slug>-2.md`` (``merge.fallback``).

A slug is always a name the server accepts: words of any script (their combining marks
kept, so Devanagari or Thai are not cut into consonants), without the invisible
characters that spell nothing where they are (``shared.invisible``), never a Windows
device name, never too long in UTF-8 bytes, never starting or ending with a dot or a
space.
"""

from __future__ import annotations

import functools
import posixpath
import re
import unicodedata

from shared.filetypes import DEVICE_NAMES
from shared.graphemes import character_start
from shared.invisible import spelled
from shared.reader_folds import (
    ARABIC_FOLDS,
    DIGIT_FOLDS,
    FORMAT_RUNS,
    GREEK_BASES,
    LETTER_FOLDS,
    OPTIONAL_MARKS,
)
from shared.workspace import ITEMS_DIR

MAX_SLUG_CHARS = 80
# The server refuses a segment over 255 UTF-8 bytes; the note's ``<slug>.md.assets``
# folder adds 10, so 200 leaves room (80 characters of a 4-byte script are 320 bytes).
MAX_SLUG_BYTES = 200
# Zero-width (non-)joiners are spelling inside Persian and Indic words; the server
# accepts them, and only them, of the invisible format characters.
_JOINERS = "\u200c\u200d"
_VOWELS_BEFORE = "\u0e40\u0e41\u0e42\u0e43\u0e44\u0ec0\u0ec1\u0ec2\u0ec3\u0ec4"  # เ แ โ ใ ไ
_ZWNJ_AFTER_ARABIC = re.compile("(?<=[\u0600-\u06ff\u0750-\u077f\ufb50-\ufdff])\u200c")


def _starts_word(char: str) -> bool:
    """A letter, digit or underscore (what ``\\w`` matches) begins or continues a word."""
    return char.isalnum() or char == "_"


def _continues_word(char: str) -> bool:
    """Combining marks (vowel signs, viramas, accents) and joiners belong to the letter
    before them: ``\\w`` alone would split "हिन्दी" into "ह-न-द"."""
    return _starts_word(char) or char in _JOINERS or unicodedata.category(char).startswith("M")


def words(text: str) -> list[str]:
    """The words of ``text``: runs of letters and digits with their marks and joiners
    (a mark or joiner with no letter before it is dropped; no word ends with a joiner)."""
    found: list[str] = []
    current = ""
    for char in [*text, " "]:  # the trailing space ends the last word
        if _starts_word(char) or (current and _continues_word(char)):
            current += char
        elif current:
            found.append(current.rstrip(_JOINERS))
            current = ""
    return found


def _cut(slug: str) -> str:
    """``slug`` within ``MAX_SLUG_CHARS`` and ``MAX_SLUG_BYTES``, never cutting a
    character as seen (a cut inside a cluster drops the whole cluster: a letter's marks,
    an Indic conjunct, ``क्ष`` not ``क्``), nor leaving a Thai or Lao vowel written before
    its consonant without it (``เ``)."""
    end = min(len(slug), MAX_SLUG_CHARS)
    while end > 0 and len(slug[:end].encode("utf-8")) > MAX_SLUG_BYTES:
        end -= 1
    if end < len(slug):
        end = character_start(slug, end)
        while end > 0 and slug[end - 1] in _VOWELS_BEFORE:
            end -= 1
    return slug[:end].rstrip(_JOINERS).strip("-_")


def slugify(title: str) -> str:
    """``"Past tense of 'go'"`` -> ``"past-tense-of-go"``; letters of any script are kept.

    The title as a reader takes it (``as_read``: ``ＡＢＣ`` is ``abc``, ``كَتَبَ`` is
    ``كتب``, ``data\u200bbase`` is ``database``), so titles with one key get one name
    even when two writers make the note at once. A name that folds to a device name
    ("ＣＯＮ", "COM¹": Windows refuses the superscripts too) is kept off those as well.
    """
    text = spelled(as_read(title).lower())
    slug = unicodedata.normalize("NFC", _cut("-".join(words(text)).strip("-_")))
    slug = spelled(slug).rstrip(_JOINERS).strip("-_") or "note"  # what a cut left alone
    if unicodedata.normalize("NFKC", slug).upper() in DEVICE_NAMES:
        slug += "-note"  # "con.md" is refused by the server: a device name on Windows
    return slug


# Compatibility forms a reader takes for their plain letters (their decomposition's
# tag): full- and half-width, styled (mathematical ``𝐀``), Arabic presentation forms.
# Not superscripts or subscripts (``10²`` is not ``102``), fractions or circled numbers,
# nor the compatibility letters that are spelling (Thai ``ำ``: NFKC rewrote it).
_PLAIN_FORMS = frozenset(
    ("<wide>", "<narrow>", "<font>", "<isolated>", "<initial>", "<medial>", "<final>")
)
_LIGATURES = range(0xFB00, 0xFB18)  # ``ﬁ``, ``ﬆ``, the Armenian ones: their letters
_DOTTED_I = str.maketrans({"İ": "I"})  # (lower() makes "i" and a combining dot of it)


@functools.cache
def _plain(char: str) -> str:
    tag = unicodedata.decomposition(char).split(" ", 1)[0]
    if tag in _PLAIN_FORMS or ord(char) in _LIGATURES:
        return unicodedata.normalize("NFKC", char)
    return char


def as_read(title: str) -> str:
    """``title`` as a reader (and search) takes it, letters kept as typed otherwise: NFC,
    compatibility forms as their plain letters (``_PLAIN_FORMS``), without the format
    characters that spell nothing inside a word (a zero-width space, a soft hyphen, a
    bidi mark: joiners stay) and without the vowel points Arabic and Hebrew may carry or
    not (harakat, tatweel, niqqud), ``İ`` as ``I``. Search reads these alike, and two
    titles it reads alike made two notes."""
    text = unicodedata.normalize("NFC", title)
    if text.isascii():
        return text
    text = unicodedata.normalize("NFC", "".join(map(_plain, text)))
    text = FORMAT_RUNS.sub(lambda run: "".join(c for c in run[0] if c in _JOINERS), text)
    return OPTIONAL_MARKS.sub("", text).translate(_DOTTED_I)


def note_path_for(title: str) -> str:
    """Where a new note for ``title`` goes."""
    return f"{ITEMS_DIR}/{slugify(title)}.md"


# Signs that name things ("C++", "C#", "AT&T", "100%", "@home"), unlike quotes, commas
# and dashes: a title key keeps them, so "C++ templates" and "C# templates" are two topics.
_NAMING_SIGNS = frozenset("#&@%+*/$")


def _in_key(char: str) -> bool:
    return _continues_word(char) or char in _NAMING_SIGNS or unicodedata.category(char)[0] == "S"


_DIGITS = str.maketrans(DIGIT_FOLDS)


def title_key(title: str) -> str:
    """A comparison key for titles: case, spacing and punctuation do not matter, nor what
    search reads alike (``as_read``; the Arabic letters a reader takes as one, the
    joiners, the letters search folds: ``ılık`` is ``ILIK``, ``Ёлка`` is ``Елка``,
    ``ΚΑΛΗΜΕΡΑ`` is ``Καλημέρα``, any script's digits: ``٢٠٢٤`` is ``2024``; a Persian
    ZWNJ is a space), but signs that are part of a name do (``_NAMING_SIGNS``,
    symbols), and so does the sign of a number ("-5 degrees" is not "5 degrees"). A
    title that is punctuation only ("?", "---") is its own key, so each such title is a
    topic of its own."""
    text = as_read(title).casefold()
    if not text.isascii():
        text = _ZWNJ_AFTER_ARABIC.sub(" ", text)  # (Persian's داده‌ها is typed داده ها too)
        text = text.translate(LETTER_FOLDS).translate(GREEK_BASES)  # (ı, ё, ß; accents)
        text = text.translate(_DIGITS)  # (٢٠٢٤ is 2024)
        text = "".join(ARABIC_FOLDS.get(c, c) for c in text if c not in _JOINERS)
    kept = "".join(
        char if _in_key(char) or (char == "-" and _signs_number(text, i)) else " "
        for i, char in enumerate(text)
    )
    key = _joined_unspaced(unicodedata.normalize("NFC", " ".join(kept.split())))
    return key or unicodedata.normalize("NFC", " ".join(text.split()))


# Scripts written without spaces between words (Korean is spaced): a space typed between
# two of their letters (``東京 の天気``, ``สวัสดี ครับ``) names no other topic.
UNSPACED_SCRIPTS = (
    "CJK",
    "IDEOGRAPHIC",
    "HIRAGANA",
    "KATAKANA",
    "BOPOMOFO",
    "THAI",
    "LAO",
    "KHMER",
    "MYANMAR",
    "TIBETAN",
    "YI ",
)


def _unspaced_letter(char: str) -> bool:
    return not char.isascii() and unicodedata.name(char, "").startswith(UNSPACED_SCRIPTS)


def _joined_unspaced(key: str) -> str:
    """``key`` without the spaces between two letters of scripts written without them."""
    if key.isascii():
        return key
    words = key.split(" ")
    joined = words[0]
    for word in words[1:]:
        glued = bool(joined and word) and _unspaced_letter(joined[-1]) and _unspaced_letter(word[0])
        joined += word if glued else " " + word
    return joined


def _signs_number(text: str, i: int) -> bool:
    """Whether the ``-`` at ``text[i]`` is a number's sign: a digit follows it and it
    starts the title or a word ("-5", "from -3 to 4"; not the dash of "2026-11-01")."""
    return i + 1 < len(text) and text[i + 1].isdecimal() and (i == 0 or text[i - 1].isspace())


def as_the_vault_spells(path: str) -> str:
    """A model's path as the vault reads it (``./a.md``, ``a//b.md``, ``a/../b.md`` and
    NFD are harmless spellings there): what its guards and lists must compare."""
    return unicodedata.normalize("NFC", posixpath.normpath(path))
