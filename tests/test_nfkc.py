"""The quicker readings of a text are the same strings: ``nfkc`` is NFKC, and the looks
that skip ``searchable``'s steps and the loose table's translate skip them only where
they would change nothing."""

from __future__ import annotations

import random
import sys
import unicodedata

import pytest

from indexer.index import nfkc as nfkc_module
from indexer.index import text
from indexer.index.nfkc import changed_codes, nfkc

# What a reader's text mixes: CJK and its full-width punctuation, Hangul syllables and
# jamo, Latin with precomposed and combining accents, Arabic with points, Indic vowel
# signs, compatibility letters, emoji with selectors and joiners, controls and spaces.
_PIECES = [
    "东京都",
    "，",
    "：",
    "（注）",
    "\u3000",
    "ＡＢＣ",
    "Ｅ\u0301",
    "ｶﾞｷﾞ",
    "ﾞ",
    "가",
    "\u1100\u1161\u11a8",
    "각\u11a8",
    "e\u0301",
    "é",
    "Å",
    "\u212b",
    "ﬁ",
    "ǆ",
    "½",
    "²",
    "𝐒𝐭",
    "كَتَبَ",
    "\u0644\u0627",
    "ﷺ",
    "दिल",
    "\u0915\u093c",
    "न्",
    "ำ",
    "👩\u200d💻",
    "™\ufe0f",
    "data\u200bbase",
    "\u00ad",
    "🥳",
    "=\u0338",
    "\u0b47\u0b3e",
    "\u0344",
    "a",
    " ",
    "\n",
    "Καλημέρα",
    "ß",
    "İ",
    "\u00a0",
    "\u2460",
    "\uf900",
    "\U0002f800",
]


def _texts(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [
        "".join(rng.choice(_PIECES) for _ in range(rng.randrange(1, 120))) for _ in range(count)
    ]


# What the quick paths take whole, and one piece of anything else put among them
_PLAIN = ["东京都", "，", "（注）", "\u3000", "ＡＢＣ", "가각", "abc ", "Привет", "दिल", "\n"]
# (and what ``searchable`` takes whole: no compatibility form)
_PLAIN_TO_SEARCH = ["东京都", "、。", "가각", "abc ", "Привет", "दिल", "\n"]


def _mostly_plain(count: int, seed: int, plain: list[str] = _PLAIN) -> list[str]:
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        pieces = [rng.choice(plain) for _ in range(rng.randrange(30, 80))]
        pieces.insert(rng.randrange(len(pieces) + 1), rng.choice(_PIECES))
        texts.append("".join(pieces))
    return texts


def test_nfkc_is_nfkc_on_mixed_texts() -> None:
    for sample in _texts(2000, 1) + _mostly_plain(3000, 1):
        assert nfkc(sample) == unicodedata.normalize("NFKC", sample), ascii(sample)


def test_a_long_cjk_text_with_wide_punctuation_is_normalized_without_unicodedata() -> None:
    sample = "我们说了什么？（东京都，大阪）\u3000" * 20
    assert nfkc(sample) == unicodedata.normalize("NFKC", sample)
    assert nfkc_module._changed().search(sample) is None  # (the quick path is the one taken)


def test_every_character_nfkc_may_change_or_join_is_looked_for() -> None:
    """A character left out of ``changed_codes`` is one NFKC keeps as it is, with no
    combining class, and never the second of a canonical pair; the wide forms of ASCII
    are NFKC's plain ASCII."""
    codes = changed_codes()
    wide = set(map(ord, nfkc_module._WIDE_ASCII))
    seconds = set(range(0x1161, 0x1176)) | set(range(0x11A8, 0x11C3))
    for code in range(0x80, sys.maxunicode + 1):
        char = chr(code)
        parts = unicodedata.decomposition(char).split()
        if len(parts) == 2 and not parts[0].startswith("<"):
            seconds.add(int(parts[1], 16))
        if code in codes or code in wide or 0xD800 <= code <= 0xDFFF:
            continue
        assert unicodedata.normalize("NFKC", char) == char, hex(code)
        assert not unicodedata.combining(char), hex(code)
    assert seconds <= codes
    for char, plain in nfkc_module._WIDE_ASCII.items():
        assert unicodedata.normalize("NFKC", char) == plain


@pytest.mark.parametrize("seed", [2, 3])
def test_searchable_skips_only_steps_that_change_nothing(seed: int) -> None:
    for sample in _texts(1000, seed) + _mostly_plain(2000, seed, _PLAIN_TO_SEARCH):
        composed = unicodedata.normalize("NFC", sample)
        assert text.searchable(sample) == text._searchable_steps(composed), ascii(sample)


def test_the_loose_reading_looks_for_every_character_it_changes() -> None:
    table = text._loose_table()
    looks = text._loose_letters()
    assert all(looks.search(chr(code)) is not None for code in table)
    for sample in _texts(1000, 4) + _mostly_plain(2000, 4, _PLAIN_TO_SEARCH):
        bare, spans = text.without_ignored_marks(sample)
        assert bare == sample.translate(table), ascii(sample)
        if bare == sample:
            assert spans == []
