"""``HistoryStore``: the versions of every vault file, in ``W/.indexer/history/``.

What a version is: a recorded state of one file (``lang``, ``path``), numbered 1, 2,
3... per path, so ``diff``/``restore``/``read(version=)`` name versions with small
integers; a version with no content (``etag`` None) says the file did not exist after
that change (deleted, moved away). Numbers are never reused: pruning removes old rows
and the next version is still the highest + 1.

Recording is two-phase, so that kill -9 at any moment leaves history and files
consistent. Under the vault's lock of the file, ``begin`` commits the new rows marked
``pending`` (blob and row in one transaction: no row ever points at a missing blob);
the file is then changed; ``commit`` clears the mark (``abort`` deletes the rows if the
change failed). At start-up ``recover`` settles what a crash left pending: a row
whose content is what the file holds is kept (the change happened, with its actor
and reason, even if the caller never got an answer), any other is dropped (the change
never happened). So every acknowledged write has its version.

"The text before when not yet recorded": when the bytes a change replaces are not the
latest version (history never saw the file, or it was edited outside the tools and the
watcher has not told us yet), ``begin`` first records them as a version of their own
(actor ``external``; op ``baseline`` for a first sight, else ``edit``/``create``/
``delete``), so nothing a tool overwrites is ever lost.

Durability: WAL with ``synchronous=NORMAL``. A commit is in the WAL before the file
changes, and the WAL survives a crash of the process. A power loss may lose the last
commits since the WAL was last synced (never half of one); the vault files themselves
are fsync'd and stay the truth, and a file whose latest state history lost is recorded
again (as ``external``) at its next change or sighting. ``synchronous=FULL`` would cost
one more fsync per commit (0.6 ms measured, about the cost of an append itself).

Concurrency: one writer connection behind a lock held only for the inserts (hashing
and compression happen before it), and a pool of reader connections for everything
else; changes to one path are already serialized by the vault's lock of that file.
"""

from __future__ import annotations

import logging
import queue
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from indexer.vault.history import codec, retention, schema
from indexer.vault.history.codec import Blob
from indexer.vault.history.rows import (
    VERSION_COLUMNS,
    VERSIONS_FROM,
    Change,
    Pending,
    PruneStats,
    Version,
    millis,
    version_of,
)
from shared.errors import HistoryStoreError

log = logging.getLogger("indexer.history")

EtagOf = Callable[[bytes], str]


