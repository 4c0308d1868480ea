"""A number is found however its digits are written: ``2024`` finds ``٢٠٢٤`` (Arabic-Indic),
``۲۰۲۴`` (Persian), ``२०२४`` (Devanagari), ``২০২৪`` (Bengali), ``๒๐๒๔`` (Thai), and each
of those finds the others, on a real NoteIndex over real files; grep stays exact."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable

import pytest
from helpers.indexed_notes import found, index_notes

from indexer.index.service import NoteIndex
from shared.reader_folds import DIGIT_FOLDS, DIGIT_ZEROS
from shared.workspace import Workspace

ASCII = "0123456789"
# One script's ten digits each: Arabic-Indic, Persian, Devanagari, Bengali, Thai, Lao,
# Tibetan, Myanmar, Khmer, Gujarati, Tamil, Adlam (newer than the tokenizer's Unicode 6.1)
SCRIPTS = {
    "arabic": 0x0660, "persian": 0x06F0, "devanagari": 0x0966, "bengali": 0x09E6,
    "thai": 0x0E50, "lao": 0x0ED0, "tibetan": 0x0F20, "myanmar": 0x1040, "khmer": 0x17E0,
    "gujarati": 0x0AE6, "tamil": 0x0BE6, "adlam": 0x1E950,
}  # fmt: skip


def digits(number: str, zero: int) -> str:
    """``number`` (ASCII digits) in the digits whose zero is ``zero``."""
    return number.translate({ord(d): chr(zero + int(d)) for d in ASCII})


@pytest.fixture
def numbers(ws: Workspace, index: NoteIndex) -> NoteIndex:
    notes = {f"{name}.md": f"# {name}\n\nbudget {digits('2024', zero)} closed\n"
             for name, zero in SCRIPTS.items()}  # fmt: skip
    notes["ascii.md"] = "# ascii\n\nbudget 2024 closed\n"
    return index_notes(ws, index, "xx", notes)


def test_every_scripts_digits_find_the_others(numbers: NoteIndex) -> None:
    every = {f"{name}.md" for name in SCRIPTS} | {"ascii.md"}
    assert found(numbers, "xx", "2024") == every
    for name, zero in SCRIPTS.items():
        assert found(numbers, "xx", digits("2024", zero)) == every, name
        assert found(numbers, "xx", f'"budget {digits("2024", zero)} closed"') == every, name
    assert found(numbers, "xx", "2025") == set()


def test_digits_among_letters_and_in_runs(ws: Workspace, index: NoteIndex) -> None:
    """A code of Latin letters and Arabic digits (apart and joined), a Persian year, a
    Thai year inside a run of Thai letters (its digits were the run's bigrams: ``2567``
    did not find it), a year between Japanese letters."""
    index_notes(ws, index, "mix", {
        "iso.md": "# شهادة\n\nحصلنا على ISO-٩٠٠١ هذا العام.\n",
        "iso-ascii.md": "# cert\n\nWe hold ISO-9001 now.\n",
        "code.md": "# رمز\n\nالطراز AB٩٠٠١ جديد.\n",
        "code-ascii.md": "# code\n\nThe model AB9001 is new.\n",
        "fa.md": "# بودجه\n\nبودجه سال ۱۴۰۳ تصویب شد.\n",
        "th.md": "# งบ\n\nงบประมาณปี๒๕๖๗เพิ่มขึ้น\n",
        "ja.md": "# 会議\n\n東京２０２４年の会議\n",
        "ja-thai-digits.md": "# 会議\n\n大阪๒๐๒๔年の会議\n",
    })  # fmt: skip
    assert found(index, "mix", '"ISO 9001"') == {"iso.md", "iso-ascii.md"}
    assert found(index, "mix", "ISO-٩٠٠١") == {"iso.md", "iso-ascii.md"}
    codes = {"code.md", "code-ascii.md"}
    assert found(index, "mix", "AB٩٠*") == codes  # (a prefix, in either digits)
    assert found(index, "mix", "ab90*") == codes
    assert found(index, "mix", "AB9001") == codes
    assert found(index, "mix", "1403") == {"fa.md"}
    assert found(index, "mix", "١٤٠٣") == {"fa.md"}  # (Arabic-Indic for the Persian)
    assert found(index, "mix", "2567") == {"th.md"}
    assert found(index, "mix", "ปี๒๕๖๗") == {"th.md"}
    assert found(index, "mix", "ปี2567") == {"th.md"}
    assert found(index, "mix", "2024") == {"ja.md", "ja-thai-digits.md"}
    assert found(index, "mix", "२०२४年") == {"ja.md", "ja-thai-digits.md"}


def test_a_number_with_a_star_is_the_number_in_any_digits(numbers: NoteIndex) -> None:
    """``2024*`` is the number 2024 (a rating, ``5*``), and so is ``٢٠٢٤*``."""
    every = {f"{name}.md" for name in SCRIPTS} | {"ascii.md"}
    assert found(numbers, "xx", "٢٠٢٤*") == every
    assert found(numbers, "xx", "२०२४*") == every


def test_the_snippet_marks_the_digits_the_note_holds(ws: Workspace, index: NoteIndex) -> None:
    index_notes(ws, index, "hl", {
        "ar.md": "# تقرير\n\nميزانية عام ٢٠٢٤ أكبر.\n",
        "hi.md": "# रिपोर्ट\n\nवर्ष २०२४ का बजट।\n",
        "th.md": "# งบ\n\nงบประมาณปี๒๕๖๗เพิ่มขึ้น\n",
        "en.md": "# report\n\nThe 2024 budget.\n",
    })  # fmt: skip

    def snippets(query: str) -> dict[str, str]:
        return {row["path"]: row["snippet"] for row in index.search("hl", query)["results"]}

    marked = snippets("2024")
    assert "**٢٠٢٤**" in marked["ar.md"]
    assert "**२०२४**" in marked["hi.md"]
    assert "**2024**" in snippets("٢٠٢٤")["en.md"]
    assert "**٢٠٢٤**" in snippets("۲۰۲۴")["ar.md"]  # (Persian digits for the Arabic)
    assert "**๒๕๖๗**" in snippets("2567")["th.md"]
    assert "**ปี๒๕๖๗**" in snippets("ปี2567")["th.md"]


def on_demand_of(ws: Workspace, index: NoteIndex, lang: str) -> Callable[[str], list[str]]:
    """The notes recall quotes on demand for a question, in ``lang``'s vault."""
    from indexer.jobs.recall import Recall
    from indexer.vault.sandbox import Sandbox
    from indexer.vault.vault import Vault

    recall = Recall(Vault(Sandbox(ws), max_file_bytes=1 << 20), index)

    def on_demand(question: str) -> list[str]:
        result = recall.recall(lang, question, 400)
        return [s["path"] for s in result["sources"] if s["layer"] == "on_demand"]

    return on_demand


