"""A batch's FTS statements, held until its ``notes`` statements have run.

Why: FTS5 writes the terms it holds in memory out as a new segment at every statement
savepoint, and every statement on ``notes`` opens one (the change log's triggers fire
on it). Synced file by file, a batch of N files made each FTS table write N segments
(each file's ``notes`` statements flushed the terms of the file before it), every one
merged again later; with the FTS statements of the whole batch after its ``notes``
ones, each table writes one, at the commit. The statements run in the order they were
held and nothing in a batch reads the FTS tables, so the rows and terms are the same.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from itertools import groupby

from indexer.sqlite_lib import sqlite3

__all__ = ["FtsWrites", "held"]

# Past this many characters of held values, they run at once (the rest of the batch's
# then cost one more segment): a batch of large notes is not copied whole in memory.
# FTS5 writes its own terms out past about 1 MB of them anyway.
MAX_HELD_CHARS = 4 << 20


class FtsWrites:
    """FTS statements of one transaction, to run after its ``notes`` statements."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._held: list[tuple[str, tuple]] = []
        self._chars = 0

    def add(self, sql: str, values: tuple) -> None:
        """Hold ``sql`` with ``values`` (run by ``run``, in the order added)."""
        self._held.append((sql, values))
        self._chars += sum(len(v) for v in values if isinstance(v, str))
        if self._chars > MAX_HELD_CHARS:
            self.run()

    def run(self) -> None:
        """Run what is held, in order (one ``executemany`` for each run of one statement)."""
        held, self._held, self._chars = self._held, [], 0
        for sql, group in groupby(held, key=lambda item: item[0]):
            self._conn.executemany(sql, [values for _, values in group])


@contextmanager
def held(conn: sqlite3.Connection) -> Iterator[FtsWrites]:
    """FTS statements held for the block, run at its end unless it raised (its
    transaction is then rolled back: they would change nothing)."""
    writes = FtsWrites(conn)
    yield writes
    writes.run()
