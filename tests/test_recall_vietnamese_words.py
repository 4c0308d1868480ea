"""Which words a question writes as Vietnamese (``indexer.jobs.vietnamese_words``): another
language's stop word that Vietnamese writes as a syllable (``an`` of ``an toàn``, safe;
``in``, to print; ``em``, ``nem``, ``voi``) stays a keyword where the question is
Vietnamese, though written with only the accents French and Portuguese share (à, ê, á),
and goes where the question shows that language in other words (``from``, ``is``)."""

from __future__ import annotations

import unicodedata

import pytest

from indexer.index.service import NoteIndex
from indexer.jobs.keywords import extract_keywords
from indexer.jobs.recall import Recall
from indexer.jobs.vietnamese_words import syllable
from indexer.vault.sandbox import Sandbox
from indexer.vault.vault import Vault
from shared.workspace import Workspace

# (question, its keywords): each dropped the word another language stops before, its
# Vietnamese shown by the accents only, or tied with the languages of that word
SHARED_ACCENTS = [
    ("Xe an toàn không?", ["xe", "an", "toàn"]),  # is the car safe? (English "an")
    ("Cà phê an toàn", ["cà", "phê", "an", "toàn"]),  # (no stop word of Vietnamese)
    ("Máy in màu", ["máy", "in", "màu"]),  # colour printer (English "in")
    ("In tài liệu", ["in", "tài", "liệu"]),  # print the documents
    ("Em bé khóc", ["em", "bé", "khóc"]),  # the baby cries (Portuguese "em")
    ("Em bé bị ho", ["em", "bé", "ho"]),  # the baby coughs (Italian "ho")
    ("Quán nem nào ngon", ["quán", "nem", "ngon"]),  # which spring-roll shop (Portuguese)
    ("Con voi màu gì", ["voi", "màu"]),  # the elephant's colour (Italian "voi")
    ("Em bé ăn cháo chưa?", ["em", "bé", "ăn", "cháo"]),
    ("MÁY IN MÀU", ["máy", "in", "màu"]),  # (in capitals)
    ("Máy in Canon màu", ["máy", "in", "canon", "màu"]),  # (a name inside)
]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Ai là giám đốc?", ["giám", "đốc"]),  # who is the director? (ai: who)
        ("ai là người viết AI?", ["người", "viết", "ai"]),  # AI in capitals: the acronym
        ("ok máy in màu", ["máy", "in", "màu"]),  # (ok shows no language)
        ("OK, máy in màu nào tốt?", ["ok", "máy", "in", "màu", "tốt"]),
        ("is it ok to go?", ["go"]),  # (an English question: as before)
        ("wifi máy in màu", ["wifi", "máy", "in", "màu"]),  # (nor do loanwords: in stays)
        ("email máy in màu", ["email", "máy", "in", "màu"]),
    ],
)
def test_a_vietnamese_question_word_goes_and_ok_shows_no_language(
    query: str, expected: list[str]
) -> None:
    assert extract_keywords(query) == expected


@pytest.mark.parametrize(("query", "expected"), SHARED_ACCENTS)
def test_a_vietnamese_word_stays_in_a_question_written_with_shared_accents(
    query: str, expected: list[str]
) -> None:
    assert extract_keywords(query) == expected


# (question, its keywords): a question of French, Portuguese, Spanish or Italian
# monosyllables with accents, and one naming Vietnamese places, read as before
NOT_VIETNAMESE = [
    ("Le thé", ["thé"]),  # fr
    ("Du thé, là?", ["thé"]),  # (là: Vietnamese "is" too)
    ("Me dá o pé", ["dá", "pé"]),  # pt
    ("Nó de pé", ["nó", "pé"]),
    ("Tem chá?", ["chá"]),
    ("Tem pão lá?", ["pão"]),
    ("¿Té con leche?", ["té", "con", "leche"]),  # es
    ("Già, ma più là?", []),  # it (già, più: Italian stop words; là: Vietnamese's)
    ("The phở in Hà Nội", ["phở", "hà", "nội"]),  # en (Hà Nội: a name)
    ("Where is the phở in Hà Nội?", ["phở", "hà", "nội"]),
    ("Tem chá aí?", ["chá", "aí"]),  # pt: aí (there) is no Vietnamese syllable (ái)
]


