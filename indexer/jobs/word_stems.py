"""Recall's lookup of a question's word in a vault of an inflecting language: its start.

Russian, Polish, Turkish, Finnish, German and their neighbours change a word's ending
with its case, number or person (``данные``, ``данных``, ``данными``; ``Entscheidung``,
``Entscheidungen``), and the index holds each form as its own word: a question asking
"о данных" missed the note that says "данные". Without a stemmer in the index (a schema
change), recall looks such a word up by its start: a word of five letters or more loses
its last letter, one of seven or more its last two, and the rest is searched as a prefix
(``данны*``, ``Entscheidun*``). Only in a vault whose lang is one of ``INFLECTING`` (the
vault's lang id says which language its notes are in); ``search`` stays exact.
"""

from __future__ import annotations

# Language subtags (``ru``, ``de-AT``: ``de``) whose words inflect at their end
INFLECTING = frozenset(
    "ru uk be bg mk sr hr bs sl cs sk pl lt lv et fi hu tr az kk ky uz tk tt ba de nl is ro"
    " sq el ka hy".split()
)
LEAST_LETTERS = 5  # a shorter word is looked up as it is


def inflects(lang: str) -> bool:
    """Whether the vault ``lang``'s words change their ending (``INFLECTING``)."""
    return lang.split("-", 1)[0].casefold() in INFLECTING


def looked_up(keyword: str) -> str:
    """``keyword`` as recall looks it up in an inflecting vault: a word of letters alone
    of ``LEAST_LETTERS`` or more as a prefix of its start (``данных``: ``данны*``); a
    phrase, a shorter word, a word with digits or marks as it is. An apostrophe inside
    a word is none of its letters (Ukrainian ``м'ясом``: ``м'ясо*``)."""
    letters = keyword.replace("'", "")
    if len(letters) < LEAST_LETTERS or not letters.isalpha() or keyword[0] == "'":
        return keyword
    cut = 2 if len(letters) >= 7 else 1
    start = keyword[:-cut]
    if start.endswith("'"):  # (a cut ending at the apostrophe: the letters before it)
        start = start[:-1]
    return start + "*"


def looked_up_all(lang: str, keywords: list[str]) -> list[str]:
    """The keywords as recall looks them up in the vault ``lang``."""
    if not inflects(lang):
        return keywords
    return [looked_up(keyword) for keyword in keywords]
