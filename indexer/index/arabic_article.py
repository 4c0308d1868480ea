"""An Arabic word is found with the article joined to it: ``بيانات`` (data) finds
``البيانات`` (the data), ``والبيانات`` (and the data), ``بالبيانات`` (with the data).

Arabic writes the article ``ال`` and the one-letter words before it (and, with, as,
so, for) as part of the next word, so the index holds ``البيانات`` as one word, and a
search for ``بيانات`` missed a third of a text's nouns. A query's Arabic word is
searched as itself or one of these spellings (an OR in FTS5: no prefix walk, and
nothing new in the index); a word typed with the article, a phrase and a prefix are
searched as written.
"""

from __future__ import annotations

import re

# The article, alone and after و (and), ب (with), ك (as), ف (so); ل (for) + ال is لل
ARTICLE_FORMS = ("ال", "وال", "بال", "كال", "فال", "لل")
# A word of Arabic letters only (as ``searchable`` leaves it: no vowel points), three at
# least (the short ones are words like من, في that the article never takes)
_ARABIC_WORD = re.compile("[\u0620-\u064a\u066e-\u066f\u0671-\u06d3\u06d5]{3,}")


def with_article(word: str) -> tuple[str, ...]:
    """The spellings of ``word`` with the article joined to it, or () when ``word`` is
    not one Arabic word, or starts with the article already."""
    if _ARABIC_WORD.fullmatch(word) is None or word.startswith(("ال", "لل")):
        return ()
    return tuple(form + word for form in ARTICLE_FORMS)


def without_article(word: str) -> str:
    """``word`` without the article joined to it (``والبيانات``: ``بيانات``), when three
    Arabic letters or more are left; else ``word``. For a question in natural language
    (recall): the notes may say the word with the article or without, and its bare form
    finds both (``with_article``)."""
    for form in sorted(ARTICLE_FORMS, key=len, reverse=True):
        rest = word[len(form) :]
        if word.startswith(form) and _ARABIC_WORD.fullmatch(rest) is not None:
            return rest
    return word
