"""Thai's and Lao's vowel SARA AM is found in both its spellings: ``ำ`` (one letter, as
keyboards type it) and ``ํ`` + ``า`` (NIKHAHIT and SARA AA, as NFKC and some converters
write it), which look alike on screen.

NFC keeps the two apart, so the index holds what the note holds: ``น้ำ`` (water) and
``น้ํา`` were other words, and a search for one never found the other. A query's word
or phrase with either spelling is searched as itself or the other (an OR in FTS5, as
``arabic_article`` does for Arabic's article: nothing new in the index), and a
snippet marks whichever the note holds. A tone mark between NIKHAHIT and SARA AA
(``ํ้า``) is read as before SARA AM (``้ำ``), the order NFKC gives.
"""

from __future__ import annotations

import re

# (consonants, tone marks, SARA AM, NIKHAHIT, SARA AA) of Thai, then of Lao
_SCRIPTS = (
    ("\u0e01-\u0e2e", "\u0e48-\u0e4b", "\u0e33", "\u0e4d", "\u0e32"),
    ("\u0e81-\u0eae\u0edc-\u0edf", "\u0ec8-\u0ecb", "\u0eb3", "\u0ecd", "\u0eb2"),
)
# Each after its consonant (and tone mark): one a query starts on has none, and its
# NIKHAHIT would be a mark before the query's first letter, which search drops.
_JOIN = [
    (re.compile(f"([{letters}][{tones}]?){nikhahit}([{tones}]?){aa}"), rf"\1\2{am}")
    for letters, tones, am, nikhahit, aa in _SCRIPTS
]
_SPLIT = [
    (re.compile(f"([{letters}][{tones}]?){am}"), rf"\1{nikhahit}{aa}")
    for letters, tones, am, nikhahit, aa in _SCRIPTS
]
# The split spelling typed with NIKHAHIT before the tone mark (``ํ้า``)
_SPLIT_TONE_LAST = [
    (re.compile(f"([{letters}])([{tones}]){am}"), rf"\1{nikhahit}\2{aa}")
    for letters, tones, am, nikhahit, aa in _SCRIPTS
]


# SARA AM or NIKHAHIT, Thai and Lao: a text without them has no other spelling
_ANY = re.compile("[\u0e33\u0e4d\u0eb3\u0ecd]")


def other_spellings(text: str) -> tuple[str, ...]:
    """``text`` with its SARA AM in the other spellings: every one as one letter, and
    every one as two (a tone mark before NIKHAHIT, as NFKC writes it, or after, as some
    type it); () for a text without it. A word that mixes the spellings in the text is
    found by a query spelled as it is (``กำนํา``)."""
    if _ANY.search(text) is None:  # (most queries: asked three times a term)
        return ()
    joined = text
    for pattern, letters in _JOIN:
        joined = pattern.sub(letters, joined)
    split, tone_last = joined, joined
    for pattern, letters in _SPLIT:
        split = pattern.sub(letters, split)
    for pattern, letters in _SPLIT_TONE_LAST:
        tone_last = pattern.sub(letters, tone_last)
    for pattern, letters in _SPLIT:
        tone_last = pattern.sub(letters, tone_last)
    return tuple(dict.fromkeys(s for s in (joined, split, tone_last) if s != text))
