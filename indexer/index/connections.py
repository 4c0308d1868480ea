"""``Connections``: the SQLite connections of one index file, and their rules.

One writer connection behind a lock, each write in its own ``BEGIN IMMEDIATE``
transaction that is never left open (``generation`` counts the commits, so the query
caches know when they went stale), and a pool of reader connections, each read one
snapshot (WAL lets them read while a write is under way). Kept apart from the facade
(``service.NoteIndex``) so that the rules for talking to the file live in one place.
Thread-safe.

Each commit also logs which ``notes`` rows it wrote (``changes``), found by TEMP
triggers on the writer connection, so that a read cache can re-read just those rows
instead of everything after each write. The triggers see every statement of the writer,
so no writer can forget to report a change; the log is complete as long as this process
is the only one writing the file, which the workspace lock ensures.
"""

from __future__ import annotations

import collections
import contextlib
import errno
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from indexer.index import schema as index_schema
from indexer.index.text import fold
from indexer.sqlite_errors import called_damaged, disk_trouble
from indexer.sqlite_lib import sqlite3
from shared.cli_usage import said_of_os_error
from shared.errors import IndexSchemaError, OperationalError, StorageError

__all__ = ["Changed", "Connections"]

# (lang, path) of the notes rows that commits wrote; None: unknown, read everything again.
Changed = frozenset[tuple[str, str]] | None
# A commit writing more rows than this (a rebuild's clear) logs None: re-reading that many
# rows one by one is no quicker than reading them all.
MAX_LOGGED_ROWS = 4000
LOGGED_COMMITS = 64  # how many of the last commits ``changes`` can answer for
# Idle readers kept open. Each holds a page cache of up to ``cache_size`` (16 MB) that it
# never gives back; a burst of reads at once (up to the thread pool's 40 threads) opened a
# reader each, and all stayed: 31 after one burst of 60 REST searches, their caches
# filling to 16 MB each as later reads spread over them. Past this many, the reader idle
# longest is closed (opening one again costs 0.1 ms).
IDLE_READERS = 4
_TRACKING = (
    "CREATE TEMP TABLE vm_touched (lang TEXT, path TEXT)",
    "CREATE TEMP TRIGGER vm_touched_insert AFTER INSERT ON main.notes"
    " BEGIN INSERT INTO vm_touched VALUES (new.lang, new.path); END",
    "CREATE TEMP TRIGGER vm_touched_delete AFTER DELETE ON main.notes"
    " BEGIN INSERT INTO vm_touched VALUES (old.lang, old.path); END",
    "CREATE TEMP TRIGGER vm_touched_update AFTER UPDATE ON main.notes"
    " BEGIN INSERT INTO vm_touched VALUES (old.lang, old.path), (new.lang, new.path); END",
    # A REPLACE that deletes a conflicting row fires the delete trigger only with this on.
    "PRAGMA recursive_triggers = ON",
)


