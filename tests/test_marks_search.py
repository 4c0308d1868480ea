"""Words with combining marks: a vowel sign is part of its word (Devanagari, Bengali,
Tamil, ...), a decomposed (NFD) word is the same word as its composed form, and Arabic
and Hebrew are found with or without their vowel points. On a real NoteIndex over real
files and a real SQLite file.

Before: unicode61 cut words at every mark, so ``दिल`` (heart) also found ``दाल``
(lentils), and an NFD Hangul note was found only by an NFD query.
"""

from __future__ import annotations

import re
import time
import unicodedata

import pytest

from indexer.index.query import make_snippet
from indexer.index.query_parse import parse_query
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
    ("lang", "one", "two", "other"),
    [
        ("th", "น้ำ", "น้\u0e4d\u0e32", "น้า"),  # water; (aunt: no SARA AM)
        ("th", "คำถาม", "ค\u0e4d\u0e32ถาม", "คาถา"),  # question; (a spell)
        ("lo", "ນ້ຳ", "ນ້\u0ecd\u0eb2", "ນ້າ"),  # water in Lao
    ],
)
def test_sara_am_is_found_in_both_its_spellings(
    ws: Workspace, index: NoteIndex, lang: str, one: str, two: str, other: str
) -> None:
    """Thai's and Lao's SARA AM, one letter or NIKHAHIT + SARA AA (alike on screen; NFC
    keeps them apart): either finds both, and the snippet marks what the note holds.
    Before, each found its own spelling alone."""
    put(ws, lang, "one.md", f"ดื่ม {one} เย็น\n")
    put(ws, lang, "two.md", f"ดื่ม {two} เย็น\n")
    put(ws, lang, "other.md", f"# c\n\nดื่ม {other} เย็น\n")
    put(ws, lang, "split.md", f"# d\n\nดื่ม {two[:-1]} {two[-1]}\n")  # (not the word)
    tone_last = re.sub("([\u0e48-\u0e4b\u0ec8-\u0ecb])([\u0e4d\u0ecd])", r"\2\1", two)
    if tone_last != two:  # (NIKHAHIT typed before the tone mark)
        put(ws, lang, "three.md", f"ดื่ม {tone_last} เย็น\n")
    index.reconcile()
    expected = {"one.md", "two.md"} | ({"three.md"} if tone_last != two else set())
    for query in (one, two, tone_last, f'"ดื่ม {one}"', f'"ดื่ม {two} เย็น"'):
        assert found(index, lang, query) == (expected, len(expected)), query
    snippets = {hit["path"]: hit["snippet"] for hit in index.search(lang, two)["results"]}
    assert snippets["one.md"] == f"ดื่ม **{one}** เย็น"
    assert snippets["two.md"] == f"ดื่ม **{two}** เย็น"
    assert [hit["path"] for hit in index.search_any(lang, [one])] != []
    assert {hit["path"] for hit in index.search_any(lang, [two])} == expected


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
        ("Երեւան", "Երևան"),  # the Armenian ech-yiwn ligature, in everyday use
        ("ijsbeer", "ĳsbeer"),  # a Dutch digraph letter
        ("Strasse", "𝐒𝐭𝐫𝐚𝐬𝐬𝐞"),  # mathematical bold, pasted from social media
        ("cafe", "ⓒⓐⓕⓔ"),  # enclosed letters
        ("ежик", "ёжик"),  # Russian ё is optional in print
        ("еще", "ЕЩЁ"),
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
        ("xyzzy", "the ＸＹＺＺＹ code", "ＸＹＺＺＹ"),  # full width
        ("cafe", "the ⓒⓐⓕⓔ sign", "ⓒⓐⓕⓔ"),  # enclosed letters
        ("еще", "он ещё здесь", "ещё"),
        ("アイウ", "half ｱｲｳ width", "ｱｲｳ"),
        ("lodz", "in Łódź today", "Łódź"),
        ("igdir", "to IĞDIR now", "IĞDIR"),
        ("orsted", "by Ørsted", "Ørsted"),
        ("zebra?", "the zebra crossing", "zebra"),  # a question's punctuation
        ("¿(zebra)?", "the zebra crossing", "zebra"),
        ("crossing.", "the zebra crossing", "crossing"),
        ("foo_bar", "see foo_bar here", "foo_bar"),  # an underscore joins two words
        ("Straße", "Die große Straße ist lang", "Straße"),  # typed as in the note
        ("strasse", "Die große Straße ist lang", "Straße"),
        ('"große strasse"', "Die große Straße ist lang", "große Straße"),
        ("diyarbakır", "in DİYARBAKIR", "DİYARBAKIR"),
        ("database", "a data\u200bbase", "data\u200bbase"),  # invisible inside the hit
        ("donaudampfschiff", "das Donau\u00addampf\u00adschiff", "Donau\u00addampf\u00adschiff"),
        ("می‌خواهم", "من می‌خواهم", "می‌خواهم"),
        ("میخواهم", "من می‌خواهم", "می‌خواهم"),
        # a mark after the hit is its last letter's (``**الطالب**ُ`` left it outside)
        ("الطالب", "جاء الطالبُ اليوم", "الطالبُ"),
        ("كتاب", "هذا كتابٌ جديد", "كتابٌ"),
        ("กร", "ไป กรุงเทพ วันนี้", "กรุ"),
    ],
)
def test_snippets_mark_what_search_matched_whatever_its_accents(
    query: str, text: str, marked: str
) -> None:
    """A hit found through accents, points, width, folded letters, invisible characters
    or punctuation around the query's words is also the one highlighted, and the snippet
    is cut around it. (A ligature such as ``ﬁ`` is found but not highlighted.)"""
    assert f"**{marked}**" in make_snippet(text, parse_query(query).terms)
    far = "filler words here " * 40 + text
    assert f"**{marked}**" in make_snippet(far, parse_query(query).terms, width=80)