@pytest.mark.parametrize(("query", "expected"), NOT_VIETNAMESE)
def test_a_question_of_other_languages_monosyllables_is_not_read_as_vietnamese(
    query: str, expected: list[str]
) -> None:
    assert extract_keywords(query) == expected


# (question, its keywords): an English stop word Vietnamese writes as a syllable goes
# where the question shows English in a word Vietnamese does not write (``from``)
MIXED = [
    ("Giá vé máy bay from Hà Nội to Đà Nẵng là bao nhiêu?",
     ["giá", "vé", "máy", "bay", "hà", "nội", "đà", "nẵng", "bao"]),
    ("Đặt vé tàu from Huế to Hà Nội cho tôi", ["đặt", "vé", "tàu", "huế", "hà", "nội"]),
    ("Cho tôi biết quán phở ngon nhất to visit with my family",
     ["biết", "quán", "phở", "ngon", "nhất", "visit", "family"]),
]  # fmt: skip


@pytest.mark.parametrize(("query", "expected"), MIXED)
def test_an_english_word_goes_where_the_question_shows_english(
    query: str, expected: list[str]
) -> None:
    assert extract_keywords(query) == expected


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Máy in của tôi ở đâu?", ["máy", "in"]),  # (English "in": no English shown)
        ("Tôi muốn in tài liệu này", ["muốn", "in", "tài", "liệu"]),
        ("Cái máy in này có an toàn không", ["máy", "in", "an", "toàn"]),  # (in and an)
        ("Phở in Hà Nội", ["phở", "in", "hà", "nội"]),  # (nothing else shows English)
    ],
)
def test_a_vietnamese_question_keeps_its_syllables(query: str, expected: list[str]) -> None:
    assert extract_keywords(query) == expected


# (question, its keywords): a Vietnamese stop word capitalized inside a sentence is a
# name's syllable; lower-case, or opening the question, it is the stop word
NAMES = [
    ("Kim tự tháp ở Ai Cập có từ khi nào?", ["kim", "tự", "tháp", "ai", "cập", "từ"]),
    ("Ai đi Ai Cập?", ["đi", "ai", "cập"]),  # who goes to Egypt?
    ("Núi Ba Vì cao bao nhiêu?", ["núi", "ba", "vì", "cao", "bao"]),
    ("Chợ Cái Răng mở cửa lúc mấy giờ?", ["chợ", "cái", "răng", "mở", "cửa", "lúc", "mấy", "giờ"]),
    ("Anh ấy về vì mưa", ["anh", "về", "mưa"]),
]


@pytest.mark.parametrize(("query", "expected"), NAMES)
def test_a_vietnamese_stop_word_in_a_name_stays(query: str, expected: list[str]) -> None:
    assert extract_keywords(query) == expected


# (question, its keywords): a name of several syllables may open the question, its
# first a stop word elsewhere (each lost ``ai`` before); not one before a lower-case word
OPENING_NAMES = [
    ("Ai Cập ở đâu?", ["ai", "cập"]),  # where is Egypt?
    ("Ai Cập", ["ai", "cập"]),
    ("Tôi muốn đi du lịch. Ai Cập có đẹp không?", ["muốn", "đi", "du", "lịch", "ai", "cập", "đẹp"]),
]  # fmt: skip
NOT_OPENING_NAMES = [
    ("Ai đi Ai Cập?", ["đi", "ai", "cập"]),  # (the first: who)
    ("Ai đi chợ?", ["đi", "chợ"]),
    ("Ai, Cập là ai?", ["cập"]),  # (a comma between)
]


@pytest.mark.parametrize(("query", "expected"), OPENING_NAMES + NOT_OPENING_NAMES)
def test_a_name_may_open_the_question(query: str, expected: list[str]) -> None:
    assert extract_keywords(query) == expected


# (question, its keywords): every word capitalized, capitals name nothing (each kept
# the stop words as a name's syllables before)
TITLE_CASE = [
    ("Tôi Ở Đâu", []),  # where am I?
    ("Ai Là Giám Đốc Công Ty?", ["giám", "đốc", "công", "ty"]),
    ("Con Mèo Của Tôi Ngủ Ở Đâu?", ["mèo", "ngủ"]),
    ("Var Är Min Katt?", ["katt"]),  # sv: min, my
]


