"""Whether a (stopped) server's index holds what a rebuild from its vaults holds: what
must be true after any crash and restart, once changes have stopped."""

from __future__ import annotations

import shutil
from pathlib import Path

from indexer.index.service import NoteIndex
from indexer.sqlite_lib import sqlite3
from shared.workspace import Workspace

ROWS = "SELECT lang, path, hash, title, frontmatter, body FROM notes ORDER BY lang, path"


def index_rows(path: Path) -> list[tuple]:
    """The notes an index file holds, once its pages and full-text tables check out."""
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        conn.execute("INSERT INTO notes_fts(notes_fts) VALUES ('integrity-check')")
        return conn.execute(ROWS).fetchall()
    finally:
        conn.close()


def check_index_is_a_rebuild(workspace: Path, scratch: Path) -> None:
    """Assert the index of ``workspace`` (its server stopped) equals one built afresh
    from a copy of its vaults in ``scratch``."""
    served = index_rows(Workspace(workspace).index_path)
    if scratch.exists():
        shutil.rmtree(scratch)
    shutil.copytree(workspace / "memory", scratch / "memory", symlinks=True)
    index = NoteIndex(Workspace(scratch))
    try:
        index.open()
        index.reconcile()
    finally:
        index.close()
    assert served == index_rows(Workspace(scratch).index_path)
