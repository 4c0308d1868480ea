"""Words with combining marks: a vowel sign is part of its word (Devanagari, Bengali,
Tamil, ...), a decomposed (NFD) word is the same word as its composed form, and Arabic
and Hebrew are found with or without their vowel points. On a real NoteIndex over real
files and a real SQLite file.

Before: unicode61 cut words at every mark, so ``दिल`` (heart) also found ``दाल``
(lentils), and an NFD Hangul note was found only by an NFD query.
"""

from __future__ import annotations

import unicodedata

import pytest

from indexer.index.query import make_snippet, parse_query
from indexer.index.service import NoteIndex
from indexer.jobs.keywords import extract_keywords
from shared.workspace import Workspace

# (lang, query, the note holding it, a note with the same letters but other marks)
SAME_LETTERS = [
    ("hi", "दिल", "मेरा दिल खुश है", "आज दाल बनी है"),
    ("hi", "किताब", "मेरे पास एक किताब है", "कुतुब मीनार बहुत ऊँची है"),
    ("bn", "দিল", "সে আমাকে বই দিল", "আজ দাল রান্না হয়েছে"),
    ("ta", "காலை", "காலை வணக்கம்", "ஒரு கிலோ அரிசி"),
    ("ar", "كَتَبَ", "هو كَتَبَ رسالة", "قرأت كُتُبًا كثيرة"),
]


def put(ws: Workspace, lang: str, rel: str, text: str) -> None:
    path = ws.vault_dir(lang) / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def found(index: NoteIndex, lang: str, query: str) -> tuple[set[str], int]:
    result = index.search(lang, query, limit=100)
    return {hit["path"] for hit in result["results"]}, result["total"]


@pytest.mark.parametrize(("lang", "query", "holding", "other"), SAME_LETTERS)
def test_a_vowel_sign_is_part_of_its_word(
    ws: Workspace, index: NoteIndex, lang: str, query: str, holding: str, other: str
) -> None:
    put(ws, lang, "holding.md", f"# note\n\n{holding}\n")
    put(ws, lang, "other.md", f"# note\n\n{other}\n")
    index.reconcile()
    assert found(index, lang, query) == ({"holding.md"}, 1)


def test_nfc_and_nfd_spellings_are_one_word(ws: Workspace, index: NoteIndex) -> None:
    for word in ("한국어", "café", "Ἀθῆναι", "ếch"):
        composed, decomposed = (unicodedata.normalize(f, word) for f in ("NFC", "NFD"))
        assert composed != decomposed
        put(ws, "xx", "nfc.md", f"# a\n\nword {composed} here\n")
        put(ws, "xx", "nfd.md", f"# b\n\nword {decomposed} here\n")
        index.reconcile()
        for query in (composed, decomposed):
            assert found(index, "xx", query) == ({"nfc.md", "nfd.md"}, 2), (word, query)
        if word != "Ἀθῆναι":  # highlighting does not fold Greek accents (nor Latin ones)
            snippet = make_snippet(f"word {decomposed} here", parse_query(decomposed).terms)
            assert f"**{composed}**" in snippet


@pytest.mark.parametrize(
    ("plain", "pointed"),
    [
        ("كتب", "كَتَبَ"),
        ("العربية", "العَرَبِيَّة"),
        ("عربي", "عـــربي"),  # tatweel
        ("שלום", "שָׁלוֹם"),
        ("ספר", "סֵפֶר"),
    ],
)
def test_arabic_and_hebrew_are_found_with_or_without_vowel_points(
    ws: Workspace, index: NoteIndex, plain: str, pointed: str
) -> None:
    put(ws, "ar", "plain.md", f"# a\n\n{plain} .\n")
    put(ws, "ar", "pointed.md", f"# b\n\n{pointed} .\n")
    index.reconcile()
    for query in (plain, pointed):
        assert found(index, "ar", query) == ({"plain.md", "pointed.md"}, 2), query


