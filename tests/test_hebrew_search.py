"""A Hebrew word is found with the one-letter words joined to it (``נתונים`` finds
``הנתונים``, ``והנתונים``, ``בנתונים``, ``שהנתונים``), on a real NoteIndex over real files;
a phrase and a prefix are searched as written, and a word typed with one is not found
without it (its first letter may be the word's own)."""

from __future__ import annotations

import pytest
from helpers.indexed_notes import found as found_in
from helpers.indexed_notes import index_notes

from indexer.index.hebrew_prefixes import with_prefixes
from indexer.index.query_parse import parse_query
from indexer.index.service import NoteIndex
from shared.workspace import Workspace

NOTES = {
    "the.md": "# פגישה\n\nנעביר את הנתונים ביום שישי.\n",
    "and-the.md": "# הערה\n\nבדקנו את התוכנית והנתונים יחד.\n",
    "in.md": "# דוח\n\nמצאנו שגיאה בנתונים החדשים.\n",
    "that-the.md": "# סיכום\n\nהוחלט שהנתונים יגובו כל לילה.\n",
    "bare.md": "# טבלה\n\nאלה נתונים ראשוניים מהסקר.\n",
    "pointed.md": "# מנוקד\n\nשמרנו את הַנְּתוּנִים בשרת.\n",
    "other-word.md": "# הודעה\n\nנתון אחד בלבד, ונתן הסביר אותו.\n",
}


@pytest.fixture
def hebrew(ws: Workspace, index: NoteIndex) -> NoteIndex:
    return index_notes(ws, index, "he", NOTES)


def found(index: NoteIndex, query: str) -> set[str]:
    return found_in(index, "he", query)


def test_a_word_is_found_with_the_one_letter_words_joined_to_it(hebrew: NoteIndex) -> None:
    every = {"the.md", "and-the.md", "in.md", "that-the.md", "bare.md", "pointed.md"}
    assert found(hebrew, "נתונים") == every
    assert found(hebrew, "נתונים שישי") == {"the.md"}  # (every word still required)


def test_a_phrase_a_prefix_and_a_word_typed_with_one_are_as_written(hebrew: NoteIndex) -> None:
    assert found(hebrew, '"נתונים"') == {"bare.md"}
    with_the = {"the.md", "pointed.md", "and-the.md", "that-the.md"}  # (not without it)
    assert found(hebrew, "הנתונים") == with_the
    assert found(hebrew, "נתון") == {"other-word.md"}  # another word, not a part of one
    assert found(hebrew, "נתוני*") == {"bare.md"}


def test_leaving_a_word_out_leaves_out_its_joined_spellings(hebrew: NoteIndex) -> None:
    assert found(hebrew, "לילה") == {"that-the.md"}
    assert found(hebrew, "לילה -נתונים") == set()
    assert found(hebrew, "פגישה -נתון") == {"the.md"}


def test_the_snippet_marks_the_word_the_note_holds(hebrew: NoteIndex) -> None:
    hits = {h["path"]: h["snippet"] for h in hebrew.search("he", "נתונים")["results"]}
    assert "**הנתונים**" in hits["the.md"]
    assert "**שהנתונים**" in hits["that-the.md"]
    assert "**נתונים**" in hits["bare.md"]
    assert "**הַנְּתוּנִים**" in hits["pointed.md"]


def test_recall_finds_the_joined_spellings(hebrew: NoteIndex) -> None:
    paths = {hit["path"] for hit in hebrew.search_any("he", ["נתונים"], 10)}
    assert {"the.md", "in.md", "bare.md"} <= paths


def test_only_hebrew_words_of_three_letters_or_more_take_them() -> None:
    assert with_prefixes("נתונים")[:3] == ("הנתונים", "ונתונים", "בנתונים")
    for word in ("של", "data", "נתונים2", "بيانات", "נתו\u05bcנים"):
        assert with_prefixes(word) == ()
    assert parse_query("נתונים").match.startswith('("נתונים" OR "הנתונים"')


def test_a_question_finds_the_word_with_the_article_or_without() -> None:
    from indexer.jobs.keywords import extract_keywords

    assert extract_keywords("מתי נעביר את הנתונים והתוכנית של הלקוח?") == [
        "נעביר",
        "נתונים",
        "תוכנית",
        "לקוח",
    ]
    # Three letters left lose it too (two would not be searched with the prefixes);
    # a word whose own first letter it is still finds itself.
    assert extract_keywords("מה ההחלטה על הבית?") == ["החלטה", "בית"]
    assert extract_keywords("לאן הלך?") == ["הלך"]
    assert "הבית" in with_prefixes("בית") and "החלטה" in with_prefixes("חלטה")
    assert "הסבר" in with_prefixes("סבר")


