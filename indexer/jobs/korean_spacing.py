"""Korean writes many compounds joined or spaced, as the writer likes (``부산여행``,
``부산 여행``: a Busan trip; the standard allows both for nouns). The index cuts Hangul
into bigrams (``text.cjk_expand``), so a question's spaced words find a joined note,
but a joined word finds no note that spaced it: its middle bigram (``산여``) is in none.
Recall then seeks it as its two words apart (``"부산 여행"``, a phrase: adjacent, as
the note wrote them), only where no note holds it as written."""

from __future__ import annotations

import re

# A Hangul word of 4 syllables or more (two words of 2 at least), up to 12 (its splits
# are each one look-up of the index)
_JOINED = re.compile("[\uac00-\ud7a3]{4,12}")


def spaced_spellings(word: str) -> list[str]:
    """The phrases of ``word`` (a Korean keyword) cut into two words of 2 syllables or
    more, in order (``"부산 여행"``); none for any other keyword."""
    if _JOINED.fullmatch(word) is None:
        return []
    return [f'"{word[:at]} {word[at:]}"' for at in range(2, len(word) - 1)]
