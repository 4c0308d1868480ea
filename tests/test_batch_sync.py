"""A folder moved, and its move undone, reach the index in one transaction, each moved
note's row re-keyed rather than its words tokenized out and in again (``batch_sync``);
and the rows are exactly those a rebuild makes: search and grep find every note at its
new path and none at the old."""

from __future__ import annotations

import os
import time
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.vault_stack import reconciled_index, recording_vault

from indexer.index.service import NoteIndex
from indexer.sqlite_lib import sqlite3
from indexer.vault.vault import Vault
from shared.workspace import Workspace

REASON = "entry:e1 tidy"
NFD = unicodedata.normalize("NFD", "café.md")  # "cafe" + U+0301, as a Mac writes it
# Notes in many scripts and kinds; a title from the file name (no heading), a text file
# (its type from its suffix), a name spelled NFD on disk, two copies of one note under
# one name, a note whose text is not UTF-8.
NOTES: dict[str, bytes] = {
    "topics/a/alpha.md": b"# Alpha\n\nquokka words about alpha\n",
    "topics/a/bare-name.md": b"no heading here, quokkabare\n",
    "topics/b/ελληνικά.md": "# Ελληνικά\n\nquokkagreek καλημέρα κόσμε\n".encode(),
    "topics/b/" + NFD: b"quokkanfd spelled as a Mac does\n",
    "topics/b/中文.md": "# 中文\n\nquokkahan 你好世界\n".encode(),
    "topics/b/list.txt": b"quokkatext plain\n",
    "topics/c/copy.md": b"# Copy\n\nquokkacopy\n",
    "topics/d/copy.md": b"# Copy\n\nquokkacopy\n",
    "topics/d/latin1.md": b"# Latin\n\nquokkalatin caf\xe9\n",
}
PATHS = sorted(unicodedata.normalize("NFC", rel) for rel in NOTES)  # (as tools name them)
WORDS = [
    "quokka",
    "quokkanfd",
    "quokkabare",
    "quokkasummary",
    "quokkagreek",
    "quokkahan",
    "quokkatext",
]


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    workspace = Workspace(tmp_path / "ws")
    for rel, data in NOTES.items():
        path = workspace.vault_dir("en") / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    (workspace.vault_dir("en") / "home.md").write_text("# Home\n")
    return workspace


@pytest.fixture
def index(ws: Workspace) -> Iterator[NoteIndex]:
    yield from reconciled_index(ws)


@pytest.fixture
def vault(ws: Workspace, index: NoteIndex) -> Iterator[Vault]:
    yield from recording_vault(ws, index)


def traced(index: NoteIndex) -> list[str]:
    """Every statement the index's writer runs from now on (SQLite's own trace)."""
    statements: list[str] = []
    writer = index._db.writer
    assert writer is not None
    writer.set_trace_callback(statements.append)
    return statements


def transactions(statements: list[str]) -> int:
    return sum(1 for s in statements if s.startswith("BEGIN"))


def tokenized(statements: list[str]) -> list[str]:
    """The statements that wrote words or trigrams (a note tokenized in or out)."""
    return [s for s in statements if "notes_fts" in s or "notes_tri" in s]


def rows(index: NoteIndex) -> list[tuple]:
    """Every row but its id, by path."""
    with sqlite3.connect(index.path) as conn:
        return conn.execute(
            "SELECT lang, path, title, type, type_key, abstract, tags, tag_keys, frontmatter,"
            " body, head, joined, exact, size, mtime_ns, ctime_ns, hash, problem"
            " FROM notes ORDER BY lang, path"
        ).fetchall()


def found(index: NoteIndex) -> dict[str, list[str]]:
    """Paths each word finds, by words (FTS, summaries too) and by trigrams (grep)."""
    out: dict[str, list[str]] = {}
    with sqlite3.connect(index.path) as conn:
        for word in WORDS:
            out[f"fts {word}"] = sorted(
                path
                for (path,) in conn.execute(
                    "SELECT path FROM notes JOIN notes_fts ON notes_fts.rowid = notes.id"
                    " WHERE notes_fts MATCH ?",
                    (word,),
                )
            )
    for word in WORDS:  # (grep's candidates, from the trigrams)
        plan = index.grep_plan("en", word, True, False)
        assert plan is not None
        out[f"tri {word}"] = sorted(plan.candidates)
    return out


