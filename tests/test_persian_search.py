"""A Persian word is found with its plural and its verb prefixes joined to it (``داده``
finds ``داده‌ها``, ``دادهها``, ``داده‌های``; ``خواهیم`` finds ``می‌خواهیم``), on a real
NoteIndex over real files; a word typed with them, a phrase and a prefix are searched as
written, and recall's question finds the bare word from its plural."""

from __future__ import annotations

import pytest
from helpers.indexed_notes import found as found_in
from helpers.indexed_notes import index_notes

from indexer.index.persian_forms import with_affixes, without_plural
from indexer.index.service import NoteIndex
from shared.workspace import Workspace

NOTES = {
    "plural.md": "# الف\n\nاین داده‌ها مهم هستند.\n",
    "typed-joined.md": "# ب\n\nاین دادهها را دیدیم.\n",
    "ezafe.md": "# پ\n\nدادههای جدید رسید.\n",
    "bare.md": "# ت\n\nاین داده مهم است.\n",
    "verb.md": "# ث\n\nما می‌خواهیم برویم.\n",
    "not-verb.md": "# ج\n\nآنها نمی‌خواهند بمانند.\n",
    "other-word.md": "# چ\n\nداد و فریاد بود.\n",
}


@pytest.fixture
def persian(ws: Workspace, index: NoteIndex) -> NoteIndex:
    return index_notes(ws, index, "fa", NOTES)


def found(index: NoteIndex, query: str) -> set[str]:
    return found_in(index, "fa", query)


def test_a_word_is_found_with_its_plural_and_verb_prefixes(persian: NoteIndex) -> None:
    assert found(persian, "داده") == {"plural.md", "typed-joined.md", "ezafe.md", "bare.md"}
    assert found(persian, "خواهیم") == {"verb.md"}
    assert found(persian, "خواهند") == {"not-verb.md"}
    assert found(persian, "داده جدید") == {"ezafe.md"}  # (every word still required)


def test_a_word_typed_with_them_a_phrase_and_a_prefix_are_as_written(
    persian: NoteIndex,
) -> None:
    assert found(persian, "داده‌ها") == {"plural.md", "typed-joined.md"}
    assert found(persian, '"داده"') == {"bare.md"}
    assert found(persian, "داد") == {"other-word.md"}  # another word, not a part of one
    assert found(persian, "می‌خواهیم") == {"verb.md"}


def test_the_snippet_marks_the_word_the_note_holds(persian: NoteIndex) -> None:
    hits = {h["path"]: h["snippet"] for h in persian.search("fa", "داده")["results"]}
    assert "**داده‌ها**" in hits["plural.md"]
    assert "**دادههای**" in hits["ezafe.md"]
    assert "**داده**" in hits["bare.md"]


def test_the_spellings_and_the_plural_taken_off() -> None:
    assert with_affixes("داده") == ("دادهها", "دادههاي", "دادههايي", "ميداده", "نميداده")
    for word in ("از", "data", "נתונים", "داده2"):
        assert with_affixes(word) == ()
    assert without_plural("داده‌ها") == "داده" == without_plural("دادههایی")
    for word in ("تنها", "منها", "data"):  # (two letters left: a word's own ها)
        assert without_plural(word) == word


def test_recall_quotes_a_note_that_says_the_word_without_its_plural(
    ws: Workspace, index: NoteIndex
) -> None:
    from indexer.jobs.recall import Recall
    from indexer.vault.sandbox import Sandbox
    from indexer.vault.vault import Vault

    root = ws.vault_dir("fa")
    root.mkdir(parents=True)
    filler = "".join(f"بند {n} درباره موضوعی دیگر.\n\n" for n in range(30))
    (root / "plan.md").write_text(f"# برنامه\n\n{filler}انتقال داده مشتری روز یکشنبه.\n")
    (root / "other.md").write_text("# دیگر\n\nچیزی اینجا نیست.\n")
    index.reconcile()
    recall = Recall(Vault(Sandbox(ws), max_file_bytes=1 << 20), index)
    result = recall.recall("fa", "درباره داده‌ها چه تصمیمی گرفتیم؟", 400)
    assert [s["path"] for s in result["sources"] if s["layer"] == "on_demand"] == ["plan.md"]
    assert "> … انتقال داده مشتری روز یکشنبه." in result["block"]
