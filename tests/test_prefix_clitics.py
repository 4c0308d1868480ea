"""A prefix whose last part is short because an apostrophe cuts it (``it's*``) is the
word, not a refusal; after a hyphen a short part is a word's start: refused, saying so."""

from __future__ import annotations

import pytest

from indexer.index.query_parse import Term, parse_query
from indexer.index.service import NoteIndex
from shared.errors import InvalidArgumentError
from shared.workspace import Workspace


@pytest.mark.parametrize(
    ("query", "word"),
    [("it's*", "it's"), ("don\u2019t*", "don\u2019t"), ("we'll*", "we'll"), ("ארה״ב*", "ארה״ב")],
)
def test_a_prefix_whose_last_part_is_a_clitic_is_the_word(query: str, word: str) -> None:
    """``it's*`` was refused: its last word, ``s``, is under the prefix minimum. After an
    apostrophe (or a Hebrew gershayim) a short part is a clitic or an ending, whole: the
    word is searched, the ``*`` ignored."""
    assert parse_query(query).terms == (Term(word, phrase=False),)
    assert parse_query(f"x OR {query}").match == f'("x") OR ("{word}")'


def test_longer_last_parts_stay_prefixes_and_a_hyphen_does_not_join_a_clitic() -> None:
    assert parse_query("l'amour*").terms == (Term("l'amour", phrase=False, prefix=True),)
    with pytest.raises(InvalidArgumentError, match=r"\(its last part, 'ra'\): give at least"):
        parse_query("x-ra*")
    with pytest.raises(InvalidArgumentError, match=r"too short: give at least 3 characters"):
        parse_query("'s*")


def test_a_clitic_prefix_finds_the_word(ws: Workspace, index: NoteIndex) -> None:
    root = ws.vault_dir("en")
    root.mkdir(parents=True)
    (root / "a.md").write_text("# A\n\nWell, it's raining.\n", encoding="utf-8")
    (root / "b.md").write_text("# B\n\nIt is sunny, its sky is blue.\n", encoding="utf-8")
    index.reconcile()
    found = index.search("en", "it's*")
    assert [hit["path"] for hit in found["results"]] == ["a.md"]
    assert "**it's**" in found["results"][0]["snippet"]
