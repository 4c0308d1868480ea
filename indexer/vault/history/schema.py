"""The history file: create, check and version it; never reset it.

Unlike the index, history cannot be rebuilt from the vaults, so a file this indexer
cannot use (not ours, damaged, or written by a newer indexer) is refused with a
``HistoryStoreError`` that says what to do, and is left exactly as it is.

Tables (``PRAGMA user_version`` = ``SCHEMA_VERSION``, ``application_id`` = ``APP_ID``):

- ``paths(id, lang, path)``: each file history has seen, once.
- ``versions(id, path_id, version, etag, prev_etag, op, actor, reason, tag, at_ms,
  size, blob, other_path, batch, pending, mode)``: one row per recorded state of a file.
  ``version`` counts 1, 2, 3... per path; ``id`` is the order of recording across
  paths. ``etag``/``prev_etag`` are the file's etags after/before (16 bytes, NULL:
  absent); ``blob`` is NULL when the file did not exist after the change (delete, move
  away). ``tag`` is a 64-bit hash of the reason's first word (``entry:<id>``), which
  ``undo`` looks up. ``batch`` ties the rows of one operation together (a note and its
  images); ``pending`` is 1 from just before the file changes until it is known done
  (see ``store``). ``mode``: the permission bits a file had as it went away (a row
  with no ``blob``: deleted, moved away; as a file made again there sees them: see
  ``rows.permissions``), which ``restore`` and ``undo`` give the file
  they make again (a note made private stays private); another program's removal
  takes the mode the index's row kept (``indexer.index.gone_modes``); NULL when not
  known (a file the index never had a row of; a row from before the column).
- ``blobs(id, key, sha, size, kind, depth, base, head, tail, data)``: content-addressed
  payloads (see ``codec``), found by ``key`` (the first 8 bytes of ``sha``, indexed)
  and then ``sha``; ``base`` is the blob id a delta applies to.
- ``prune_cutoff(id = 1, at_ms)``: the last pruning pass's cut-off (made by the first
  pass, so files from before it need no new schema version; see ``retention``).
- ``pruned_entries(lang, word)``: the entries (``entry:<id>``) retention let a version
  of go, which ``undo`` then refuses (made by the first pass that lets one go).

Columns and tables added since schema 1 need no new version, so that an older file
and an older indexer keep working: ``versions.mode`` is added (``ALTER TABLE ... ADD
COLUMN``, no row rewritten) when a file without it is opened for writing; an older
indexer names the columns it writes and reads, and leaves ``mode`` NULL; a file
without it opened read-only reads every ``mode`` as NULL (``HistoryReads.mode``).

Rows are appended in id order, so pages stay full; only small integers are indexed
(a garbage collection scan needs no index of its own, see ``retention``). Measured
after 1,000 merges into 100 notes: about 1.5x the vault's size (bench/history_bench.py).

WAL with ``synchronous=NORMAL``: a commit survives a crash of the process (kill -9);
after a power loss the last commits may be lost, never half of one (see ``store``).
"""

from __future__ import annotations

from pathlib import Path

from indexer.sqlite_errors import disk_trouble, not_allowed
from indexer.sqlite_lib import sqlite3
from shared.errors import HistoryStoreError

SCHEMA_VERSION = 1
APP_ID = 0x564D4849  # "VMHI": vault memory history
FILE_NAME = "history.sqlite"
MODE_COLUMN = "mode INTEGER"  # (added to older files: ``_add_columns``)

_DDL = (
    "CREATE TABLE paths (id INTEGER PRIMARY KEY, lang TEXT NOT NULL, path TEXT NOT NULL,"
    " UNIQUE (lang, path))",
    "CREATE TABLE blobs (id INTEGER PRIMARY KEY, key INTEGER NOT NULL, sha BLOB NOT NULL,"
    " size INTEGER NOT NULL, kind INTEGER NOT NULL, depth INTEGER NOT NULL, base INTEGER,"
    " head INTEGER NOT NULL, tail INTEGER NOT NULL, data BLOB NOT NULL)",
    "CREATE INDEX blobs_key ON blobs (key)",
    "CREATE TABLE versions (id INTEGER PRIMARY KEY, path_id INTEGER NOT NULL REFERENCES paths,"
    " version INTEGER NOT NULL, etag BLOB, prev_etag BLOB, op TEXT NOT NULL,"
    " actor TEXT NOT NULL, reason TEXT, tag INTEGER, at_ms INTEGER NOT NULL, size INTEGER,"
    " blob INTEGER, other_path TEXT, batch INTEGER, pending INTEGER NOT NULL DEFAULT 0,"
    f" {MODE_COLUMN}, UNIQUE (path_id, version))",
    "CREATE INDEX versions_tag ON versions (tag) WHERE tag IS NOT NULL",
    "CREATE INDEX versions_pending ON versions (pending) WHERE pending = 1",
    "CREATE INDEX versions_batch ON versions (batch) WHERE batch IS NOT NULL",
)
_TABLES = {"paths", "blobs", "versions"}


