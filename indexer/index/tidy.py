"""The full-text index's segments merged while the index is idle.

FTS5 adds a segment with each transaction and merges them as later writes go on (its
automerge), leaving tens after a build (22 in ``notes_fts`` and 15 in ``notes_tri`` at
10,000 notes, 26 and 17 at 100,000), and every query reads every one of them: at 10,000
notes a phrase took 1.5x, a 4-character CJK or 6-character Thai word 1.3x the time one
segment takes (at 100,000, 2.8x and 1.7x). Once the index has taken no write for
``IDLE_SECONDS`` after some, its segments are merged a step at a time (``STEP_PAGES``
pages in one short write transaction: a write waits for one step at most, 10 ms), until
FTS5 has nothing left to merge or a write comes (then again once idle).
"""

from __future__ import annotations

import logging
import threading
import time

from indexer.index.connections import Connections
from indexer.sqlite_lib import sqlite3

log = logging.getLogger("indexer.index")

IDLE_SECONDS = 30.0
STEP_PAGES = 100
TABLES = ("notes_fts", "notes_tri")


class Tidier:
    """One daemon thread merging the index's segments when it is idle."""

    def __init__(self, db: Connections, *, idle_seconds: float = IDLE_SECONDS) -> None:
        self._db = db
        self._idle_seconds = idle_seconds
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self.tidied = -1  # the generation the last finished merge left (-1: none yet)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="index-tidy", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 30) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout=timeout)
            self._thread = None

    def _run(self) -> None:
        seen = self._db.generation
        while not self._stopping.wait(self._idle_seconds):
            now = self._db.generation
            if now != seen:  # written to within the last period: not idle yet
                seen = now
            elif now != self.tidied and self.merge():
                seen = self.tidied = self._db.generation

    def merge(self) -> bool:
        """Merge each table's segments a step at a time; False when a write came between
        two steps (or the index could not be written), True when nothing is left."""
        if self._db.writer is None or self._db.readonly:
            return False
        started = time.monotonic()
        left = self._db.generation  # what the last step left: another means a write came
        for table in TABLES:
            while True:
                if self._stopping.is_set() or self._db.generation != left:
                    return False  # (a write came: again once idle)
                try:
                    with self._db.write() as conn:
                        changes = conn.total_changes
                        conn.execute(
                            f"INSERT INTO {table}({table}, rank) VALUES ('merge', ?)",
                            (-STEP_PAGES,),
                        )
                        done = conn.total_changes - changes < 2  # (FTS5: no work was left)
                except (sqlite3.Error, RuntimeError) as err:  # (closed, a full disk)
                    log.info("the index's segments were left unmerged: %s", err)
                    return False
                left += 1
                if done:
                    break
        log.debug("index segments merged in %.2fs", time.monotonic() - started)
        return True
