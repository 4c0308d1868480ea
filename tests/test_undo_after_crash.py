"""An undo of a folder move killed midway, then run again after the restart, leaves no
empty folder behind, as an undo that was never interrupted does.

The undo of a moved folder renames its files back one by one, each with its history
rows; the folders emptied go only at the end (``move_leftovers``). A kill between the
two left the files renamed back so far recorded as undone; the undo run again after
the restart took back the rest and removed the folders *those* left, but the folders
the killed run had emptied stayed, empty (found by the kill -9 soak of moves and
undo: ``ملفات 24/ไทย/``, ``ملفات 24/中文/`` left in the vault after the undo of the move
to ``ملفات 24``). The kill is a child process's ``os._exit`` after a few files went
back (the state ``kill -9`` leaves, without a race to win)."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest
from helpers.history import check_history_consistent, run_child
from helpers.vault_stack import reconciled_index, recording_vault

from indexer.vault import lone_summaries
from shared.errors import ConflictError
from shared.workspace import Workspace

FOLDERS = ["ไทย", "中文", "latin"]
PER_FOLDER = 4
KILLED_AFTER = PER_FOLDER + 1  # files renamed back before the kill: a folder and one more

CHILD = textwrap.dedent(
    """
    import os, sys
    from helpers.vault_stack import reconciled_index, recording_vault
    from indexer.vault import undo_moves
    from pathlib import Path
    from shared.workspace import Workspace

    ws = Workspace(Path(sys.argv[1]))
    real = undo_moves.move_back
    done = []

    def move_back_then_die(*args, **kwargs):
        result = real(*args, **kwargs)
        done.append(1)
        if len(done) == int(sys.argv[2]):
            os._exit(9)  # as kill -9: nothing after this runs
        return result

    undo_moves.move_back = move_back_then_die
    for index in reconciled_index(ws):
        for vault in recording_vault(ws, index):
            vault.undo("en", "e1")
    sys.exit("the undo ended before the kill")
    """
)


def folders_below(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_dir())


def moved_then_killed_undo(ws: Workspace, killed_after: int) -> list[str]:
    """Notes in three folders moved by entry e1, then an undo of it killed after
    ``killed_after`` files went back; the folders before the move."""
    root = ws.vault_dir("en")
    for folder in FOLDERS:
        for n in range(PER_FOLDER):
            path = root / "topics" / folder / f"n{n}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"# {folder} {n}\n\nwords {n}\n")
    before = folders_below(root)
    for index in reconciled_index(ws):
        for vault in recording_vault(ws, index):
            vault.move("en", "topics", "archive/topics", reason="entry:e1 tidy")

    child = run_child(CHILD, str(ws.root), str(killed_after))
    assert child.returncode == 9, child.stderr
    return before


def back_in_place(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md"))


IN_PLACE = sorted(f"topics/{folder}/n{n}.md" for folder in FOLDERS for n in range(PER_FOLDER))


def test_an_undo_killed_midway_then_run_again_leaves_no_empty_folder(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "ws")
    root = ws.vault_dir("en")
    before = moved_then_killed_undo(ws, KILLED_AFTER)
    halves = [p for p in (root / "archive/topics").rglob("*.md")]
    assert 0 < len(halves) < len(FOLDERS) * PER_FOLDER  # (killed midway)

    for index in reconciled_index(ws):  # the restart (which settles history first)
        for vault in recording_vault(ws, index):
            vault.recover_history()
            assert check_history_consistent(ws.root)
            done = vault.undo("en", "e1")
            assert done["files"]
    assert back_in_place(root) == IN_PLACE
    assert folders_below(root) == before  # (archive/topics/<the folder emptied>: left)


def test_an_undo_killed_after_its_last_file_then_run_again_removes_its_folders(
    tmp_path: Path,
) -> None:
    """Killed after the last file went back and before the folders went: run again, the
    undo says "already undone" and removes the emptied folders (it left them all), but
    not one a person put a file in meanwhile."""
    ws = Workspace(tmp_path / "ws")
    root = ws.vault_dir("en")
    before = moved_then_killed_undo(ws, len(FOLDERS) * PER_FOLDER)
    assert back_in_place(root) == IN_PLACE
    assert "archive/topics/latin" in folders_below(root)  # (killed before the clean-up)
    kept = root / "archive/topics/中文/mine.txt"  # (a person's file, where an undone note was)
    kept.write_text("mine\n")

    for index in reconciled_index(ws):  # the restart (which settles history first)
        for vault in recording_vault(ws, index):
            vault.recover_history()
            with pytest.raises(ConflictError, match="already undone"):
                vault.undo("en", "e1", dry_run=True)
            assert "archive/topics/latin" in folders_below(root)  # (a dry run changes nothing)
            with pytest.raises(ConflictError, match="already undone"):
                vault.undo("en", "e1")
    assert kept.read_text() == "mine\n"
    assert folders_below(root) == sorted(
        [*before, "archive", "archive/topics", "archive/topics/中文"]
    )


def test_a_summary_the_job_took_meanwhile_leaves_its_folder_to_the_undo(tmp_path: Path) -> None:
    """After a restart the summaries job runs at once and takes the summary of a folder
    an undo emptied; an undo that listed the folder holding only that summary found it
    gone when it came to take it, and kept the folder, empty (the soak: ``Ünïcode/ไทย/``
    and its three siblings left after the undo run again)."""
    ws = Workspace(tmp_path / "ws")
    folder = ws.vault_dir("en") / "archive/emptied"
    folder.mkdir(parents=True)
    for index in reconciled_index(ws):
        for vault in recording_vault(ws, index):
            fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
            try:  # (listed with its summary, which the job took since)
                assert lone_summaries.drop(vault, "en", "archive/emptied", fd, "undo", [])
            finally:
                os.close(fd)
