"""``versions.mode`` (the permissions of a file gone) with no new schema version: a file
from before the column is read as it is, the column added when it is opened for
writing, and an older indexer's writes (which do not name it) still go in."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from indexer.sqlite_lib import sqlite3
from indexer.vault.fsops import etag_of
from indexer.vault.history import schema
from indexer.vault.history.store import Change, HistoryStore

NOW = datetime(2026, 11, 29, 20, 0, 0, tzinfo=UTC)


def record(store: HistoryStore, change: Change) -> None:
    store.commit(store.begin([change], actor="tool", reason=None, at=NOW))
    store.settle()


def columns(file: Path) -> list[str]:
    conn = sqlite3.connect(file)
    try:
        return [row[1] for row in conn.execute("PRAGMA table_info(versions)")]
    finally:
        conn.close()


def test_a_delete_keeps_the_mode_and_a_write_none(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path, etag_of)
    store.open()
    try:
        record(store, Change("en", "a.md", "write", None, b"a\n", mode=0o600))
        record(store, Change("en", "a.md", "delete", b"a\n", None, mode=0o600))
        deleted, written = store.versions("en", "a.md", 2)
        assert (store.mode(deleted), store.mode(written)) == (0o600, None)
    finally:
        store.close()


def test_a_file_without_the_column_is_read_then_given_it(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path, etag_of)
    store.open()
    record(store, Change("en", "a.md", "write", None, b"a\n"))
    record(store, Change("en", "a.md", "delete", b"a\n", None, mode=0o600))
    store.close()
    file = tmp_path / schema.FILE_NAME
    conn = sqlite3.connect(file)
    conn.execute("ALTER TABLE versions DROP COLUMN mode")  # (an older indexer's file)
    conn.close()
    reader = HistoryStore(tmp_path, etag_of, readonly=True)
    reader.open()
    try:
        deleted = reader.latest("en", "a.md")
        assert deleted is not None and deleted.op == "delete"
        assert reader.mode(deleted) is None
    finally:
        reader.close()
    assert "mode" not in columns(file)  # (read-only: not a byte changed)
    store = HistoryStore(tmp_path, etag_of)
    store.open()
    try:
        assert columns(file)[-1] == "mode"
        assert store.mode(deleted) is None  # (its row: not known)
        conn = sqlite3.connect(file)  # an older indexer's insert, the columns it knows
        conn.execute(
            "INSERT INTO versions (path_id, version, etag, prev_etag, op, actor, reason, tag,"
            " at_ms, size, blob, other_path, batch, pending)"
            " SELECT path_id, 3, NULL, NULL, 'delete', 'tool', NULL, NULL, 0, NULL, NULL,"
            " NULL, NULL, 0 FROM versions WHERE version = 2"
        )
        conn.commit()
        conn.close()
        older = store.latest("en", "a.md")
        assert older is not None and older.version == 3 and store.mode(older) is None
    finally:
        store.close()
    conn = sqlite3.connect(file)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION == 1
    conn.close()


def test_a_damaged_mode_is_read_as_unknown(tmp_path: Path) -> None:
    """A row whose mode holds more than permission bits (setuid, a negative or huge
    number, text) went to ``fchmod`` as it was (the bit set, or OverflowError)."""
    store = HistoryStore(tmp_path, etag_of)
    store.open()
    try:
        record(store, Change("en", "a.md", "write", None, b"a\n"))
        record(store, Change("en", "a.md", "delete", b"a\n", None, mode=0o600))
        (deleted, _written) = store.versions("en", "a.md", 2)
        conn = sqlite3.connect(tmp_path / schema.FILE_NAME)
        try:
            for damaged in (0o4755, -1, 1 << 62, "0600", 0o600 + 0.5, b"\x01"):
                conn.execute("UPDATE versions SET mode = ? WHERE id = ?", (damaged, deleted.id))
                conn.commit()
                assert store.mode(deleted) is None, damaged
        finally:
            conn.close()
    finally:
        store.close()
