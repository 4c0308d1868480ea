"""A note's abstract keeps its no-break spaces (U+00A0, U+2007, U+202F), as a snippet
does: the abstract is a filter-only search's snippet, stored in the index's rows, and
quoted in folder summaries; ``1 000 €`` and French ``« x »`` came out with plain
spaces, and a quote of them no longer held the note's text."""

from __future__ import annotations

import pytest

from indexer.index.abstract import note_abstract
from indexer.index.service import NoteIndex
from indexer.jobs.summary_texts import read_answer
from shared.workspace import Workspace

FRENCH = "Le prix\u00a0: 1\u00a0000\u00a0€ pour «\u202fx\u202f»."


@pytest.mark.parametrize(
    ("meta", "body", "expected"),
    [
        ({}, f"# Titre\n\n{FRENCH}\n", FRENCH),
        ({"summary": FRENCH}, "Autre chose.\n", FRENCH),
        ({}, "Il a dit «\u00a0**bonjour**\u00a0»\nhier\n", "Il a dit «\u00a0bonjour\u00a0» hier"),
        ({}, "figure\u2007: 12\u2007345\n", "figure\u2007: 12\u2007345"),
        (  # a run of them alone is one; mixed with other white space, one space
            {},
            "a\u00a0\u00a0\u00a0b \u00a0\n  c\t\u202fd\n",
            "a\u00a0b c d",
        ),
        ({}, "sans espace insécable\n\n", "sans espace insécable"),
    ],
)
def test_an_abstract_keeps_no_break_spaces(meta: dict, body: str, expected: str) -> None:
    assert note_abstract(meta, body, "Titre") == expected


def test_a_filter_only_search_shows_the_abstract_with_its_no_break_spaces(
    ws: Workspace, index: NoteIndex
) -> None:
    note = ws.vault_dir("fr") / "prix.md"
    note.parent.mkdir(parents=True)
    note.write_text(f"---\ntags: [budget]\n---\n# Prix\n\n{FRENCH}\n", encoding="utf-8")
    index.reconcile()
    found = index.search("fr", "", tags=["budget"])["results"]
    assert [hit["snippet"] for hit in found] == [FRENCH]


def test_a_models_folder_abstract_keeps_no_break_spaces() -> None:
    abstract, _ = read_answer({"abstract": f"Budgets\u00a0:\n{FRENCH}", "overview": "Notes."})
    assert abstract == f"Budgets\u00a0: {FRENCH}"