class HistoryStore:
    """The history database of one workspace (thread-safe)."""

    def __init__(self, folder: Path, etag_of: EtagOf, *, readonly: bool = False) -> None:
        self.folder = folder
        self.path = folder / schema.FILE_NAME
        self._etag_of = etag_of
        self._readonly = readonly
        self._lock = threading.Lock()
        self._writer: sqlite3.Connection | None = None
        self._readers: queue.SimpleQueue[sqlite3.Connection] = queue.SimpleQueue()
        self._connections: list[sqlite3.Connection] = []
        self._closed = False

    # -- life cycle ----------------------------------------------------------------------

    def open(self, *, check: bool = False) -> None:
        """Open (or create) the file; ``HistoryStoreError`` when it cannot be used.
        ``check`` also runs ``PRAGMA quick_check``, which reads the whole file."""
        conn = schema.open_history(self.folder, readonly=self._readonly)
        if check:
            try:
                schema.quick_check(conn, self.path)
            except BaseException:
                conn.close()
                raise
        self._connections.append(conn)
        if self._readonly:
            self._readers.put(conn)
        else:
            self._writer = conn

    def close(self) -> None:
        with self._lock:
            self._closed = True
            for conn in self._connections:
                conn.close()
            self._connections.clear()
            self._writer = None
        while not self._readers.empty():
            self._readers.get_nowait()

    # -- recording -----------------------------------------------------------------------

    def begin(
        self, changes: list[Change], *, actor: str, reason: str | None, at: datetime
    ) -> Pending:
        """Record ``changes`` (one operation) as pending rows, after catch-up rows for
        any ``before`` that is not the latest version. Call with each file's lock held."""
        at_ms = millis(at)
        plans = [self._plan(change, actor, reason) for change in changes]
        pending = Pending()
        with self._write() as conn:
            for plan in plans:
                if plan.catch_up is not None:
                    self._insert(conn, plan.catch_up, at_ms, pending=False, batch=None)
            batch = None
            for plan in plans:
                row = plan.row
                row_id, number = self._insert(conn, row, at_ms, pending=True, batch=batch)
                if batch is None and len(plans) > 1:
                    batch = row_id
                    conn.execute("UPDATE versions SET batch = ? WHERE id = ?", (batch, row_id))
                pending.ids.append(row_id)
                pending.versions[(row.lang, row.path)] = number
        return pending

    def commit(self, pending: Pending) -> None:
        """The file changes are done: the rows become final. A failure here is logged,
        not raised (the change happened; ``recover`` settles the row at the next start)."""
        try:
            with self._write() as conn:
                conn.executemany(
                    "UPDATE versions SET pending = 0 WHERE id = ?", [(i,) for i in pending.ids]
                )
        except (sqlite3.Error, HistoryStoreError):
            log.exception("history: could not finish recording versions %s", pending.ids)

    def abort(self, pending: Pending) -> None:
        """The file changes failed: forget their rows (catch-up rows stay: they are true)."""
        with self._write() as conn:
            conn.executemany("DELETE FROM versions WHERE id = ?", [(i,) for i in pending.ids])

    def observe(
        self, lang: str, path: str, data: bytes | None, at: datetime, *, unknown: bool
    ) -> Version | None:
        """Record a change seen outside the tools (actor ``external``), if ``data`` (None:
        the file is absent) is not the latest version. A file history never saw is
        recorded only when ``unknown`` is set. Call with the file's lock held."""
        latest = self.latest(lang, path)
        if latest is None and not unknown:
            return None
        row = self._catch_up(latest, Change(lang, path, "", data, data))
        if row is None:
            return None
        with self._write() as conn:
            self._insert(conn, row, millis(at), pending=False, batch=None)
        return self.latest(lang, path)

    def recover(self, current_etag: Callable[[str, str], str | None]) -> tuple[int, int]:
        """Settle the rows a crash left pending against the files; (kept, dropped)."""
        with self._read() as conn:
            rows = [
                version_of(r)
                for r in conn.execute(
                    f"SELECT {VERSION_COLUMNS} {VERSIONS_FROM} WHERE v.pending = 1"
                )
            ]
        keep: list[tuple[int]] = []
        drop: list[tuple[int]] = []
        for row in rows:
            (keep if current_etag(row.lang, row.path) == row.etag else drop).append((row.id,))
        with self._write() as conn:
            conn.executemany("UPDATE versions SET pending = 0 WHERE id = ?", keep)
            conn.executemany("DELETE FROM versions WHERE id = ?", drop)
        return len(keep), len(drop)

    # -- queries -------------------------------------------------------------------------

    def latest(self, lang: str, path: str) -> Version | None:
        rows = self.versions(lang, path, limit=1)
        return rows[0] if rows else None

    def versions(self, lang: str, path: str, limit: int, below: int | None = None) -> list[Version]:
        """Newest first; ``below`` starts under that version number (paging)."""
        sql = f"SELECT {VERSION_COLUMNS} {VERSIONS_FROM} WHERE p.lang = ? AND p.path = ?"
        params: list[Any] = [lang, path]
        if below is not None:
            sql += " AND v.version < ?"
            params.append(below)
        sql += " ORDER BY v.version DESC LIMIT ?"
        params.append(limit)
        with self._read() as conn:
            return [version_of(r) for r in conn.execute(sql, params)]

    def get(self, lang: str, path: str, number: int) -> Version | None:
        with self._read() as conn:
            row = conn.execute(
                f"SELECT {VERSION_COLUMNS} {VERSIONS_FROM} WHERE p.lang = ? AND p.path = ?"
                " AND v.version = ?",
                (lang, path, number),
            ).fetchone()
        return version_of(row) if row else None

    def batch(self, batch: int) -> list[Version]:
        """The rows of one operation (a note and its images)."""
        with self._read() as conn:
            return [
                version_of(r)
                for r in conn.execute(
                    f"SELECT {VERSION_COLUMNS} {VERSIONS_FROM} WHERE v.batch = ? ORDER BY v.id",
                    (batch,),
                )
            ]

    def paths(self) -> list[tuple[str, str]]:
        """Every (lang, path) history has seen, sorted."""
        with self._read() as conn:
            return conn.execute("SELECT lang, path FROM paths ORDER BY lang, path").fetchall()

    def paths_with_reason(self, lang: str, exact: str, prefix: str) -> list[str]:
        """Paths of ``lang`` with a version whose reason is ``exact`` or starts with
        ``prefix`` (a range on the reason index)."""
        upper = prefix[:-1] + chr(ord(prefix[-1]) + 1)
        with self._read() as conn:
            rows = conn.execute(
                "SELECT DISTINCT p.path FROM versions AS v INDEXED BY versions_reason"
                " JOIN paths AS p ON p.id = v.path_id"
                " WHERE (v.reason = ? OR (v.reason >= ? AND v.reason < ?)) AND p.lang = ?"
                " ORDER BY p.path",
                (exact, prefix, upper, lang),
            ).fetchall()
        return [r[0] for r in rows]

    def content(self, version: Version) -> bytes:
        """The bytes of a version (rebuilt along its delta chain, checked by sha256)."""
        if version.blob is None:
            raise ValueError("this version records that the file did not exist")
        chain: list[Blob] = []
        sha: bytes | None = version.blob
        with self._read() as conn:
            while sha is not None:
                blob = _blob(conn, sha)
                if blob is None:
                    raise HistoryStoreError(
                        f"history is damaged: a stored text of {version.path} is missing"
                    )
                chain.append(blob)
                sha = blob.base if blob.kind == codec.DELTA else None
        data: bytes | None = None
        for blob in reversed(chain):
            data = codec.decode(blob, data)
        assert data is not None
        if codec.sha_of(data) != version.blob:
            raise HistoryStoreError(f"history is damaged: a stored text of {version.path} is wrong")
        return data

    def stats(self) -> dict[str, int]:
        """Counts and the size of the file (for ``indexer status`` and the benchmark)."""
        with self._read() as conn:
            versions = conn.execute("SELECT count(*) FROM versions").fetchone()[0]
            blobs = conn.execute("SELECT count(*), coalesce(sum(length(data)), 0) FROM blobs")
            count, stored = blobs.fetchone()
            paths = conn.execute("SELECT count(*) FROM paths").fetchone()[0]
        size = sum(f.stat().st_size for f in self.folder.glob(schema.FILE_NAME + "*"))
        return {
            "versions": versions,
            "paths": paths,
            "blobs": count,
            "blob_bytes": stored,
            "file_bytes": size,
        }

    # -- retention -----------------------------------------------------------------------

    def prune(
        self, now: datetime, *, days: int, keep: int, stop: Callable[[], bool] = lambda: False
    ) -> PruneStats:
        """Remove versions older than ``days`` beyond the newest ``keep`` of each path,
        never a path's latest version nor what undoing its latest change needs (the
        trailing run of versions with the latest's reason, and the one before it);
        then the blobs nothing uses any more. Works in short transactions."""
        cutoff = millis(now) - days * 86_400_000
        stats = PruneStats()
        with self._read() as conn:
            crowded = [
                r[0]
                for r in conn.execute(
                    "SELECT path_id FROM versions GROUP BY path_id HAVING count(*) > ?", (keep,)
                )
            ]
        for start in range(0, len(crowded), 100):
            if stop():
                break
            with self._write() as conn:
                doomed: list[tuple[int, bytes | None]] = []
                for path_id in crowded[start : start + 100]:
                    doomed += retention.doomed(conn, path_id, cutoff, keep)
                conn.executemany("DELETE FROM versions WHERE id = ?", [(i,) for i, _ in doomed])
                stats.versions += len(doomed)
                stats.blobs += retention.collect(
                    conn, {sha for _, sha in doomed if sha is not None}
                )
        return stats

    # -- internals -----------------------------------------------------------------------

    def _plan(self, change: Change, actor: str, reason: str | None) -> _Plan:
        """The rows and blobs of one change, computed before taking the write lock."""
        latest = self.latest(change.lang, change.path)
        catch_up = self._catch_up(latest, change)
        base_sha: bytes | None = None
        base_depth = 0
        if change.before is not None:
            if catch_up is not None and catch_up.blob is not None:
                base_sha, base_depth = catch_up.blob.sha, catch_up.blob.depth
            elif latest is not None and latest.blob is not None:
                base_sha, base_depth = latest.blob, self._depth(latest.blob) or 0
        after = change.after
        row = _Row(
            change.lang,
            change.path,
            change.op,
            actor,
            reason,
            etag=None if after is None else self._etag_of(after),
            prev_etag=None if change.before is None else self._etag_of(change.before),
            size=None if after is None else len(after),
            blob=None
            if after is None
            else self._blob_for(after, change.before, base_sha, base_depth),
            data=after,
            other_path=change.other_path,
        )
        return _Plan(catch_up, row)

    def _catch_up(self, latest: Version | None, change: Change) -> _Row | None:
        """A row for ``change.before`` when it is not what history holds last."""
        before = change.before
        etag = None if before is None else self._etag_of(before)
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
        return _Row(
            change.lang,
            change.path,
            op,
            "external",
            None,
            etag=etag,
            prev_etag=None if latest is None else latest.etag,
            size=None if before is None else len(before),
            blob=None if before is None else self._blob_for(before, None, None, 0),
            data=before,
        )

    def _blob_for(
        self, data: bytes, base: bytes | None, base_sha: bytes | None, base_depth: int
    ) -> Blob:
        """The blob for ``data``: a bare reference (kind "") when the same bytes are
        already stored, else a new payload (a delta on ``base`` when given)."""
        sha = codec.sha_of(data)
        if self._depth(sha) is not None:
            return Blob(sha, len(data), "", b"")
        return codec.encode(data, base, base_sha, base_depth)

    def _depth(self, sha: bytes) -> int | None:
        """The chain depth of a stored blob, or None when it is not stored."""
        with self._read() as conn:
            row = conn.execute("SELECT depth FROM blobs WHERE sha = ?", (sha,)).fetchone()
        return None if row is None else int(row[0])

    def _insert(
        self, conn: sqlite3.Connection, row: _Row, at_ms: int, *, pending: bool, batch: int | None
    ) -> tuple[int, int]:
        """Insert ``row`` (and its blob) in the open transaction; (row id, version)."""
        blob = row.blob
        if blob is not None and not blob.kind:
            # Found stored when planned; if pruning collected it since, store it now.
            if conn.execute("SELECT 1 FROM blobs WHERE sha = ?", (blob.sha,)).fetchone():
                blob = None
            else:
                assert row.data is not None
                blob = codec.encode(row.data)
        if blob is not None:
            conn.execute(
                "INSERT OR IGNORE INTO blobs (sha, size, kind, depth, base, head, tail, data)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (blob.sha, blob.size, blob.kind, blob.depth, blob.base, blob.head, blob.tail,
                 blob.data),
            )  # fmt: skip
        conn.execute("INSERT OR IGNORE INTO paths (lang, path) VALUES (?, ?)", (row.lang, row.path))
        path_id = conn.execute(
            "SELECT id FROM paths WHERE lang = ? AND path = ?", (row.lang, row.path)
        ).fetchone()[0]
        number = conn.execute(
            "SELECT coalesce(max(version), 0) + 1 FROM versions WHERE path_id = ?", (path_id,)
        ).fetchone()[0]
        cursor = conn.execute(
            "INSERT INTO versions (path_id, version, etag, prev_etag, op, actor, reason, at_ms,"
            " size, blob, other_path, batch, pending) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (path_id, number, _etag_bytes(row.etag), _etag_bytes(row.prev_etag), row.op,
             row.actor, row.reason, at_ms, row.size, None if row.blob is None else row.blob.sha,
             row.other_path, batch, int(pending)),
        )  # fmt: skip
        assert cursor.lastrowid is not None
        return cursor.lastrowid, number

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """The writer connection, with the lock held and a transaction open."""
        with self._lock:
            conn = self._writer
            if conn is None:
                raise HistoryStoreError("the history is not open for writing")
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as err:
                raise HistoryStoreError(f"the history cannot be written ({err})") from None
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            try:
                conn.execute("COMMIT")
            except sqlite3.Error as err:
                raise HistoryStoreError(f"the history cannot be written ({err})") from None

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        if self._closed:
            raise HistoryStoreError("the history is closed")
        try:
            conn = self._readers.get_nowait()
        except queue.Empty:
            conn = schema.connect(self.path, readonly=self._readonly)
            with self._lock:
                self._connections.append(conn)
        try:
            conn.execute("BEGIN")  # one snapshot for every statement of the caller
            try:
                yield conn
            finally:
                conn.execute("COMMIT")
        except sqlite3.DatabaseError as err:
            raise HistoryStoreError(f"the history cannot be read ({err})") from None
        finally:
            self._readers.put(conn)


@dataclass(frozen=True, slots=True)
class _Row:
    """A version about to be inserted."""

    lang: str
    path: str
    op: str
    actor: str
    reason: str | None
    etag: str | None
    prev_etag: str | None
    size: int | None
    blob: Blob | None
    data: bytes | None
    other_path: str | None = None


@dataclass(frozen=True, slots=True)
class _Plan:
    catch_up: _Row | None
    row: _Row


def _etag_bytes(etag: str | None) -> bytes | None:
    return None if etag is None else bytes.fromhex(etag)


def _blob(conn: sqlite3.Connection, sha: bytes) -> Blob | None:
    row = conn.execute(
        "SELECT size, kind, data, depth, base, head, tail FROM blobs WHERE sha = ?", (sha,)
    ).fetchone()
    return None if row is None else Blob(sha, *row)