def test_recall_quotes_a_note_that_says_the_word_without_the_article(
    ws: Workspace, index: NoteIndex
) -> None:
    from indexer.jobs.recall import Recall
    from indexer.vault.sandbox import Sandbox
    from indexer.vault.vault import Vault

    root = ws.vault_dir("he")
    root.mkdir(parents=True)
    filler = "".join(f"פסקה {n} על נושא אחר לגמרי.\n\n" for n in range(30))
    (root / "plan.md").write_text(f"# תוכנית\n\n{filler}העברת נתונים של לקוחות ביום ראשון.\n")
    (root / "other.md").write_text("# אחר\n\nאין כאן כלום על זה.\n")
    index.reconcile()
    recall = Recall(Vault(Sandbox(ws), max_file_bytes=1 << 20), index)
    result = recall.recall("he", "מה החלטנו לגבי הנתונים?", 400)
    assert [s["path"] for s in result["sources"] if s["layer"] == "on_demand"] == ["plan.md"]
    assert "> … העברת נתונים של לקוחות ביום ראשון." in result["block"]


def test_recall_finds_a_three_letter_word_asked_with_the_article(
    ws: Workspace, index: NoteIndex
) -> None:
    from indexer.jobs.recall import Recall
    from indexer.vault.sandbox import Sandbox
    from indexer.vault.vault import Vault

    root = ws.vault_dir("he")
    root.mkdir(parents=True)
    (root / "home.md").write_text("# משפחה\n\nקנינו בית חדש בחיפה.\n")
    (root / "other.md").write_text("# אחר\n\nאין כאן כלום על זה.\n")
    index.reconcile()
    recall = Recall(Vault(Sandbox(ws), max_file_bytes=1 << 20), index)
    result = recall.recall("he", "מה עם הבית?", 400)
    assert [s["path"] for s in result["sources"] if s["layer"] == "on_demand"] == ["home.md"]


YIDDISH = {
    "ligature.md": "# װאַסער\n\nמיר טרינקען װאַסער און ײַדיש ברױט.\n",
    "letters.md": "# וואסער\n\nדאס וואסער איז קאלט.\n",
}


def test_yiddish_ligatures_are_their_two_letters(ws: Workspace, index: NoteIndex) -> None:
    """``וואסער`` (two vavs, as most keyboards type it) did not find ``װאַסער`` (the
    ligature U+05F0, as YIVO texts write it), nor the other way round."""
    index_notes(ws, index, "yi", YIDDISH)
    both = {"ligature.md", "letters.md"}
    assert found_in(index, "yi", "וואסער") == both
    assert found_in(index, "yi", "װאַסער") == both
    assert found_in(index, "yi", "ברויט") == {"ligature.md"}  # (U+05F1: vav yod)
    assert found_in(index, "yi", "יידיש") == {"ligature.md"}  # (U+05F2: double yod)
    assert found_in(index, "yi", "וואס*") == both

    def snippets(query: str) -> dict[str, str]:
        return {row["path"]: row["snippet"] for row in index.search("yi", query)["results"]}

    # the hit is marked however it is spelled (it was not marked in the ligature's note)
    assert "**װאַסער**" in snippets("וואסער")["ligature.md"]
    assert "**וואסער**" in snippets("װאַסער")["letters.md"]
    assert "**װאַסער**" in snippets("וואס*")["ligature.md"]
    assert "**ברױט**" in snippets("ברויט")["ligature.md"]


def test_recall_seeks_a_word_bare_when_no_note_holds_it_with_its_particle(
    ws: Workspace, index: NoteIndex
) -> None:
    """``מה אמרתי לדנה?`` (what did I tell Dana?) found nothing: ``לדנה`` is in no note,
    ``דנה`` is. A word some note holds as written stays (``מספר``, number, is never
    sought as ``ספר``, book)."""
    from indexer.index.hebrew_prefixes import without_particle
    from indexer.jobs.recall import Recall
    from indexer.vault.sandbox import Sandbox
    from indexer.vault.vault import Vault

    index_notes(ws, index, "he", {
        "dana.md": "# דנה\n\nדנה אמרה שהיא תגיע מחר בבוקר.\n",
        "renovation.md": "# שיפוץ\n\nהשיפוץ של המטבח מתחיל ביום שני.\n",
        "phone.md": "# טלפון\n\nמספר הטלפון של המשרד השתנה.\n",
        "book.md": "# ספר\n\nספר טוב על היסטוריה.\n",
    })  # fmt: skip
    recall = Recall(Vault(Sandbox(ws), max_file_bytes=1 << 20), index)

    def on_demand(question: str) -> list[str]:
        result = recall.recall("he", question, 400)
        return [s["path"] for s in result["sources"] if s["layer"] == "on_demand"]

    assert on_demand("מה אמרתי לדנה?") == ["dana.md"]
    assert on_demand("מתי מתחילים בשיפוץ?") == ["renovation.md"]
    assert on_demand("מה המספר?") == ["phone.md"]  # (as written: no book)
    assert without_particle("ולדנה") == "דנה" and without_particle("לדן") is None
    assert without_particle("dana") is None