class Connections:
    """The writer and the readers of the index at ``path``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock = threading.Lock()  # held by every write, and to add a connection
        self.writer: sqlite3.Connection | None = None
        self.readonly = False
        self.generation = 0  # bumped by every committed write, and by opening the writer
        self._log: dict[int, Changed] = {}  # generation -> rows its commit wrote
        self._log_lock = threading.Lock()
        # Idle readers, the last one back on top: a reader's page cache is its own, and
        # the one used last holds what the next search most likely reads again.
        self._readers: collections.deque[sqlite3.Connection] = collections.deque()
        self._all: list[sqlite3.Connection] = []
        self._all_lock = threading.Lock()  # (not ``lock``: a reader never waits on a write)
        # Told of a read SQLite found the file damaged in (a server has it checked whole);
        # unset, such a read fails with SQLite's own error.
        self.on_damaged: Callable[[Exception], None] | None = None

    def open_writer(self, *, check: bool, carry: index_schema.Carry | None = None) -> None:
        """Create or migrate the file (see ``index_schema.open_index``)."""
        self.readonly = False
        self.writer = index_schema.open_index(self.path, check=check, carry=carry)
        with self._all_lock:
            self._all.append(self.writer)
        for sql in _TRACKING:
            self.writer.execute(sql)
        with self.lock:  # the file may have been recreated: a cache must read it again
            self._committed(None)

    def open_readonly(self) -> None:
        """Read an existing index only; raises if it is missing or of another schema."""
        self.readonly = True
        if not self.path.exists():
            raise FileNotFoundError(
                f"no index at {self.path} yet: run `indexer reindex` or start the server"
            )
        try:
            conn = index_schema.connect(self.path, readonly=True)
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            conn.close()
        except sqlite3.Error as err:  # another user's read-only workspace, typically
            trouble = disk_trouble(self.path, err)
            if trouble is not None:
                raise OperationalError(
                    f"cannot read the index {self.path} ({err}): {trouble} (SQLite writes"
                    " its -shm file beside it even to read); free some space or fix the disk"
                ) from None
            refused = refused_to_this_user(self.path)
            if refused is not None:
                raise OperationalError(f"cannot read the index: {refused}") from None
            raise OperationalError(
                f"cannot read the index {self.path} as this user ({err}): SQLite writes "
                "its -shm file beside it even to read; run as the workspace's owner, or "
                "search through a running server"
            ) from None
        if version > index_schema.SCHEMA_VERSION:  # (reindex refuses it too)
            raise IndexSchemaError(
                f"the index {self.path} has schema version {version}, newer than this "
                f"indexer's {index_schema.SCHEMA_VERSION}: upgrade the indexer, or delete the"
                " file to rebuild it"
            )
        if version != index_schema.SCHEMA_VERSION:
            raise IndexSchemaError(
                f"the index {self.path} has schema version {version}, this indexer "
                f"reads {index_schema.SCHEMA_VERSION}: run `indexer reindex`"
            )

    def close(self) -> None:
        """Close every connection (the pool forgets the readers)."""
        with self.lock, self._all_lock:
            for conn in self._all:
                conn.close()
            self._all.clear()
            self.writer = None
            self._readers.clear()

    def checkpoint(self) -> None:
        """Give the WAL's space back (after a rebuild)."""
        with self.lock:
            if self.writer is not None:
                self.writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """The writer connection, with the lock held and a transaction open."""
        with self.lock:
            conn = self.writer
            if conn is None:
                raise RuntimeError("the index is not open for writing")
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                changed = self._touched(conn)  # inside the transaction: cleared with it
                conn.execute("COMMIT")
            except BaseException:
                # SQLite may have rolled back already (a full disk): never leave a
                # transaction open, or every later write would fail.
                if conn.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        conn.execute("ROLLBACK")
                raise
            self._committed(changed)

    @staticmethod
    def _touched(conn: sqlite3.Connection) -> Changed:
        """The rows the triggers saw this transaction write, then forget them."""
        rows = conn.execute(
            "SELECT DISTINCT lang, path FROM vm_touched LIMIT ?", (MAX_LOGGED_ROWS + 1,)
        ).fetchall()
        conn.execute("DELETE FROM vm_touched")
        return None if len(rows) > MAX_LOGGED_ROWS else frozenset(rows)

    def _committed(self, changed: Changed) -> None:
        """Log a commit's rows, then bump the generation (with ``lock`` held): whoever
        reads the new generation finds its entry."""
        generation = self.generation + 1
        with self._log_lock:
            self._log[generation] = changed
            self._log.pop(generation - LOGGED_COMMITS, None)
        self.generation = generation

    def changes(self, since: int, upto: int) -> Changed:
        """The (lang, path) of every ``notes`` row written by the commits after
        generation ``since`` up to ``upto``; None when the log cannot tell (forgotten,
        or too many rows). A commit reaches the log after it committed and before the
        generation counts it."""
        if not 0 <= since <= upto <= since + LOGGED_COMMITS:
            return None
        changed: set[tuple[str, str]] = set()
        with self._log_lock:
            for generation in range(since + 1, upto + 1):
                rows = self._log.get(generation)
                if rows is None:
                    return None
                changed |= rows
        return frozenset(changed) if len(changed) <= MAX_LOGGED_ROWS else None

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """A reader connection with one snapshot for every statement of the caller."""
        try:
            conn = self._readers.pop()
        except IndexError:
            conn = index_schema.connect(self.path, readonly=self.readonly)
            conn.create_function("vm_fold", 1, fold, deterministic=True)
            with self._all_lock:
                self._all.append(conn)
        try:
            conn.execute("BEGIN")  # one snapshot for every statement of the caller
            try:
                yield conn
            finally:
                conn.execute("COMMIT")
        except sqlite3.DatabaseError as err:
            damaged = self._damaged(err)
            if damaged is None:
                raise
            raise damaged from err
        finally:
            self._put_back(conn)

    def _damaged(self, err: sqlite3.DatabaseError) -> StorageError | None:
        """What a failed read raises: a damaged file, once reported, says so and that it
        is being rebuilt (a search answered "the indexer failed" until a restart, and no
        catch-up met the damage while nothing was written)."""
        told = self.on_damaged
        if told is None or not called_damaged(err):
            return None
        told(err)
        return StorageError(
            f"the index is damaged ({' '.join(str(err).split())[:200]}): the indexer is"
            " checking it and rebuilds it from the vaults; retry in a minute",
            http_status=503,
        )

    def _put_back(self, conn: sqlite3.Connection) -> None:
        """Back on top of the idle readers; past ``IDLE_READERS`` the one idle longest
        (its cache the coldest) is closed."""
        with self._all_lock:
            if conn not in self._all:  # closed meanwhile (``close``)
                return
            self._readers.append(conn)
            if len(self._readers) <= IDLE_READERS:
                return
            oldest = self._readers.popleft()
            self._all.remove(oldest)
        oldest.close()

    @property
    def open_readers(self) -> int:
        """How many reader connections are open (in use or idle)."""
        with self._all_lock:
            return len(self._all) - (self.writer is not None)

    def get_state(self, key: str) -> str | None:
        with self.write() as conn:
            return self.state(conn, key)

    def set_state(self, key: str, value: str) -> None:
        with self.write() as conn:
            conn.execute("INSERT OR REPLACE INTO state (key, value) VALUES (?, ?)", (key, value))

    @staticmethod
    def state(conn: sqlite3.Connection, key: str) -> str | None:
        row = conn.execute("SELECT value FROM state WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])


def refused_to_this_user(path: Path) -> str | None:
    """Which part of an index file this user may not use, said with whose it is and
    what to do, or None: the file itself, unreadable, or its folder, where SQLite
    makes its -shm file even to read. SQLite says only "unable to open database file"."""
    try:
        with path.open("rb"):
            pass
    except PermissionError as err:
        return said_of_os_error(err)
    except OSError:
        return None
    shm = path.with_name(path.name + "-shm")
    if shm.exists() or os.access(path.parent, os.W_OK):
        return None
    refused = PermissionError(errno.EACCES, "Permission denied", str(path.parent))
    return "SQLite writes its -shm file beside the index even to read, and " + said_of_os_error(
        refused
    )