@pytest.mark.parametrize(
    ("query", "marked"),
    [
        ("Երևան", "Երևան"),  # typed as in the note
        ("Երեւան", "Երևան"),  # the two letters the ligature stands for
        ("բարև", "Բարև"),
        ("և", "և"),  # "and": the ligature alone
        ("Երե*", "Երևան"),  # a prefix ending on the ligature's first letter
        ("ԵՐԵՎԱՆ", ""),  # (another word: վ is no ւ)
    ],
)
def test_armenian_ligatures_are_highlighted_where_search_finds_them(
    ws: Workspace, index: NoteIndex, query: str, marked: str
) -> None:
    """Eastern Armenian writes ``եւ`` as one letter, ``և``, in everyday text (Yerevan,
    hello, and); search reads it as the two: ``Երևան`` found the note and its snippet
    marked nothing, even typed as in the note."""
    put(ws, "hy", "a.md", "# a\n\nԲարև, Երևան և Գյումրի\n")
    index.reconcile()
    results = index.search("hy", query)["results"]
    assert [hit["path"] for hit in results] == (["a.md"] if marked else [])
    if marked:
        assert f"**{marked}**" in results[0]["snippet"]


def test_highlights_do_not_fold_what_search_does_not() -> None:
    assert "**" not in make_snippet("मेरा दाल", parse_query("दिल").terms)
    assert "**" not in make_snippet("один йод", parse_query("иод").terms)  # Cyrillic й


@pytest.mark.parametrize(
    ("query", "text"),
    [
        ("party", "We had a party\U0001f973 and it was great"),  # an emoji newer than 6.1
        ("great", "it was great\U0001f914"),
        ("cool", "so cool\U0001fae0!"),
        ("lira", "5 lira\u20ba each"),
        ("مرحبا", "He said \u2067مرحبا\u2069 to us"),  # a bidi isolate
        ("database", "a data\u200bbase"),  # a zero-width space from a web page
        ("softhyphen", "soft\u00adhyphen"),
        ("international", "inter\u200cnational"),
        ("word", "wo\u2060rd"),
        ("strasse", "Die Straße ist lang"),
        ("STRASSE", "Die Straße ist lang"),
        ("Straße", "the strasse"),
        ("fussganger", "Fußgänger"),
        ("igdir", "IĞDIR"),
        ("IĞDIR", "Iğdır"),
        ("diyarbakır", "DİYARBAKIR"),
        ("da nang", "Đà Nẵng"),
        ("lodz", "Łódź"),
        ("orsted", "Ørsted"),
        ("warning", "\u26a0\ufe0fWarning the server is down"),  # an emoji's selector
        ("love", "I \u2764\ufe0flove cats"),
        ("first", "1\ufe0f\u20e3First step"),  # a keycap
        # case newer than unicode61's tables (found by grep's ignore_case, not by search)
        ("მთავარი", "ᲛᲗᲐᲕᲐᲠᲘ ᲗᲐᲕᲘ"),  # Georgian Mtavruli (all caps) and Mkhedruli
        ("ᲛᲗᲐᲕᲐᲠᲘ", "მთავარი თავი"),
        ("ᏣᎳᎩ", "ꮳꮃꭹ ᎦᏬᏂᎯᏍᏗ"),  # Cherokee small letters, and the capitals
        ("ꮳꮃꭹ", "ᏣᎳᎩ ᎦᏬᏂᎯᏍᏗ"),
        ("𞤀𞤣𞤤𞤢𞤥", "𞤢𞤣𞤤𞤢𞤥 text"),  # Adlam
        # Arabic-script letters a reader takes as one
        ("احمد", "أحمد في المدرسة"),  # alef with hamza above or below, or without
        ("إسلام", "اسلام"),
        ("مدرسه", "مدرسة كبيرة"),  # teh marbuta and heh
        ("علي", "على الطاولة"),  # alef maksura and yeh
        ("کتاب", "كتاب جديد"),  # the Persian keheh for the Arabic kaf
        ("كتابي", "کتابی"),  # and the Persian yeh
        ("\U000104b0\U000104b1\U000104b2", "\U000104d8\U000104d9\U000104da text"),  # Osage
    ],
)
def test_newer_symbols_format_characters_and_folded_letters(
    ws: Workspace, index: NoteIndex, query: str, text: str
) -> None:
    """unicode61 knows Unicode 6.1: a newer emoji glued to a word was part of it, a
    zero-width space or bidi isolate cut or hid it; and ß, ı, đ, ł, ø have no accent
    for it to remove. Each note below was not found by its query before."""
    put(ws, "xx", "a.md", f"# a\n\n{text}\n")
    put(ws, "xx", "b.md", "# b\n\nnothing of the kind\n")
    index.reconcile()
    assert found(index, "xx", query) == ({"a.md"}, 1)


