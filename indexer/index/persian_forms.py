"""A Persian word is found with its plural and its verb prefix joined to it: ``داده``
(data) finds ``داده‌ها`` (the data, plural), ``داده‌های``, and ``خواهیم`` (we will) finds
``می‌خواهیم`` (we want).

Persian joins the plural ``ها`` (``های``, ``هایی`` with the ezafe or an indefinite ``ی``)
to a noun, and ``می``/``نمی`` to a verb, with a zero-width non-joiner that search does not
read (``داده‌ها`` is indexed as ``دادهها``, as many type it): the index holds one word, and
``داده`` missed every plural. A query's word of three Arabic-script letters or more is
searched as itself or with these joined to it (an OR in FTS5, as ``arabic_article``
adds the Arabic article: nothing new in the index; ``ها`` is also Arabic's "her", a form
of the same word there). A word typed with them is searched as written; a phrase and a
prefix too. For recall, a question's plural loses its ``ها`` (``without_plural``).
"""

from __future__ import annotations

import re

# As ``searchable`` reads them (its yeh is the Arabic ي): the plural, with the ezafe or
# the indefinite yeh, and the verb's present and negated prefixes
SUFFIXES = ("ها", "هاي", "هايي")
PREFIXES = ("مي", "نمي")
# A word of Arabic-script letters only (no points), three at least
_WORD = re.compile("[\u0620-\u064a\u066e-\u066f\u0671-\u06d3\u06d5]{3,}")
# The plural at a word's end as typed: after a non-joiner or not, with either yeh
_PLURAL = re.compile("\u200c?ها[\u064a\u06cc]{0,2}$")


def with_affixes(word: str) -> tuple[str, ...]:
    """The spellings of ``word`` with the plural or a verb prefix joined to it, or ()
    when ``word`` is not one Arabic-script word of three letters or more; one typed with
    them gains no more of the same."""
    if _WORD.fullmatch(word) is None:
        return ()
    plural = () if word.endswith(SUFFIXES) else tuple(word + suffix for suffix in SUFFIXES)
    verb = () if word.startswith(PREFIXES) else tuple(prefix + word for prefix in PREFIXES)
    return plural + verb


def without_plural(word: str) -> str:
    """``word`` without the plural joined to it (``داده‌ها``, ``دادههای``: ``داده``) when
    three letters or more are left; else ``word``. For a question in natural language
    (recall), as typed (a non-joiner, a Persian yeh): the bare word finds its plural
    too (``with_affixes``)."""
    plural = _PLURAL.search(word)
    if plural is None or _WORD.fullmatch(word[: plural.start()]) is None:
        return word
    return word[: plural.start()]
