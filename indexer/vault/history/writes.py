"""The rows history is about to insert, and the statements that insert and read them
(called inside the store's transactions)."""

from __future__ import annotations

from dataclasses import dataclass

from indexer.sqlite_lib import sqlite3
from indexer.vault.history import codec
from indexer.vault.history.codec import Blob
from indexer.vault.history.rows import Change, Version, reason_tag
from shared.errors import StorageError, TooBigForHistoryError

UNKNOWN_ID = -1  # the base of a delta on a blob not inserted yet


@dataclass(slots=True)
class Row:
    """A version about to be inserted (``blob_id`` set when its bytes are stored)."""

    lang: str
    path: str
    op: str
    actor: str
    reason: str | None
    etag: str | None
    prev_etag: str | None
    size: int | None
    blob: Blob | None  # encoded before the lock; not stored when its sha is known
    data: bytes | None
    version: int
    path_id: int | None
    other_path: str | None = None
    blob_id: int | None = None  # set by ``insert_row``
    depth: int = 0
    mode: int | None = None  # a row with no content: the file's permissions as it went


@dataclass(frozen=True, slots=True)
class Plan:
    catch_up: Row | None
    row: Row


def encode(
    data: bytes,
    base: bytes | None,
    base_id: int | None,
    base_depth: int,
    sha: bytes | None = None,
) -> Blob:
    """The blob of ``data`` (``sha``: its sha256 when the caller knows it already)."""
    return codec.encode(data, sha or codec.sha_of(data), base, base_id, base_depth)


def etag_bytes(etag: str | None) -> bytes | None:
    return None if etag is None else bytes.fromhex(etag)


def read_blob(conn: sqlite3.Connection, blob_id: int) -> Blob | None:
    row = conn.execute(
        "SELECT sha, size, kind, data, depth, base, head, tail FROM blobs WHERE id = ?",
        (blob_id,),
    ).fetchone()
    return None if row is None else Blob(*row)


def insert_row(
    conn: sqlite3.Connection,
    row: Row,
    at_ms: int,
    *,
    pending: bool = False,
    batch: int | None = None,
) -> int:
    """Insert ``row`` and its blob (unless the same bytes are stored already) in the
    open transaction; returns the row id and sets ``row.blob_id``/``row.depth``."""
    blob = row.blob
    if blob is not None:
        found = conn.execute(
            "SELECT id, depth FROM blobs WHERE key = ? AND sha = ?",
            (codec.sha_key(blob.sha), blob.sha),
        ).fetchone()
        if found is not None:
            row.blob_id, row.depth = found
        else:
            if blob.base == UNKNOWN_ID or blob.depth > codec.MAX_DEPTH:
                assert row.data is not None  # a base that never got stored: whole copy
                blob = codec.encode(row.data, blob.sha)
            row.blob_id, row.depth = insert_blob(conn, blob), blob.depth
    path_id = row.path_id
    if path_id is None:
        conn.execute("INSERT OR IGNORE INTO paths (lang, path) VALUES (?, ?)", (row.lang, row.path))
        path_id = conn.execute(
            "SELECT id FROM paths WHERE lang = ? AND path = ?", (row.lang, row.path)
        ).fetchone()[0]
    cursor = conn.execute(
        "INSERT INTO versions (path_id, version, etag, prev_etag, op, actor, reason, tag,"
        " at_ms, size, blob, other_path, batch, pending, mode)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (path_id, row.version, etag_bytes(row.etag), etag_bytes(row.prev_etag), row.op,
         row.actor, row.reason, reason_tag(row.reason), at_ms, row.size, row.blob_id,
         row.other_path, batch, int(pending), row.mode),
    )  # fmt: skip
    assert cursor.lastrowid is not None
    return cursor.lastrowid


def insert_blob(conn: sqlite3.Connection, blob: Blob) -> int:
    cursor = conn.execute(
        "INSERT INTO blobs (key, sha, size, kind, depth, base, head, tail, data)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (codec.sha_key(blob.sha), blob.sha, blob.size, blob.kind, blob.depth, blob.base,
         blob.head, blob.tail, blob.data),
    )  # fmt: skip
    assert cursor.lastrowid is not None
    return cursor.lastrowid


def catch_up(latest: Version | None, change: Change, etag: str | None) -> Row | None:
    """A row for ``change.before`` when it is not what history holds last."""
    before = change.before
    if latest is None:
        if before is None:
            return None
        op = "baseline"
    elif latest.etag == etag:
        return None
    elif before is None:
        op = "delete"
    else:
        op = "create" if latest.etag is None else "edit"
    return Row(
        change.lang,
        change.path,
        op,
        "external",
        None,
        etag=etag,
        prev_etag=None if latest is None else latest.etag,
        size=None if before is None else len(before),
        blob=None if before is None else encode(before, None, None, 0),
        data=before,
        version=(latest.version if latest is not None else 0) + 1,
        path_id=None if latest is None else latest.path_id,
    )


def unwritable(err: sqlite3.Error) -> StorageError:
    """The coded error for a history write SQLite refused."""
    if getattr(err, "sqlite_errorname", "") == "SQLITE_TOOBIG":
        return TooBigForHistoryError(
            "the history could not record this change (the file is larger than history"
            f" can store: {err}); nothing was changed"
        )
    full = getattr(err, "sqlite_errorname", "") == "SQLITE_FULL"
    why = "the disk is full" if full else f"the disk failed the write: {err}"
    return StorageError(
        f"the history could not record this change ({why}); nothing was changed",
        http_status=507 if full else 500,
    )