def test_snippets_and_grep_lines_are_cut_between_characters_as_seen() -> None:
    """A cut never splits a flag into its two halves or leaves a mark without its
    letter (the snippet read as Sudan's flag, or began with a joiner or vowel sign)."""
    from indexer.vault.scan import MAX_LINE_CHARS, _trimmed
    from shared.graphemes import continues

    flags = "\U0001f1fa\U0001f1f8\U0001f1e9\U0001f1ea\U0001f1eb\U0001f1f7"  # US DE FR
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467 "
    for filler in (flags, family, "नमस्ते", "e\u0301"):
        for count in range(40, 46):
            text = filler * count + " needle " + filler * count
            for width in (60, 61, 62, 63, 80):
                body = make_snippet(text, parse_query("needle").terms, width=width).strip("…")
                before, after = body.split(" **needle** ")
                assert not continues(before[0]) and not continues(after[0]), body
                assert after[-1] != "\u200d", body
                if filler == flags:  # regional indicators come in pairs
                    assert len(before) % 2 == 0 and len(after) % 2 == 0, body
            line = _trimmed(filler * count * 4)
            assert len(line) <= MAX_LINE_CHARS
            assert filler != flags or len(line) % 2 == 0
    # one character as seen longer than the cut: cut inside it, not shown as ""
    assert _trimmed("e" + "\u0301" * 50_000 + " tail") == "e" + "\u0301" * (MAX_LINE_CHARS - 1)


def test_every_format_character_and_selector_is_dropped() -> None:
    """The list of format characters is written out (re has no \\p{Cf}); Python's tables
    are the check. Keycaps are symbols: a word break."""
    from indexer.index.text import FORMAT_RUNS, searchable

    for code in range(0x110000):
        char = chr(code)
        kind = unicodedata.category(char)
        if kind == "Cf" or 0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF:
            assert FORMAT_RUNS.fullmatch(char), hex(code)
    assert searchable("1\ufe0f\u20e3First #\ufe0f\u20e3tag") == " First  tag"


def test_a_zwj_ending_a_word_does_not_join_the_space_after_it() -> None:
    """Malayalam's old chillu (``ന്‍``: a virama and a ZWJ) ends its word: the highlight
    took the space after it in (``**അവന്‍ **വന്നു``)."""
    from shared.graphemes import character_end, character_start

    text = "അവന്\u200d വന്നു"
    assert character_end(text, 5) == 5 and character_start(text, 5) == 5
    family = "\U0001f468\u200d\U0001f469"  # (an emoji sequence stays one)
    assert character_start(family, 2) == 0
    assert make_snippet(text, parse_query("അവൻ").terms) == "**അവന്\u200d** വന്നു"


