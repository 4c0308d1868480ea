"""The texts an older index held for history, in a file of their own from before that
index is deleted until they are kept in the new one (``upgrade``, ``schema.open_index``).

Held in memory only, a kill or a power loss after the old file went and before the new
one's ``befores`` held them lost them for good: the next start found an index of this
schema, nothing to carry, and the notes another program changed while no indexer ran
could not be restored (a helper killed the first start right there).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from indexer.sqlite_lib import sqlite3

log = logging.getLogger("indexer.index")

Text = tuple[str, str, bytes]  # lang, path, data


def carried_path(index: Path) -> Path:
    return Path(f"{index}-carried")


def save(index: Path, texts: list[Text]) -> None:
    """Write ``texts`` beside ``index``, synced, whole or not at all (a temp file renamed)."""
    temp = Path(f"{index}-carried.tmp")
    temp.unlink(missing_ok=True)
    conn = sqlite3.connect(temp, isolation_level=None)
    try:
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute("CREATE TABLE befores (lang TEXT NOT NULL, path TEXT NOT NULL, data BLOB)")
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO befores VALUES (?, ?, ?)", texts)
        conn.execute("COMMIT")
    finally:
        conn.close()
    os.replace(temp, carried_path(index))
    folder = os.open(index.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)


def keep(conn: sqlite3.Connection, index: Path) -> int:
    """Put the texts of a carried file (this start's, or one a crash left) in ``conn``'s
    ``befores``, synced, then remove the file; how many there were."""
    file = carried_path(index)
    Path(f"{index}-carried.tmp").unlink(missing_ok=True)  # (a crash before its rename)
    if not file.exists():
        return 0
    try:
        source = sqlite3.connect(f"file:{file}?mode=ro", uri=True)
        try:
            texts = source.execute("SELECT lang, path, data FROM befores").fetchall()
        finally:
            source.close()
    except sqlite3.DatabaseError as err:
        log.warning("index: the texts carried from the older index cannot be read (%s)", err)
        texts = []
    if texts:
        conn.execute("PRAGMA synchronous = FULL")  # (in the file before ours goes)
        try:
            conn.execute("BEGIN")
            conn.executemany(
                "INSERT OR IGNORE INTO befores (lang, path, data) VALUES (?, ?, ?)", texts
            )
            conn.execute("COMMIT")
        finally:
            conn.execute("PRAGMA synchronous = NORMAL")
        log.info("index: kept %d texts of the older index for history", len(texts))
    file.unlink()
    return len(texts)
