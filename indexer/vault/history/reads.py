"""What ``HistoryStore`` answers: versions, texts and counts, each on a reader connection
of its own (apart from ``store``, which records; a reader never waits for the writer)."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from indexer.sqlite_lib import sqlite3
from indexer.vault.history import codec, retention, schema, writes
from indexer.vault.history.codec import Blob
from indexer.vault.history.rows import (
    VERSION_COLUMNS,
    VERSIONS_FROM,
    Version,
    first_word,
    reason_tag,
    version_of,
)
from shared.errors import HistoryStoreError

# Idle reader connections kept open (another is opened at 0.1 ms when all are busy)
IDLE_READERS = 4


class HistoryReads:
    """The queries of one history database (thread-safe; ``HistoryStore`` records)."""

    def __init__(self, folder: Path, *, readonly: bool) -> None:
        self.folder = folder
        self.path = folder / schema.FILE_NAME
        self._readonly = readonly
        self._lock = threading.RLock()  # (``settle`` looks, then writes, under it)
        self._readers: queue.SimpleQueue[sqlite3.Connection] = queue.SimpleQueue()
        self._connections: list[sqlite3.Connection] = []
        self._closed = False

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
        with self._read(snapshot=False) as conn:
            return [version_of(r) for r in conn.execute(sql, params)]

    def get(self, lang: str, path: str, number: int) -> Version | None:
        with self._read(snapshot=False) as conn:
            row = conn.execute(
                f"SELECT {VERSION_COLUMNS} {VERSIONS_FROM} WHERE p.lang = ? AND p.path = ?"
                " AND v.version = ?",
                (lang, path, number),
            ).fetchone()
        return version_of(row) if row else None

    def batch(self, batch: int) -> list[Version]:
        """The rows of one operation (a note and its images)."""
        with self._read(snapshot=False) as conn:
            return [
                version_of(r)
                for r in conn.execute(
                    f"SELECT {VERSION_COLUMNS} {VERSIONS_FROM} WHERE v.batch = ? ORDER BY v.id",
                    (batch,),
                )
            ]

    def newest_ms(self) -> int | None:
        """When history last recorded a version (epoch ms); None while it holds none."""
        with self._read(snapshot=False) as conn:
            newest: int | None = conn.execute("SELECT max(at_ms) FROM versions").fetchone()[0]
        return newest

    def etags(self) -> set[str]:
        """The etag of every text history holds (once each)."""
        with self._read(snapshot=False) as conn:
            rows = conn.execute("SELECT DISTINCT etag FROM versions WHERE etag IS NOT NULL")
            return {etag.hex() for (etag,) in rows}

    def latest_etags(self) -> dict[tuple[str, str], str | None]:
        """The etag of every path's latest version (None: a deletion), in one query: a
        pass over every path compares them with the index's (``recheck``)."""
        with self._read(snapshot=False) as conn:
            rows = conn.execute(
                "SELECT p.lang, p.path, v.etag FROM paths AS p JOIN versions AS v"
                " ON v.path_id = p.id AND v.version ="
                " (SELECT max(version) FROM versions WHERE path_id = p.id)"
            )
            return {(lang, path): None if etag is None else etag.hex() for lang, path, etag in rows}

    def paths(self) -> list[tuple[str, str]]:
        """Every (lang, path) history has seen, sorted."""
        with self._read(snapshot=False) as conn:
            return conn.execute("SELECT lang, path FROM paths ORDER BY lang, path").fetchall()

    def paths_with_reason(self, lang: str, word: str) -> list[str]:
        """Paths of ``lang`` with a version whose reason's first word is ``word``
        (``entry:<id>``), sorted."""
        with self._read(snapshot=False) as conn:
            rows = conn.execute(
                "SELECT DISTINCT p.path, v.reason FROM versions AS v"
                " JOIN paths AS p ON p.id = v.path_id WHERE v.tag = ? AND p.lang = ?",
                (reason_tag(word), lang),
            ).fetchall()
        return sorted({path for path, reason in rows if first_word(reason) == word})

    def entry_pruned(self, lang: str, word: str) -> bool:
        """Whether retention let go a version of some file written for ``word``
        (``entry:<id>``) that no undo of the entry took back (``retention``)."""
        with self._read(snapshot=False) as conn:
            return retention.entry_lost(conn, lang, word)

    def content(self, version: Version) -> bytes:
        """The bytes of a version (rebuilt along its delta chain, checked by sha256)."""
        if version.blob is None:
            raise ValueError("this version records that the file did not exist")
        chain: list[Blob] = []
        blob_id: int | None = version.blob
        with self._read() as conn:
            while blob_id is not None:
                blob = writes.read_blob(conn, blob_id)
                if blob is None:
                    raise HistoryStoreError(
                        f"history is damaged: a stored text of {version.path} is missing"
                    )
                chain.append(blob)
                blob_id = blob.base if blob.kind == codec.DELTA else None
        chain.reverse()
        data = codec.rebuild(chain)
        if codec.sha_of(data) != chain[-1].sha:
            raise HistoryStoreError(f"history is damaged: a stored text of {version.path} is wrong")
        return data

    def mode(self, version: Version) -> int | None:
        """The permissions recorded on a version (a file gone: see ``schema``); None
        when not known, or when the file is an older indexer's opened read-only (no
        ``mode`` column: the writer adds it as it opens)."""
        with self._read(snapshot=False) as conn:
            try:
                row = conn.execute("SELECT mode FROM versions WHERE id = ?", (version.id,))
            except sqlite3.OperationalError as err:
                if "no such column" not in str(err):
                    raise
                return None
            found = row.fetchone()
        value = None if found is None else found[0]
        # (a damaged row's number, or one holding more than permission bits: not a mode
        # to hand to fchmod; unknown, so the file is made as a new one is)
        return value if type(value) is int and 0 <= value <= 0o777 else None

    def stats(self) -> dict[str, int]:
        """Counts and sizes (for the benchmark and the tests)."""
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

    def _latest_with_depth(self, lang: str, path: str) -> tuple[Version | None, int]:
        """The latest version of a path and the chain depth of its blob, in one read."""
        with self._read(snapshot=False) as conn:
            row = conn.execute(
                f"SELECT {VERSION_COLUMNS}, coalesce(b.depth, 0) {VERSIONS_FROM}"
                " LEFT JOIN blobs AS b ON b.id = v.blob WHERE p.lang = ? AND p.path = ?"
                " ORDER BY v.version DESC LIMIT 1",
                (lang, path),
            ).fetchone()
        return (None, 0) if row is None else (version_of(row[:-1]), int(row[-1]))

    def _blob_depth(self, blob_id: int) -> int:
        with self._read(snapshot=False) as conn:
            row = conn.execute("SELECT depth FROM blobs WHERE id = ?", (blob_id,)).fetchone()
        return 0 if row is None else int(row[0])

    @contextmanager
    def _read(self, *, snapshot: bool = True) -> Iterator[sqlite3.Connection]:
        """A reader connection; ``snapshot`` makes every statement of the caller see one
        state (a single statement always does: it is its own transaction)."""
        if self._closed:
            raise HistoryStoreError("the history is closed")
        try:
            conn = self._readers.get_nowait()
        except queue.Empty:
            conn = schema.connect(self.path, readonly=self._readonly)
            with self._lock:
                self._connections.append(conn)
        try:
            if snapshot:
                conn.execute("BEGIN")
            try:
                yield conn
            finally:
                if snapshot:
                    conn.execute("COMMIT")
        except sqlite3.DatabaseError as err:
            raise HistoryStoreError(f"the history cannot be read ({err})") from None
        finally:
            self._put_back(conn)

    def _put_back(self, conn: sqlite3.Connection) -> None:
        """Back among the idle readers, or closed past ``IDLE_READERS`` of them: a burst of
        reads at once opened a reader per thread (up to the pool's 40), each kept for the
        process's life with its page cache (as the index's were, ``index.connections``)."""
        if self._readers.qsize() < IDLE_READERS:
            self._readers.put(conn)
            return
        with self._lock:
            if conn in self._connections:
                self._connections.remove(conn)
                conn.close()
