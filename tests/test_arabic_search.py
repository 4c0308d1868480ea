"""An Arabic word is found with the article joined to it (``بيانات`` finds ``البيانات``,
``والبيانات``, ``للبيانات``), on a real NoteIndex over real files; a word typed with
the article, a phrase and a prefix are searched as written."""

from __future__ import annotations

import pytest
from helpers.indexed_notes import found as found_in
from helpers.indexed_notes import index_notes

from indexer.index.arabic_article import with_article
from indexer.index.query_parse import parse_query
from indexer.index.service import NoteIndex
from shared.workspace import Workspace

NOTES = {
    "the.md": "# اجتماع\n\nسيتم ترحيل قاعدة البيانات يوم الجمعة.\n",
    "and-the.md": "# ملاحظة\n\nراجعنا الخطة والبيانات معاً.\n",
    "with-the.md": "# تقرير\n\nقمنا بالتحقق بالبيانات الجديدة.\n",
    "for-the.md": "# نسخ\n\nنسخة احتياطية للبيانات كل ليلة.\n",
    "bare.md": "# جدول\n\nهذه بيانات أولية من الاستبيان.\n",
    "other-word.md": "# إعلان\n\nصدر بيان رسمي عن الوزارة، وبيانه واضح.\n",
    "vowelled.md": "# مشكول\n\nحفظنا البَيَانَات في الخادم.\n",
}


@pytest.fixture
def arabic(ws: Workspace, index: NoteIndex) -> NoteIndex:
    return index_notes(ws, index, "ar", NOTES)


def found(index: NoteIndex, query: str) -> set[str]:
    return found_in(index, "ar", query)


def test_a_word_is_found_with_the_article_joined_to_it(arabic: NoteIndex) -> None:
    with_or_without = {"the.md", "and-the.md", "with-the.md", "for-the.md", "bare.md"}
    assert found(arabic, "بيانات") == with_or_without | {"vowelled.md"}
    assert found(arabic, "ترحيل بيانات") == {"the.md"}  # (every word still required)


def test_a_word_typed_with_the_article_a_phrase_and_a_prefix_are_as_written(
    arabic: NoteIndex,
) -> None:
    assert found(arabic, "البيانات") == {"the.md", "vowelled.md"}
    assert found(arabic, '"بيانات"') == {"bare.md"}
    assert found(arabic, '"قاعدة البيانات"') == {"the.md"}
    assert found(arabic, "بيان") == {"other-word.md"}  # another word, not a part of one
    assert found(arabic, "بيانا*") == {"bare.md"}


def test_leaving_a_word_out_leaves_out_its_spellings_with_the_article(
    arabic: NoteIndex,
) -> None:
    assert found(arabic, "نسخة") == {"for-the.md"}
    assert found(arabic, "نسخة -بيانات") == set()
    assert found(arabic, "اجتماع -بيانات") == set()
    assert found(arabic, "اجتماع -بيان") == {"the.md"}


def test_the_snippet_marks_the_word_the_note_holds(arabic: NoteIndex) -> None:
    hits = {h["path"]: h["snippet"] for h in arabic.search("ar", "بيانات")["results"]}
    assert "**البيانات**" in hits["the.md"]
    assert "**والبيانات**" in hits["and-the.md"]
    assert "**بيانات**" in hits["bare.md"]
    assert "**البَيَانَات**" in hits["vowelled.md"]


def test_recall_finds_the_spellings_with_the_article(arabic: NoteIndex) -> None:
    paths = {hit["path"] for hit in arabic.search_any("ar", ["بيانات"], 10)}
    assert "the.md" in paths and "for-the.md" in paths


def test_only_arabic_words_of_three_letters_or_more_take_the_article() -> None:
    assert with_article("بيانات") == ("البيانات", "والبيانات", "بالبيانات", "كالبيانات",
                                      "فالبيانات", "للبيانات")  # fmt: skip
    for word in ("من", "البيانات", "للبيت", "data", "بيانات2", "داده‌ها"):
        assert with_article(word) == ()
    assert parse_query("data").match == '"data"'
    assert parse_query("بيانات").match.startswith('("بيانات" OR "البيانات"')


def test_a_question_finds_the_word_with_the_article_or_without() -> None:
    from indexer.jobs.keywords import extract_keywords

    assert extract_keywords("ماذا قررنا بشأن البيانات؟") == ["قررنا", "بيانات"]
    assert extract_keywords("متى ترحيل قاعدة البيانات والنسخ الاحتياطي؟") == [
        "ترحيل",
        "قاعدة",
        "بيانات",
        "نسخ",
        "احتياطي",
    ]


def test_recall_quotes_a_note_that_says_the_word_without_the_article(
    ws: Workspace, index: NoteIndex
) -> None:
    from indexer.jobs.recall import Recall
    from indexer.vault.sandbox import Sandbox
    from indexer.vault.vault import Vault

    root = ws.vault_dir("ar")
    root.mkdir(parents=True)
    filler = "".join(f"فقرة {n} عن موضوع آخر تماما.\n\n" for n in range(30))
    (root / "plan.md").write_text(f"# خطة\n\n{filler}نقل بيانات العملاء يوم الأحد.\n")
    (root / "other.md").write_text("# أخرى\n\nلا شيء هنا عن ذلك.\n")
    index.reconcile()
    recall = Recall(Vault(Sandbox(ws), max_file_bytes=1 << 20), index)
    result = recall.recall("ar", "ماذا قررنا بشأن البيانات؟", 400)
    assert [s["path"] for s in result["sources"] if s["layer"] == "on_demand"] == ["plan.md"]
    assert "> … نقل بيانات العملاء يوم الأحد." in result["block"]  # (quoted where it is)
