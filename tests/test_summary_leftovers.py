"""Folder summaries (``.overview.md``) around an undo and a folder move, with the real
vault, index, history and summaries job on a temp dir: an undo takes away a folder the
entry's note made once only the job's summary is left in it (never a person's file),
and a folder move (and its undo) tells the index of the summaries that moved, so that
``search(type="summary")`` answers the new path at once."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.history import check_history_consistent
from helpers.vault_stack import reconciled_index, recording_vault

from indexer.index.service import NoteIndex
from indexer.jobs.summaries import Summaries
from indexer.vault.vault import Vault
from shared.workspace import Workspace

DAY = "events/2026/12/06.md"
NOTE = "# جلسه\n\nبا تیم جلسه داشتیم quokkaday\n"  # (a Persian vault: any script)


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    workspace = Workspace(tmp_path / "ws")
    root = workspace.vault_dir("fa")
    (root / "topics/a").mkdir(parents=True)
    (root / "topics/a/alpha.md").write_text("# Alpha\n\nquokkanote words\n")
    (root / "home.md").write_text("# Home\n")
    return workspace


@pytest.fixture
def index(ws: Workspace) -> Iterator[NoteIndex]:
    yield from reconciled_index(ws)


@pytest.fixture
def vault(ws: Workspace, index: NoteIndex) -> Iterator[Vault]:
    yield from recording_vault(ws, index)


@pytest.fixture
def summaries(vault: Vault, index: NoteIndex) -> Summaries:
    """The job as the server wires it (no model: the fallback)."""
    return Summaries(
        vault.sandbox,
        index=index,
        written=index.note_changed,
        recorder=vault.recorder,
        file_lock=vault.file_lock,
    )


def summary_paths(index: NoteIndex, word: str) -> list[str]:
    """The summaries holding ``word`` (the fallback's title in a Persian vault: نمای کلی)."""
    found = index.search("fa", word, type="summary")["results"]
    return sorted(hit["path"] for hit in found)


def below(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_undo_takes_the_folders_its_note_made_once_only_summaries_are_left(
    vault: Vault, index: NoteIndex, summaries: Summaries, ws: Workspace
) -> None:
    root = ws.vault_dir("fa")
    vault.write("fa", DAY, NOTE, reason="entry:e1 جلسه")
    asyncio.run(summaries.run_pass())  # (the pass a server runs a few seconds later)
    assert (root / "events/2026/12/.overview.md").is_file()
    assert summary_paths(index, "کلی") != []
    vault.undo("fa", "e1")
    assert not (root / "events").exists()  # (was: events/2026/12/ left, with summaries)
    assert [p for p in summary_paths(index, "کلی") if p.startswith("events/")] == []
    rows = vault.history("fa", "events/2026/12/.overview.md")["versions"]
    assert [(r["op"], r["reason"]) for r in rows[:1]] == [("delete", "undo entry:e1")]
    asyncio.run(summaries.run_pass())
    assert not (root / "events").exists()
    assert "topics/a/.overview.md" in below(root)


def test_undo_keeps_a_folder_holding_a_persons_file(
    vault: Vault, summaries: Summaries, ws: Workspace
) -> None:
    """A hand-written .overview.md (no summary's fields) is theirs; a summary beside
    another dot-file (theirs too) stays with it; the folders above stay."""
    root = ws.vault_dir("fa")
    vault.write("fa", DAY, NOTE, reason="entry:e1 جلسه")
    vault.write("fa", "events/2026/11/01.md", NOTE, reason="entry:e2 x")
    asyncio.run(summaries.run_pass())
    (root / "events/2026/11/.overview.md").write_text("# my own overview\n")
    (root / "events/2026/12/.keep").write_text("")
    vault.undo("fa", "e1")
    vault.undo("fa", "e2")
    assert (root / "events/2026/11/.overview.md").read_text() == "# my own overview\n"
    assert (root / "events/2026/12/.keep").exists()
    assert (root / "events/2026/12/.overview.md").exists()


def test_a_folder_move_tells_the_index_of_the_summaries_it_carried(
    vault: Vault, index: NoteIndex, summaries: Summaries, ws: Workspace
) -> None:
    root = ws.vault_dir("fa")
    asyncio.run(summaries.run_pass())
    assert summary_paths(index, "کلی") == [
        ".overview.md",
        "topics/.overview.md",
        "topics/a/.overview.md",
    ]
    vault.move("fa", "topics", "archive/topics", reason="entry:e3 tidy")
    assert summary_paths(index, "کلی") == [
        ".overview.md",
        "archive/topics/.overview.md",
        "archive/topics/a/.overview.md",
    ]  # at once, not when the watcher or a reconcile comes by
    vault.undo("fa", "e3")
    assert (root / "topics/a/alpha.md").is_file()
    assert not (root / "archive").exists()  # (the folders the move made: only summaries)
    assert summary_paths(index, "کلی") == [".overview.md"]
    asyncio.run(summaries.run_pass())
    assert summary_paths(index, "کلی") == [
        ".overview.md",
        "topics/.overview.md",
        "topics/a/.overview.md",
    ]


def test_history_follows_the_summaries_a_folder_move_carries(
    vault: Vault, index: NoteIndex, summaries: Summaries, ws: Workspace
) -> None:
    """History said the old path's summary was still there, and knew the new one only
    as an outside baseline at the next start: the carried summaries are the summaries
    job's moves now (not the entry's: its undo is never blocked by a later pass)."""
    asyncio.run(summaries.run_pass())
    vault.move("fa", "topics", "archive/topics", reason="entry:e3 tidy")
    vault.recorder.settle()
    assert check_history_consistent(ws.root) > 0
    rows = vault.history("fa", "archive/topics/a/.overview.md")["versions"]
    assert [(r["op"], r["actor"]) for r in rows] == [("move", "job:summaries")]
    gone = vault.history("fa", "topics/a/.overview.md")["versions"]
    assert [r["op"] for r in gone[:1]] == ["move"]
    vault.undo("fa", "e3")  # (the notes back; the summaries left alone are taken)
    asyncio.run(summaries.run_pass())
    vault.recorder.settle()
    assert check_history_consistent(ws.root) > 0
