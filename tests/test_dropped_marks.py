"""The combining marks unicode61 drops wherever they stand (an ``i`` and U+0307, which
no letter composes with) are dropped by the snippet's loose reading too. On a real
NoteIndex over real files and a real SQLite file.

Before: ``"İstanbul".lower()`` is ``i̇stanbul`` (Python's and JavaScript's lower case of
the Turkish dotted capital); search found every Istanbul note with it and the snippets
marked nothing.
"""

from __future__ import annotations

import contextlib

import pytest

from indexer.index.query import make_snippet
from indexer.index.query_parse import parse_query
from indexer.index.service import NoteIndex
from indexer.sqlite_lib import sqlite3
from shared.workspace import Workspace

NOTES = {
    "a.md": "İstanbul çok güzel bir şehir",
    "b.md": "ISTANBUL and istanbul",
    "c.md": "Bugün İ\u0307stanbul'da",  # a dotted capital with a second dot typed after it
}


def put(ws: Workspace, lang: str, rel: str, text: str) -> None:
    path = ws.vault_dir(lang) / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"# t\n\n{text}\n", encoding="utf-8")


@pytest.mark.parametrize("query", ["İstanbul".lower(), "istanbul", "İSTANBUL", "\u0130stanbul"])
def test_every_istanbul_note_is_found_and_marked(
    ws: Workspace, index: NoteIndex, query: str
) -> None:
    for rel, text in NOTES.items():
        put(ws, "tr", rel, text)
    put(ws, "tr", "other.md", "Ankara başkent")
    index.reconcile()
    results = index.search("tr", query, limit=10)["results"]
    assert sorted(hit["path"] for hit in results) == sorted(NOTES)
    for hit in results:
        assert "**" in hit["snippet"], (query, hit)
        marked = hit["snippet"].split("**")[1]
        assert marked.casefold().replace("\u0307", "") in ("istanbul", "i̇stanbul"), hit


def test_a_mark_no_letter_composes_with_is_marked_with_its_letter() -> None:
    """``n̈`` stays two code points in NFC; search reads ``spinal`` in ``Spın̈al``."""
    snippet = make_snippet("the band Spın\u0308al Tap", parse_query("spinal").terms)
    assert snippet == "the band **Spın\u0308al** Tap"
    snippet = make_snippet("on the i\u0307sland", parse_query("island").terms)
    assert snippet == "on the **i\u0307sland**"


def test_a_mark_search_keeps_is_not_dropped() -> None:
    """U+0305 (overline) is no diacritic to unicode61: ``n̅x`` is not ``nx``."""
    assert "**" not in make_snippet("a n\u0305x b", parse_query("nx").terms)


def test_the_marks_are_those_the_linked_sqlite_drops() -> None:
    """(U+0345 is not dropped: unicode61 folds it to an iota.)"""
    from indexer.index.text import DROPPED_MARKS

    tokenizer = "unicode61 remove_diacritics 2 categories ''L* N* Co M*''"
    marks = [chr(code) for code in range(0x300, 0x370)]
    with contextlib.closing(sqlite3.connect(":memory:")) as conn:
        conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='{tokenizer}')")
        conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
        conn.execute("INSERT INTO t VALUES (?)", (" ".join(f"n{mark}x" for mark in marks),))
        terms = dict(conn.execute("SELECT offset, term FROM v").fetchall())
    assert len(terms) == len(marks)
    assert "".join(mark for at, mark in enumerate(marks) if terms[at] == "nx") == DROPPED_MARKS
