"""The index's rows keep their file's mode and group (schema 27), for history's record
of a deletion another program made (``indexer.index.gone_modes``): a ``chmod`` since
syncs the row, a pass removing a row says its mode, an index of schema 26 is made anew
with them, and history keeps such a mode only on the deletion of the text it was the
file's with."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from indexer.index import gone_modes
from indexer.index.schema import SCHEMA_VERSION
from indexer.index.service import NoteIndex
from indexer.sqlite_lib import sqlite3
from indexer.vault.fsops import etag_of
from indexer.vault.history.rows import Seen
from indexer.vault.history.store import HistoryStore
from shared.workspace import Workspace

NOW = datetime(2026, 12, 7, 20, 0, 0, tzinfo=UTC)


def put(ws: Workspace, path: str, text: str, mode: int) -> Path:
    file = ws.vault_dir("en") / path
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(text)
    os.chmod(file, mode)
    return file


def kept(ws: Workspace, path: str) -> tuple[int, int] | None:
    conn = sqlite3.connect(ws.index_path)
    try:
        row = conn.execute(
            "SELECT mode, gid FROM notes WHERE lang = 'en' AND path = ?", (path,)
        ).fetchone()
    finally:
        conn.close()
    return None if row is None else (row[0], row[1])


def test_a_row_keeps_its_files_mode_and_a_chmod_since(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "ws")
    file = put(ws, "a.md", "# a\n", 0o640)
    index = NoteIndex(ws)
    index.open()
    try:
        index.reconcile()
        assert kept(ws, "a.md") == (0o640, os.stat(file).st_gid)
        os.chmod(file, 0o2600)  # (a new ctime, the same bytes: the row's stat alone)
        index.reconcile()
        assert kept(ws, "a.md") == (0o2600, os.stat(file).st_gid)
    finally:
        index.close()


def test_a_pass_tells_the_mode_of_each_row_it_removed(tmp_path: Path) -> None:
    """Read while the listeners are told, in the telling thread; nothing after."""
    ws = Workspace(tmp_path / "ws")
    file = put(ws, "d/a.md", "# a\n", 0o600)
    put(ws, "b.md", "# b\n", 0o644)
    index = NoteIndex(ws)
    heard: list[object] = []
    index.batch_listeners.append(
        lambda told: heard.extend(gone_modes.gone_mode(lang, path) for lang, path, _ in told)
    )
    index.open()
    try:
        index.reconcile()
        heard.clear()
        file.unlink()
        index.reconcile()
    finally:
        index.close()
    assert heard == [(etag_of(b"# a\n"), 0o600, os.getegid())]
    assert gone_modes.gone_mode("en", "d/a.md") is None


def test_an_index_of_schema_26_is_made_anew_with_the_modes(tmp_path: Path) -> None:
    assert SCHEMA_VERSION == 27
    ws = Workspace(tmp_path / "ws")
    put(ws, "a.md", "# a\n", 0o600)
    index = NoteIndex(ws)
    index.open()
    index.reconcile()
    index.close()
    conn = sqlite3.connect(ws.index_path)
    conn.execute("ALTER TABLE notes DROP COLUMN mode")
    conn.execute("ALTER TABLE notes DROP COLUMN gid")
    conn.execute("PRAGMA user_version = 26")
    conn.close()
    again = NoteIndex(ws)
    again.open()
    try:
        assert again.counts() == {}
        again.reconcile()
        assert kept(ws, "a.md") == (0o600, os.getegid())
    finally:
        again.close()


def test_history_keeps_an_index_mode_only_on_the_deletion_of_its_text(tmp_path: Path) -> None:
    """A mode the index kept of other bytes than history's latest (a file history saw
    made again and gone before the index read it) is not that file's: left out."""
    store = HistoryStore(tmp_path, etag_of)
    store.open()
    try:
        for path in ("a.md", "b.md"):
            store.observe("en", path, b"new\n", NOW, unknown=True)
        ours, other = etag_of(b"new\n"), etag_of(b"old\n")
        store.observe_many(
            [
                Seen("en", "a.md", None, False, mode=0o600, mode_of=ours),
                Seen("en", "b.md", None, False, mode=0o600, mode_of=other),
            ],
            NOW,
        )
        modes = {}
        for path in ("a.md", "b.md"):
            latest = store.latest("en", path)
            assert latest is not None and latest.op == "delete"
            modes[path] = store.mode(latest)
        assert modes == {"a.md": 0o600, "b.md": None}
    finally:
        store.close()