@pytest.mark.parametrize(
    ("plain", "marked"),
    [
        ("καλημερα", "Καλημέρα"),
        ("αθηναι", "Ἀθῆναι"),  # polytonic
        ("ABC", "ＡＢＣ"),  # full-width
        ("アイウ", "ｱｲｳ"),  # half-width katakana
        ("كتب", "ﻛﺘﺐ"),  # Arabic presentation forms
        ("fish", "ﬁsh"),  # a ligature
    ],
)
def test_compatibility_forms_and_greek_accents_are_one_word(
    ws: Workspace, index: NoteIndex, plain: str, marked: str
) -> None:
    put(ws, "el", "plain.md", f"# a\n\n{plain} here\n")
    put(ws, "el", "marked.md", f"# b\n\n{marked} here\n")
    index.reconcile()
    for query in (plain, marked):
        assert found(index, "el", query) == ({"plain.md", "marked.md"}, 2), query


@pytest.mark.parametrize(
    ("query", "text", "marked"),
    [
        ("cafe", "au Café de Flore", "Café"),
        ("café", "the cafe opens", "cafe"),
        ("naive resume", "a naïve résumé", "naïve** **résumé"),
        ('"cafe de flore"', "au Café de Flore", "Café de Flore"),
        ("καλημερα", "Είπε Καλημέρα σε όλους", "Καλημέρα"),
        ("αθηναι", "στην Ἀθῆναι", "Ἀθῆναι"),
        ("كتب", "هو كَتَبَ الرسالة", "كَتَبَ"),
        ("שלום", "אמר שָׁלוֹם לכולם", "שָׁלוֹם"),
    ],
)
def test_snippets_mark_what_search_matched_whatever_its_accents(
    query: str, text: str, marked: str
) -> None:
    """A hit found through accents or points is also the one highlighted, and the
    snippet is cut around it. (Compatibility forms, such as full-width letters, are
    found but not highlighted: the excerpt shows the text as it is.)"""
    assert f"**{marked}**" in make_snippet(text, parse_query(query).terms)
    far = "filler words here " * 40 + text
    assert f"**{marked}**" in make_snippet(far, parse_query(query).terms, width=80)


def test_highlights_do_not_fold_what_search_does_not() -> None:
    assert "**" not in make_snippet("मेरा दाल", parse_query("दिल").terms)
    assert "**" not in make_snippet("один йод", parse_query("иод").terms)  # Cyrillic й


def test_hebrew_maqaf_still_separates_words(ws: Workspace, index: NoteIndex) -> None:
    """Only vowel points go: the maqaf (a hyphen) keeps ``בית־ספר`` two words."""
    put(ws, "he", "a.md", "# a\n\nבית־ספר גדול\n")
    index.reconcile()
    assert found(index, "he", "ספר") == ({"a.md"}, 1)


@pytest.mark.parametrize(
    ("query", "keyword"),
    [
        ("मुझे किताब के बारे में बताओ", "किताब"),
        ("বাংলা ভাষা", "বাংলা"),
        ("தமிழ் மொழி", "தமிழ்"),
        ("שָׁלוֹם עולם", "שָׁלוֹם"),
    ],
)
def test_recall_keywords_keep_words_with_marks_whole(query: str, keyword: str) -> None:
    assert keyword in extract_keywords(query)


def test_searchable_is_the_plain_rule_whatever_the_shortcut() -> None:
    """``searchable`` skips its regex and table when no byte could start such a letter;
    the result is always what the plain rule gives."""
    import random
    import re

    from indexer.index.text import _GREEK_BASES as _GREEK
    from indexer.index.text import _OPTIONAL_MARKS, searchable

    def _compatible(text: str) -> str:
        ranges = ((0xF900, 0xFDFF), (0xFE70, 0xFEFE), (0xFF00, 0xFFEF))
        return "".join(
            unicodedata.normalize("NFKC", c) if any(a <= ord(c) <= b for a, b in ranges) else c
            for c in text
        )

    rng = random.Random(4)
    pieces = [
        "a",
        "é",
        "e\u0301",
        "كَ",
        "تَ",
        "ـ",
        "ά",
        "Ἀ",
        "ﬁ",
        "ｱ",
        "ำ",
        "ﻛ",
        "\ufe77",
        "שָׁ",
        "־",
        "ա",
        "ֆ",
        "ک",
        "한",
        "\u1100\u1161",
        " ",
    ]
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        plain = _compatible(unicodedata.normalize("NFC", text)).translate(_GREEK)
        plain = _OPTIONAL_MARKS.sub("", plain)
        assert searchable(text) == plain, text
        assert not re.search("[\u064b-\u065f\u05b0-\u05bc]", searchable(text))
