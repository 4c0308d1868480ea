"""The query's keywords as the user typed them, for the words a recall block names.

Keywords are folded as search reads them (``Lucía`` is ``lucía``, ``O’Brien’s`` is
``brien's``, ``İstanbul`` is ``istanbul``); a reader of the block's heading asked with
their own capitals and apostrophes. Each keyword is looked for in the query, folded the
same way a character at a time (so a span maps back to what was written even where
folding changes a length), a whole word first, without the invisible format characters
search drops (a bidi control, a variation selector); one not found there (an article
cut off) is shown as search reads it.
"""

from __future__ import annotations

import unicodedata

from indexer.canonical import composed
from shared.reader_folds import FORMAT_RUNS, OPTIONAL_MARKS


def _folded(char: str) -> str:
    """One character as ``keywords`` folds it: small letters, apostrophes one, the
    Turkish dotted capital ``İ`` a plain ``i``, a full-width form its letter; Arabic and
    Hebrew points and invisible format characters nothing."""
    if char == "İ":
        return "i"
    if OPTIONAL_MARKS.fullmatch(char) or FORMAT_RUNS.fullmatch(char):
        return ""
    if "\uff01" <= char <= "\uffef":
        char = unicodedata.normalize("NFKC", char)
    return char.lower().replace("’", "'").replace("ʼ", "'")


def typed_words(query: str, keywords: list[str]) -> list[str]:
    """``keywords`` as ``query`` writes them (a quoted phrase is kept as it is: it holds
    its own letters); each spelling once."""
    query = composed(query)  # (as keywords read it)
    folded: list[str] = []
    origin: list[int] = []  # the query's index of each folded character
    for index, char in enumerate(query):
        for piece in _folded(char):
            folded.append(piece)
            origin.append(index)
    text = "".join(folded)
    shown = (
        keyword if keyword.startswith('"') else _written(query, text, origin, keyword)
        for keyword in keywords
    )
    return list(dict.fromkeys(shown))


def _written(query: str, text: str, origin: list[int], keyword: str) -> str:
    """The first span of ``query`` that folds to ``keyword``, a whole word before a part
    of one (a CJK keyword is a part of its run); else ``keyword``."""
    spans: list[tuple[int, int]] = []
    at = text.find(keyword)
    while at >= 0 and len(spans) < 100:
        end = at + len(keyword)
        whole_chars = (at == 0 or origin[at - 1] != origin[at]) and (
            end == len(text) or origin[end] != origin[end - 1]
        )
        if whole_chars:
            spans.append((at, end))
        at = text.find(keyword, at + 1)
    if not spans:
        return keyword

    def whole_word(span: tuple[int, int]) -> bool:
        before = text[span[0] - 1] if span[0] else " "
        after = text[span[1]] if span[1] < len(text) else " "
        return not before.isalnum() and not after.isalnum()

    start, end = next((span for span in spans if whole_word(span)), spans[0])
    return FORMAT_RUNS.sub("", query[origin[start] : origin[end - 1] + 1])  # (invisible)