@pytest.mark.parametrize("word", ["नमस्ते", "স্কুল", "ಕನ್ನಡ", "ക്ഷേത്രം"])
def test_a_cut_never_splits_an_indic_conjunct(word: str) -> None:
    """A virama joins the letter after it (``स्`` + ``ते``): a snippet began with ``ते``."""
    from shared.graphemes import character_start

    for end in range(len(word) + 1):
        cut = character_start(word, end)
        assert cut == 0 or unicodedata.combining(word[cut - 1]) != 9, (word, end, cut)


@pytest.mark.parametrize(
    ("text", "limit", "kept"),
    [
        ("ｶﾞｷﾞｸﾞ", 3, "ｶﾞ"),  # half-width kana and their voicing marks
        ("ﾊﾟﾋﾟ", 1, ""),
        ("\u0600١٢ x", 1, ""),  # the Arabic number sign goes with its digits
        ("ab\u200ccd", 2, "a"),  # a ZWNJ belongs to the letter before it
        ("\u1100\uac00x", 1, ""),  # a leading jamo before a syllable: one syllable
        ("\ua960\u1100\u1161x", 2, ""),  # extended leading jamo, then a jamo syllable
        ("\uac00\ud7b0x", 1, ""),  # an extended vowel jamo goes with its syllable
        ("\uac00\ud7cbx", 1, ""),  # an extended final jamo too
        ("မြန်မာ", 4, "မြန်"),  # Myanmar's asat ends its syllable (a visible killer)
        ("ဗုဒ္ဓ", 4, "ဗု"),  # its virama (U+1039) stacks the letter after it
    ],
)
def test_a_cut_keeps_a_cluster_whole(text: str, limit: int, kept: str) -> None:
    """Recall cut ``ｷﾞ`` into ``ｷ`` (another syllable), and after an Arabic number sign."""
    from shared.graphemes import cut_chars

    assert cut_chars(text, limit) == kept


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
        ("שָׁלוֹם עולם", "שלום"),  # (whole, its points dropped as search drops them)
    ],
)
def test_recall_keywords_keep_words_with_marks_whole(query: str, keyword: str) -> None:
    assert keyword in extract_keywords(query)


def test_searchable_is_the_plain_rule_whatever_the_shortcut() -> None:
    """``searchable`` skips its regex and table when no byte could start such a letter;
    the result is always what the plain rule gives."""
    import random
    import re

    from indexer.index.text import OPTIONAL_MARKS, searchable
    from shared.reader_folds import GREEK_BASES as _GREEK

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
        "\u200b",
        "\u2067",
        "\u00ad",
        "\U0001f973",
        "\U0001f389",
        "\u2b50",
        "\u20ba",
        "ß",
        "ı",
        "İ",
        "ł",
        "Ø",
        "\ufe0f",
        "\u2764",
        "Ა",  # case unicode61 does not fold
        "ꭰ",
        "\U0001e900",
        "Ꭰ",  # (its fold: itself)
        "أ",  # Arabic-script letters read as one
        "ة",
        "ی",
    ]
    folds = str.maketrans(
        {
            "ß": "ss",
            "ı": "i",
            "İ": "i",
            "ł": "l",
            "Ø": "o",
            "Ა": "ა",
            "ꭰ": "Ꭰ",
            "\U0001e900": "\U0001e922",
            "ک": "ك",
            "أ": "ا",
            "ة": "ه",
            "ی": "ي",
        }
    )
    newer = {0x1F973, 0x1F389, 0x2B50, 0x20BA}
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        plain = _compatible(unicodedata.normalize("NFC", text)).translate(_GREEK)
        plain = OPTIONAL_MARKS.sub("", plain)
        plain = "".join(c for c in plain if unicodedata.category(c) != "Cf" and c != "\ufe0f")
        plain = re.sub("[" + "".join(map(chr, newer)) + "]+", " ", plain).translate(folds)
        assert searchable(text) == plain, text
        assert not re.search("[\u064b-\u065f\u05b0-\u05bc]", searchable(text))


@pytest.mark.parametrize(
    ("query", "text", "marked"),
    [
        ("کتاب خوب", "این کتاب خیلی خوب است", ["کتاب", "خوب"]),  # Persian keheh and yeh
        ("أحمد المدرسة", "ذهب أحمد إلى المدرسة", ["أحمد", "المدرسة"]),
        ("على", "قال: على الطاولة", ["على"]),
        ("کتابی", "كتابي الجديد", ["كتابي"]),
    ],
)
def test_a_hit_found_through_arabic_script_folds_is_highlighted(
    ws: Workspace, index: NoteIndex, query: str, text: str, marked: list[str]
) -> None:
    """The query is folded (ی to ي, ک to ك, أ to ا, ة to ه); the highlight looked for the
    folded spelling in the note's own text and marked nothing, or the wrong words."""
    put(ws, "fa", "a.md", f"# t\n\n{text}\n")
    index.reconcile()
    (hit,) = index.search("fa", query)["results"]
    assert re.findall(r"\*\*(.+?)\*\*", hit["snippet"]) == marked