@pytest.mark.parametrize(("query", "expected"), TITLE_CASE)
def test_in_title_case_capitals_name_nothing(query: str, expected: list[str]) -> None:
    assert extract_keywords(query) == expected


def test_a_syllable_is_read_alike_composed_or_with_its_marks_apart() -> None:
    """Read letter by letter as NFC writes them, or decomposed where a mark stands
    alone: the same answers (``người`` and ``ngu\u031bo\u031b\u0300i``)."""
    words = "người toàn hòa hoà qúa ậy cửa aí baú tòan pão über café ngoaì ǘ ṍ"
    for word in words.split():
        decomposed = unicodedata.normalize("NFD", word)
        assert bool(syllable(word)) == bool(syllable(decomposed)), word
    assert syllable("to\u0300an") and not syllable("toa\u0300n\u0301")


def test_a_syllable_carries_its_tone_where_vietnamese_writes_it() -> None:
    """On the vowel with a hat or horn, the last before a final consonant, the first
    of an open pair (``oa``, ``oe``, ``uy``: either); Portuguese ``aí``, ``baú``,
    Italian ``più``, French ``tué`` are no syllables. Misplaced tones typed often in
    Vietnamese (``tòan``, ``ngòai``, ``qúa``) are read as typed."""
    vietnamese = "ái báu tài mía của người cửa mặt tuần hòa hoà thủy thuỷ ngoài tòan ngòai qúa"
    assert all(syllable(word) for word in vietnamese.split())
    assert not any(syllable(word) for word in "aí baú traí più tué ngoaì".split())


def test_vietnamese_words_are_syllables_and_others_are_not() -> None:
    """With their tones, letters and vowel groups (``người``, ``khuẩn``, ``truyện``);
    not ``café``, ``and``, ``is``, ``pão`` aside (Vietnamese writes ``bão``)."""
    vietnamese = "người khuẩn truyện quyển được giữa những nhiêu chiếc thoại khuya toàn máy"
    assert all(syllable(word) for word in vietnamese.split())
    assert not any(syllable(word) for word in "café and is where año niño über".split())


def test_a_vietnamese_question_recalls_the_note_of_its_word(
    ws: Workspace, index: NoteIndex
) -> None:
    """``Máy in màu`` (colour printer) searched for ``máy`` and ``màu`` (``in``, English):
    the note about the colour of the car came first."""
    root = ws.vault_dir("vi")
    root.mkdir(parents=True)
    (root / "printer.md").write_text("# 1\n\nMáy in ở phòng họp, in màu.\n", encoding="utf-8")
    (root / "car.md").write_text("# 2\n\nMáy xe màu đỏ, máy xe màu xanh.\n", encoding="utf-8")
    index.reconcile()
    recall = Recall(Vault(Sandbox(ws), max_file_bytes=1 << 20), index)
    result = recall.recall("vi", "Máy in màu", 400)
    hits = [s["path"] for s in result["sources"] if s["layer"] == "on_demand"]
    assert hits[:1] == ["printer.md"], (extract_keywords("Máy in màu"), result["sources"])


def test_a_question_opening_with_a_name_recalls_its_note(ws: Workspace, index: NoteIndex) -> None:
    """``Ai Cập ở đâu?`` (where is Egypt?) searched for ``cập`` alone (``ai``, who, a
    stop word): the note saying ``cập nhật`` (to update) often came first."""
    root = ws.vault_dir("vi")
    root.mkdir(parents=True)
    (root / "egypt.md").write_text("# 1\n\nAi Cập ở châu Phi.\n", encoding="utf-8")
    (root / "update.md").write_text("# 2\n\nCập nhật máy, cập nhật, cập nhật.\n", encoding="utf-8")
    index.reconcile()
    recall = Recall(Vault(Sandbox(ws), max_file_bytes=1 << 20), index)
    result = recall.recall("vi", "Ai Cập ở đâu?", 400)
    hits = [s["path"] for s in result["sources"] if s["layer"] == "on_demand"]
    assert hits[:1] == ["egypt.md"], (extract_keywords("Ai Cập ở đâu?"), result["sources"])
