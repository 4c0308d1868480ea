"""The SQLite statements a write of a note costs the index (SQLite's own trace of the
index's writer): the row replaced keeps its id (no look for new ids), and the tool's
etag is compared with the hash the sync just wrote (no read of the row back). Counted,
never timed; what the rows hold is checked against a search."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.vault_stack import reconciled_index, recording_vault

from indexer.index.service import NoteIndex
from indexer.vault.vault import Vault
from shared.workspace import Workspace

NOTE = "# Note\n\nquokka words in a note\n"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    workspace = Workspace(tmp_path / "ws")
    workspace.vault_dir("en").mkdir(parents=True)
    return workspace


@pytest.fixture
def index(ws: Workspace) -> Iterator[NoteIndex]:
    yield from reconciled_index(ws)


@pytest.fixture
def vault(ws: Workspace, index: NoteIndex) -> Iterator[Vault]:
    yield from recording_vault(ws, index)


def traced(index: NoteIndex, call) -> list[str]:  # type: ignore[no-untyped-def]
    """Every statement SQLite's trace shows the index's writer run during ``call`` (its
    own, ``-- ``-prefixed, among them)."""
    writer = index._db.writer
    assert writer is not None
    statements: list[str] = []
    writer.set_trace_callback(statements.append)
    try:
        call()
    finally:
        writer.set_trace_callback(None)
    return statements


def index_statements(index: NoteIndex, call) -> list[str]:  # type: ignore[no-untyped-def]
    """The top-level statements the index's writer ran during ``call``."""
    return [s for s in traced(index, call) if not s.startswith("--")]


def test_a_write_over_a_note_neither_looks_for_new_ids_nor_reads_its_row_back(
    vault: Vault, index: NoteIndex
) -> None:
    vault.write("en", "a.md", NOTE)
    ran = index_statements(index, lambda: vault.write("en", "a.md", NOTE + "wombat\n"))
    assert not [s for s in ran if s.startswith("SELECT max(")]
    assert not [s for s in ran if s.startswith("SELECT hash FROM notes")]
    assert [r["path"] for r in index.search("en", "wombat")["results"]] == ["a.md"]
    assert index.search("en", "quokka")["results"][0]["path"] == "a.md"


def test_a_new_note_still_gets_a_new_id(vault: Vault, index: NoteIndex) -> None:
    vault.write("en", "a.md", NOTE)
    ran = index_statements(index, lambda: vault.write("en", "b.md", "# B\n\nnumbat\n"))
    assert len([s for s in ran if s.startswith("SELECT max(")]) == 1
    assert [r["path"] for r in index.search("en", "numbat")["results"]] == ["b.md"]


def segments_written(index: NoteIndex, call) -> dict[str, int]:  # type: ignore[no-untyped-def]
    """How many segments each FTS table wrote during ``call`` (a segment of a short note
    is one leaf page: one row of the table's ``_idx``, as SQLite's trace shows FTS5's own
    statements)."""
    statements = traced(index, call)
    return {
        table: sum(s.startswith(f"-- INSERT INTO 'main'.'{table}_idx'") for s in statements)
        for table in ("notes_fts", "notes_tri")
    }


def test_a_write_over_a_note_adds_one_segment_to_each_fts_table(
    vault: Vault, index: NoteIndex
) -> None:
    vault.write("en", "a.md", NOTE)
    written = segments_written(index, lambda: vault.write("en", "a.md", "# Note\n\nwombat\n"))
    assert written == {"notes_fts": 1, "notes_tri": 1}
    assert [r["path"] for r in index.search("en", "wombat")["results"]] == ["a.md"]
    assert index.search("en", "quokka")["results"] == []
    writer = index._db.writer
    assert writer is not None
    for trigram, count in (("quo", 0), ("wom", 1)):  # (the old row's trigrams are gone)
        rows = writer.execute("SELECT rowid FROM notes_tri WHERE notes_tri MATCH ?", (trigram,))
        assert len(rows.fetchall()) == count