def test_a_long_run_of_marks_is_read_in_linear_time() -> None:
    """NFC and NFKC put a run of marks in order by an insertion sort: 120 KB of marks out
    of order took 4.5 s to index, and each search showing the note as long again."""
    from indexer.index.text import as_read, fold_tag, searchable, stream_safe

    run = "a" + "\u0301\u0316" * 60_000  # above (230), then below (220): out of order
    started = time.thread_time()
    for read in (searchable, as_read, fold_tag):
        assert read(run)
    assert time.thread_time() - started < 1.0  # (seconds each before)
    assert stream_safe("e\u0301 café") == "e\u0301 café"  # ordinary text: as it is
    # the halfwidth sound marks are letters NFKC makes marks: counted in a run too
    assert "\u034f" in stream_safe("a" + "\u0301\uff9e" * 20)
    started = time.thread_time()
    assert as_read("a" + "\u0301\uff9e" * 40_000)
    assert time.thread_time() - started < 1.0
    cut = stream_safe("a" + "\u0301" * 61)
    assert cut == "a" + "\u0301" * 30 + "\u034f" + "\u0301" * 30 + "\u034f" + "\u0301"


@pytest.mark.parametrize("marks", [10, 200, 5000])
def test_a_hit_after_a_letter_under_hundreds_of_marks_is_shown(marks: int) -> None:
    """The snippet began where the letter the marks sit on begins, so 200 marks filled it
    and the hit after them was not shown; 5,000 left "……" (a helper's hostile notes)."""
    body = "some words before T" + "\u0301" * marks + f" guava{marks} and words after"
    snippet = make_snippet(body, parse_query(f"guava{marks}").terms)
    assert snippet.endswith(f" **guava{marks}** and words after")
    assert snippet.lstrip("…")[0] != "\u0301"  # (never a mark without its letter)


def test_a_highlight_is_widened_in_linear_time_and_joins_what_it_overlaps() -> None:
    """Widening a hit to a whole character walked back over a run of marks from each
    place: a hit before a million marks took 26 s of CPU (the snippet's own bound is
    0.05 s). A hit pulled back into the character the one before ended in was dropped."""
    for text in ("needle" + "\u0301" * 1_000_000, "needle " + ("\u0301" * 20 + "\u200d") * 10_000):
        started = time.thread_time()
        snippet = make_snippet(text, parse_query("needle").terms)
        assert time.thread_time() - started < 1.0
        assert snippet.startswith("**needle**") or snippet == "needl…"  # (é of 1M marks)
    assert "**กรุงเทพ**" in make_snippet("ไป กรุงเทพ วันนี้", parse_query("กร ุงเทพ").terms)


def test_a_prefix_is_folded_as_a_word_is(ws: Workspace, index: NoteIndex) -> None:
    """``Ünic*`` finds ``unicode`` as ``Ünicode`` would: case, accents, Greek tonos, the
    letters ``searchable`` folds (``ß``, ``ł``, the alef's hamza) and the vowel points
    search ignores are folded in a prefix too; its snippet marks the whole word."""
    put(ws, "xx", "latin.md", "# a\n\nunicode and Łódźka and STRASSENBAHN\n")
    put(ws, "xx", "greek.md", "# b\n\nΚαλημέρα κόσμε\n")
    put(ws, "xx", "cyrillic.md", "# c\n\nМосква река\n")
    put(ws, "xx", "arabic.md", "# d\n\nقرأ أحمدُ الكتاب\n")
    index.reconcile()
    for query, path, marked in [
        ("Ünic*", "latin.md", "unicode"),
        ("UNICO*", "latin.md", "unicode"),
        ("lodz*", "latin.md", "Łódźka"),
        ("straß*", "latin.md", "STRASSENBAHN"),
        ("καλημε*", "greek.md", "Καλημέρα"),
        ("ΚΑΛΉ*", "greek.md", "Καλημέρα"),
        ("моск*", "cyrillic.md", "Москва"),
        ("احم*", "arabic.md", "أحمدُ"),
        ("الْكِتَا*", "arabic.md", "الكتاب"),
    ]:
        result = index.search("xx", query)
        assert [hit["path"] for hit in result["results"]] == [path], query
        assert f"**{marked}**" in result["results"][0]["snippet"], query
