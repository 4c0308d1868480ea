"""Recall in a vault of a language whose words change their ending (Russian, German,
Turkish...): a question's word is looked up by its start, so another form of it is
found; search stays exact, and an English vault looks its words up as they are."""

from __future__ import annotations

from helpers.indexed_notes import found, index_notes

from indexer.index.query_parse import parse_any
from indexer.index.service import NoteIndex
from indexer.jobs.keywords import extract_keywords
from indexer.jobs.recall import Recall
from indexer.jobs.word_stems import inflects, looked_up, looked_up_all
from indexer.vault.sandbox import Sandbox
from indexer.vault.vault import Vault
from shared.workspace import Workspace

NOTES = {
    "db.md": "# Переезд\n\nМы перенесли базу данных на новый сервер в понедельник.\n",
    "other.md": "# Отпуск\n\nОтпуск начинается в июле, билеты куплены.\n",
}


def on_demand(ws: Workspace, index: NoteIndex, lang: str, question: str) -> list[str]:
    recall = Recall(Vault(Sandbox(ws), max_file_bytes=1 << 20), index)
    result = recall.recall(lang, question, 400)
    return [s["path"] for s in result["sources"] if s["layer"] == "on_demand"]


def test_a_russian_question_finds_another_form_of_its_word(ws: Workspace, index: NoteIndex) -> None:
    index_notes(ws, index, "ru", NOTES)
    assert on_demand(ws, index, "ru", "Что мы решили насчёт данными?") == ["db.md"]
    assert on_demand(ws, index, "ru", "Куда перенесены серверы?") == ["db.md"]
    assert found(index, "ru", "данными") == set()  # search is exact


def test_the_note_is_quoted_where_another_form_of_the_word_is(
    ws: Workspace, index: NoteIndex
) -> None:
    filler = "".join(f"Абзац {n} совсем о другом деле.\n\n" for n in range(40))
    notes = {"long.md": f"# Журнал\n\n{filler}Резервные копии данных лежат в облаке.\n"}
    index_notes(ws, index, "ru", notes)
    recall = Recall(Vault(Sandbox(ws), max_file_bytes=1 << 20), index)
    block = recall.recall("ru", "Где резервная копия данными?", 300)["block"]
    assert "> … Резервные копии данных лежат в облаке." in block


def test_a_german_compound_and_plural_are_found_in_a_german_vault_only(
    ws: Workspace, index: NoteIndex
) -> None:
    notes = {"d.md": "# Notizen\n\nDie Entscheidung fiel am Montag: wir bleiben bei SQLite.\n"}
    index_notes(ws, index, "de-AT", notes)
    assert on_demand(ws, index, "de-AT", "Welche Entscheidungen gab es?") == ["d.md"]
    english = {"e.md": "# Notes\n\nThe decision was made on Monday.\n"}
    index_notes(ws, index, "en", english)
    assert on_demand(ws, index, "en", "Which decisions were made?") == []


def test_which_words_are_looked_up_by_their_start() -> None:
    assert looked_up("данных") == "данны*" and looked_up("Entscheidungen") == "Entscheidung*"
    assert looked_up("база") == "база" and looked_up("10000") == "10000"
    assert looked_up('"база данных"') == '"база данных"'
    assert inflects("ru") and inflects("de-CH") and inflects("TR")
    assert not inflects("en") and not inflects("ja") and not inflects("zh-Hans")
    assert looked_up_all("en", ["decisions"]) == ["decisions"]
    assert parse_any(["данны*", "сервер"]).match.startswith('"данны" * OR ')


def test_a_turkish_word_opening_with_a_dotted_capital_is_looked_up_by_its_start(
    ws: Workspace, index: NoteIndex
) -> None:
    """``İşlerim`` lower-cased to ``i̇şlerim``, an ``i`` with a combining dot: a word with
    a mark is looked up as written, so the note's ``işleri`` was not found (and the
    keywords' heading showed the dot)."""
    index_notes(ws, index, "tr", {"jobs.md": "# Notlar\n\nBu haftanın işleri bitti.\n"})
    assert on_demand(ws, index, "tr", "İşlerim ne durumda?") == ["jobs.md"]
    assert on_demand(ws, index, "tr", "İŞLERİM NE DURUMDA?") == ["jobs.md"]
    assert extract_keywords("İstanbul'da ne oldu?") == ["istanbul", "oldu"]