def as_rebuilt(index: NoteIndex) -> None:
    """The rows and what words and trigrams find are those of an index built anew."""
    held, finds = rows(index), found(index)
    index.rebuild()
    assert rows(index) == held
    assert found(index) == finds


def test_a_folder_move_is_one_transaction_and_tokenizes_no_note_again(
    vault: Vault, index: NoteIndex
) -> None:
    statements = traced(index)
    vault.move("en", "topics", "archive/topics", reason=REASON)
    assert transactions(statements) == 1  # (one per file: 18)
    assert tokenized(statements) == []  # no note's bytes changed: none tokenized
    hits = index.search("en", "quokkacopy")["results"]
    assert sorted(hit["path"] for hit in hits) == [
        "archive/topics/c/copy.md",
        "archive/topics/d/copy.md",
    ]
    assert not any(p.startswith("topics/") for p in found(index)["tri quokka"])
    assert len(found(index)["tri quokka"]) == len(NOTES)
    as_rebuilt(index)


def test_undo_of_the_move_is_one_transaction_and_tokenizes_no_note_again(
    vault: Vault, index: NoteIndex
) -> None:
    vault.move("en", "topics", "archive/topics", reason=REASON)
    statements = traced(index)
    done = vault.undo("en", "e1")
    assert len(done["files"]) == 2 * len(NOTES)
    assert transactions(statements) == 1
    assert tokenized(statements) == []
    assert sorted(found(index)["tri quokka"]) == PATHS
    as_rebuilt(index)


def test_a_note_whose_links_the_move_rewrote_is_indexed_anew(
    vault: Vault, index: NoteIndex, ws: Workspace
) -> None:
    """Its bytes changed: its row is rebuilt (tokenized), the others re-keyed."""
    (ws.vault_dir("en") / "topics/a/out.md").write_text("# Out\n\nquokka [home](../../home.md)\n")
    index.reconcile()
    statements = traced(index)
    vault.move("en", "topics", "deep/er/topics", reason=REASON)
    assert transactions(statements) == 1
    assert (
        len([s for s in tokenized(statements) if s.startswith("INSERT INTO notes_fts (rowid")]) == 1
    )
    text = (ws.vault_dir("en") / "deep/er/topics/a/out.md").read_text()
    assert "../../../../home.md" in text
    as_rebuilt(index)


def test_a_file_renamed_takes_its_new_name_as_its_title(vault: Vault, index: NoteIndex) -> None:
    """A row depends on its file's name: a note renamed is parsed anew, not re-keyed."""
    vault.move("en", "topics/a/bare-name.md", "topics/a/other-name.md", reason=REASON)
    hit = index.search("en", "quokkabare")["results"]
    assert [(h["path"], h["title"]) for h in hit] == [("topics/a/other-name.md", "other-name")]
    as_rebuilt(index)


def test_a_folder_moved_by_another_program_is_re_keyed_by_the_watcher(
    ws: Workspace, index: NoteIndex
) -> None:
    """A folder's summary too (its row's id below 0 stays so)."""
    summary = ws.vault_dir("en") / "topics/a/.overview.md"
    summary.write_text("---\ntype: summary\n---\nquokkasummary of a\n")
    index.start_background()
    deadline = time.monotonic() + 30
    while index.partial and time.monotonic() < deadline:  # (the start's reconcile)
        time.sleep(0.02)
    statements = traced(index)
    root = ws.vault_dir("en")
    os.makedirs(root / "elsewhere")
    os.rename(root / "topics", root / "elsewhere/topics")
    while time.monotonic() < deadline:
        paths = found(index)["tri quokka"]
        if paths and all(p.startswith("elsewhere/") for p in paths):
            break
        time.sleep(0.02)
    moved = sorted([*PATHS, "topics/a/.overview.md"])
    assert sorted(found(index)["tri quokka"]) == [f"elsewhere/{p}" for p in moved]
    assert tokenized(statements) == []
    assert found(index)["fts quokkasummary"] == ["elsewhere/topics/a/.overview.md"]