def connect(path: Path, *, readonly: bool = False, setup: bool = True) -> sqlite3.Connection:
    """A connection with our pragmas; autocommit (transactions are explicit).
    ``setup=False`` changes nothing in the file (for checking it first)."""
    if readonly:
        conn = sqlite3.connect(
            f"file:{path}?mode=ro", uri=True, isolation_level=None, check_same_thread=False
        )
    else:
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA busy_timeout = 10000")
    if setup and not readonly:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
    return conn


def open_history(folder: Path, *, readonly: bool = False) -> sqlite3.Connection:
    """The history database in ``folder``, created if absent (not when ``readonly``);
    ``HistoryStoreError`` when it exists but cannot be used. An existing file is checked
    through a read-only connection first, which cannot change a byte of it."""
    path = folder / FILE_NAME
    if readonly and not path.exists():
        raise HistoryStoreError(f"there is no history at {path} yet")
    if not readonly:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    fresh = not readonly and (not path.exists() or path.stat().st_size == 0)
    if not fresh:
        checker = _connect_checked(path, readonly=True)
        try:
            _check(checker, path)
        except BaseException:
            checker.close()
            raise
        if readonly:
            return checker
        checker.close()
    conn = _connect_checked(path, readonly=False)
    try:
        if fresh:
            _create(conn)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        _check_writable(conn)
        _add_columns(conn)
    except sqlite3.Error as err:
        conn.close()
        raise _damaged(path, err) from None
    except BaseException:
        conn.close()
        raise
    return conn


def _check_writable(conn: sqlite3.Connection) -> None:
    """A write that is rolled back: SQLite opens a file it may not write (another user's,
    a read-only disk) read-only without a word, and every change was then refused as
    ``internal`` by a server that said it was fine."""
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(f"PRAGMA user_version = {version}")
    finally:
        conn.execute("ROLLBACK")


def _add_columns(conn: sqlite3.Connection) -> None:
    """Add to a file from an older indexer the columns this one writes (``versions.mode``):
    a change of the schema alone, instant whatever the file's size."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(versions)")}
    if "mode" not in columns:
        conn.execute(f"ALTER TABLE versions ADD COLUMN {MODE_COLUMN}")


def _connect_checked(path: Path, *, readonly: bool) -> sqlite3.Connection:
    try:
        return connect(path, readonly=readonly, setup=False)
    except sqlite3.Error as err:
        raise _damaged(path, err) from None


def _check(conn: sqlite3.Connection, path: Path) -> None:
    try:
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    except sqlite3.Error as err:
        raise _damaged(path, err) from None
    if app_id != APP_ID:
        raise HistoryStoreError(
            f"{path} is not a vault-memory history file; move it away (history was not changed)"
        )
    if version > SCHEMA_VERSION:
        raise HistoryStoreError(
            f"the history {path} was written by a newer indexer (schema {version}; this one "
            f"reads {SCHEMA_VERSION}): upgrade the indexer (history was not changed)"
        )
    if version < 1 or not tables >= _TABLES:
        raise HistoryStoreError(
            f"the history {path} is incomplete (schema {version}, tables {sorted(tables)}): "
            "move it aside and restore it from a backup (history was not changed)"
        )


def _create(conn: sqlite3.Connection) -> None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        for statement in _DDL:
            conn.execute(statement)
        conn.execute(f"PRAGMA application_id = {APP_ID}")
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _damaged(path: Path, err: Exception) -> HistoryStoreError:
    said = " ".join(str(err).split())[:300]  # one line, whatever SQLite reported
    if not_allowed(err):
        return HistoryStoreError(  # not damage: moving a good history aside would lose it
            f"the history {path} cannot be opened for writing by this user ({said}): run "
            "the indexer as the user who owns the workspace, or make it writable (history "
            "was not changed; SQLite also writes the -wal and -shm files beside it, even to read)"
        )
    trouble = disk_trouble(path, err)
    if trouble is not None:  # not damage either: a user moving it aside would lose it
        return HistoryStoreError(
            f"the history {path} cannot be opened ({said}): {trouble}; free some space or"
            " fix the disk, then start again (the history was not changed: keep it as it is)"
        )
    return HistoryStoreError(
        f"the history {path} cannot be read ({said}): it may be damaged; move it aside and "
        "restore it from a backup, or move it away to start a new history (it was not changed)"
    )


def quick_check(conn: sqlite3.Connection, path: Path) -> None:
    """``PRAGMA quick_check`` (reads the whole file); ``HistoryStoreError`` if damaged."""
    try:
        rows = [r[0] for r in conn.execute("PRAGMA quick_check(5)")]
    except sqlite3.Error as err:
        raise _damaged(path, err) from None
    if rows != ["ok"]:
        raise _damaged(path, RuntimeError("; ".join(rows)[:300]))