def test_recall_finds_a_note_by_its_digits_either_way(ws: Workspace, index: NoteIndex) -> None:
    index_notes(ws, index, "rc", {
        "budget.md": "# ميزانية\n\nأقرت الميزانية في ٢٠٢٤ بعد نقاش طويل.\n",
        "ascii.md": "# خطة\n\nخطة الإنتاج لسنة 1403 جاهزة.\n",
        "other.md": "# أخرى\n\nلا شيء هنا عن ذلك.\n",
    })  # fmt: skip
    on_demand = on_demand_of(ws, index, "rc")
    assert on_demand("what happened in 2024?") == ["budget.md"]
    assert on_demand("ماذا عن ۱۴۰۳؟") == ["ascii.md"]


def test_grep_reads_digits_as_written(ws: Workspace, numbers: NoteIndex) -> None:
    """grep is a literal (or regex) tool: ``٢٠٢٤`` is what it looks for, not ``2024``."""
    from indexer.vault.sandbox import Sandbox
    from indexer.vault.vault import Vault

    vault = Vault(Sandbox(ws), max_file_bytes=1 << 20)
    vault.grep_planner = numbers.grep_plan  # (the trigram index plans the files read)
    for pattern, fixed in (("٢٠٢٤", True), ("٢٠٢٤", False), ("budget 2024", True)):
        hits = vault.grep("xx", pattern, fixed=fixed, ignore_case=True)["matches"]
        want = {"arabic.md"} if pattern == "٢٠٢٤" else {"ascii.md"}
        assert {hit["path"] for hit in hits} == want, pattern


def test_the_digit_folds_are_every_decimal_digit() -> None:
    """Each script's ten digits follow its zero (Unicode's rule for category Nd), and the
    list of zeros is every one Python's tables know."""
    nd = {chr(code) for code in range(0x80, 0x110000) if unicodedata.category(chr(code)) == "Nd"}
    assert set(DIGIT_FOLDS) == nd
    assert all(DIGIT_FOLDS[d] == str(unicodedata.decimal(d)) for d in nd)
    assert len(DIGIT_ZEROS) == len(nd) // 10


def test_recall_keywords_cut_a_spaceless_run_at_its_digits() -> None:
    """A Thai-like run with digits inside gives the keywords it gives in ASCII digits (a
    number is a word of its own in the index: ``นปี๒๕``, across it, found nothing)."""
    from indexer.jobs.keywords import extract_keywords

    questions = {"thai": "งานปี2567อยู่ไหน", "lao": "ບົດປີ2024ຢູ່ໃສ",
                 "myanmar": "ကျောင်း2024ဘယ်မှာ", "khmer": "ឆ្នាំ2024នៅឯណា"}  # fmt: skip
    for name, question in questions.items():
        zero = SCRIPTS[name]
        asked = extract_keywords(digits(question, zero))
        assert [digits(k, zero) for k in extract_keywords(question)] == asked, name
        assert digits("2024" if name != "thai" else "2567", zero) in asked, name


def test_recall_finds_a_thai_note_by_a_year_in_thai_digits(ws: Workspace, index: NoteIndex) -> None:
    index_notes(ws, index, "th", {
        "plan.md": "# แผนงานใหม่\n\nแผนงานปี 2567 ของทีมเสร็จแล้ว\n",
        "old.md": "# แผนงานเก่า\n\nแผนงานปี 2566 ของทีมเสร็จแล้ว\n",
        "other.md": "# อื่นๆ\n\nไม่มีอะไรเกี่ยวกับเรื่องนี้\n",
    })  # fmt: skip
    on_demand = on_demand_of(ws, index, "th")
    # (budget 2567: its keywords were the run, and ``๒๕``, ``๕๖``, ``๖๗``, pieces of no word)
    assert on_demand("งบ๒๕๖๗") == ["plan.md"]
    assert on_demand("แผนงานปี๒๕๖๗อยู่ไหน") == ["plan.md", "old.md"]
