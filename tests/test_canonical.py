"""``indexer.canonical.is_nfc`` answers as ``unicodedata.is_normalized("NFC", ...)`` does."""

from __future__ import annotations

import random
import unicodedata

import pytest

from indexer.canonical import is_nfc


def _pool() -> list[str]:
    """Characters NFC may touch: marks, letters with a decomposition, Hangul jamo and
    syllables, and a few plain ones."""
    pool = [
        chr(code)
        for code in range(0x80, 0x30000)
        if unicodedata.combining(chr(code)) or unicodedata.decomposition(chr(code))
    ]
    pool += [chr(code) for code in range(0x1100, 0x1200)]
    pool += [chr(code) for code in range(0xAC00, 0xD7A4, 7)]
    return pool + list("aeiouAEIOU ক্ষো")


def test_random_texts_of_what_nfc_may_change() -> None:
    rng = random.Random(7)
    pool = _pool()
    for _ in range(200_000):
        text = "".join(rng.choice(pool) for _ in range(rng.randint(1, 4)))
        assert is_nfc(text) == unicodedata.is_normalized("NFC", text), ascii(text)


@pytest.mark.parametrize(
    "text",
    [
        "পহেলা বৈশাখ একটি উৎসব",
        "কো",  # (ে and া: NFC makes them ো)
        "தமிழ் புத்தகம்",
        "மொழி",
        "서울",
        unicodedata.normalize("NFD", "서울"),
        "ṥ\u0327",  # (a letter ending in marks, then a mark NFC puts before them)
        "\u212b",  # (Angstrom sign: NFC replaces it)
        "क़",
        "cafe\u0301",
        "plain ascii",
    ],
)
def test_texts_of_readers(text: str) -> None:
    assert is_nfc(text) == unicodedata.is_normalized("NFC", text)
