"""An apostrophe inside a Ukrainian or Belarusian word is a letter of it (``п'ять``,
five; ``сям'я``, family), not an elision: recall seeks the whole word, as search finds
it, not the piece after the apostrophe (``ять`` was also ``дев'ять``, nine)."""

from __future__ import annotations

from helpers.indexed_notes import index_notes
from test_digit_search import on_demand_of

from indexer.index.service import NoteIndex
from indexer.jobs.keywords import extract_keywords
from shared.workspace import Workspace


def test_a_cyrillic_word_keeps_its_apostrophe() -> None:
    assert extract_keywords("Скільки пʼять?") == ["п'ять"]
    assert extract_keywords("Що про м'ясо?") == ["м'ясо"]
    assert extract_keywords("Коли об’єкт здали?") == ["об'єкт", "здали"]
    assert "сям'я" in extract_keywords("Дзе мая сям'я?")  # (Belarusian)
    # (elision in the Latin script stays as it was: the word after it, or before)
    assert extract_keywords("Qui est dans l'équipe?") == ["équipe"]
    assert extract_keywords("the user's settings") == ["user", "settings"]


def test_recall_finds_the_word_not_a_piece_of_another(ws: Workspace, index: NoteIndex) -> None:
    index_notes(ws, index, "uk", {
        "five.md": "# Яблука\n\nМи купили пʼять яблук на ринку.\n",
        "nine.md": "# Груші\n\nМи купили дев'ять груш на ринку.\n",
        "meat.md": "# Обід\n\nМ’ясо було смачне.\n",
    })  # fmt: skip
    on_demand = on_demand_of(ws, index, "uk")
    assert on_demand("Скільки п'ять?") == ["five.md"]
    assert on_demand("Яке було мʼясо?") == ["meat.md"]


def test_another_form_of_the_word_is_found_in_a_ukrainian_vault(
    ws: Workspace, index: NoteIndex
) -> None:
    """``м'ясом`` (with meat) is looked up by its start, as a word without an apostrophe
    is in an inflecting vault (``word_stems``): it was looked up as written, and found
    none of the note's ``мʼясо``."""
    index_notes(ws, index, "uk", {
        "meat.md": "# Обід\n\nМʼясо було смачне.\n",
        "object.md": "# Будова\n\nОб'єкти здали вчасно.\n",
        "other.md": "# Інше\n\nЯсон прийшов.\n",
    })  # fmt: skip
    on_demand = on_demand_of(ws, index, "uk")
    assert on_demand("Що з м'ясом?") == ["meat.md"]
    assert on_demand("Коли здали об’єктом?") == ["object.md"]
