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
    rebuilt = index_rows(Workspace(scratch).index_path)
    assert served == rebuilt, rows_differing(served, rebuilt)


COLUMNS = ("lang", "path", "hash", "title", "frontmatter", "body")
SHOWN = 20  # rows a failure names at most


def rows_differing(served: list[tuple], rebuilt: list[tuple]) -> str:
    """Which notes differ between the served index and the rebuild, and in which columns
    (pytest's own diff of two lists of 3,000 rows showed nothing useful)."""
    ours = {row[:2]: row for row in served}
    theirs = {row[:2]: row for row in rebuilt}
    lines = [f"{len(served)} rows served, {len(rebuilt)} rebuilt"]
    for key in sorted(ours.keys() | theirs.keys()):
        mine, other = ours.get(key), theirs.get(key)
        if mine is None:
            lines.append(f"only in the rebuild: {key}")
        elif other is None:
            lines.append(f"only in the served index: {key} {mine[2:4]!r}")
        elif mine != other:
            cols = [
                f"{name}: {a!r:.120} != {b!r:.120}"
                for name, a, b in zip(COLUMNS, mine, other, strict=True)
                if a != b
            ]
            lines.append(f"differs {key}: " + "; ".join(cols))
    if len(served) != len(ours) or len(rebuilt) != len(theirs):
        lines.append("a (lang, path) twice in one index")
    shown = lines[: SHOWN + 1]
    if len(lines) > len(shown):
        shown.append(f"... and {len(lines) - len(shown)} more")
    return "\n".join(shown)
