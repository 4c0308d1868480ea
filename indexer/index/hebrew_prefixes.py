"""A Hebrew word is found with the one-letter words joined to it: ``נתונים`` (data)
finds ``הנתונים`` (the data), ``והנתונים`` (and the data), ``בנתונים`` (in data),
``שהנתונים`` (that the data).

Hebrew writes the article ``ה`` and the particles ``ו`` (and), ``ב`` (in), ``ל`` (to),
``מ`` (from), ``ש`` (that), ``כ`` (as) as part of the next word, often two of them
(``וה``, ``שב``, ``כש``), so the index holds ``הנתונים`` as one word. A query's Hebrew
word of three letters or more is searched as itself or one of these spellings (an OR
in FTS5, as ``arabic_article`` does for Arabic's article: nothing new in the index);
a phrase and a prefix are searched as written. A word typed with one of them is found
with more joined before it (``הנתונים``: ``והנתונים``), never without it: they are also
many words' own first letters (``הסבר``, explanation; ``מדבר``, desert), which only a
morphology tells apart. A question's word for recall loses its article (``without_the``)
when three letters or more are left (``הבית``: ``בית``): its bare form finds both, and a
word whose own first letter it was is still found (``החלטה``: ``חלטה`` is no word, and
finds ``החלטה``); two would not be searched with the prefixes, so ``הלך`` stays.
"""

from __future__ import annotations

import re

# The one-letter words, alone and in the pairs prose joins most (and + the, that + the,
# from + the, and + in/to/from/as/that, that + in/to/from, as + that)
PREFIXES = (
    "ה", "ו", "ב", "ל", "מ", "ש", "כ",
    "וה", "שה", "מה", "וב", "ול", "ומ", "וכ", "וש", "שב", "של", "שמ", "כש",
)  # fmt: skip
_LONGEST_FIRST = sorted(PREFIXES, key=len, reverse=True)  # (the pairs before their letters)
# A word of Hebrew letters only (as ``searchable`` leaves it: no points), three at least
_HEBREW_WORD = re.compile("[\u05d0-\u05ea]{3,}")
_WITH_THE = re.compile("(?:[וש]?ה)([\u05d0-\u05ea]{3,})")


def with_prefixes(word: str) -> tuple[str, ...]:
    """The spellings of ``word`` with a one-letter word (or two) joined to it, or ()
    when ``word`` is not one Hebrew word of three letters or more."""
    if _HEBREW_WORD.fullmatch(word) is None:
        return ()
    return tuple(prefix + word for prefix in PREFIXES)


def without_the(word: str) -> str:
    """``word`` without the article joined to it (``הנתונים``, ``והנתונים``: ``נתונים``)
    when three Hebrew letters or more are left; else ``word``. For a question in natural
    language (recall): its bare form finds the word with the article or without
    (``with_prefixes``), and a word typed with the article is still found."""
    bare = _WITH_THE.fullmatch(word)
    return word if bare is None else bare.group(1)


def without_particle(word: str) -> str | None:
    """``word`` without the one-letter word (or pair) joined before it (``לדנה``, to
    Dana: ``דנה``; ``ולדנה``: ``דנה``) when three Hebrew letters or more are left; None
    when it has none. Only for a word found nowhere as written (recall tries it then):
    the letter may be the word's own (``מספר``, number, is not ``ספר``, book)."""
    if _HEBREW_WORD.fullmatch(word) is None:
        return None
    for prefix in _LONGEST_FIRST:
        if word.startswith(prefix) and len(word) - len(prefix) >= 3:
            return word[len(prefix) :]
    return None
