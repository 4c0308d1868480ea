"""The texts replaced rows held that history has not recorded yet, in the index's file.

A sync that replaces or removes the row of a note history never saw keeps the row's text
(``befores``) in the table ``befores``, in the transaction that changes the row: the
text leaves the index only once it is in history. A pass records what it kept after
its commits (a start-up reconcile at its end: recording 20,000 baselines one by one in
its batches would hold the index's write lock through history's writes), and a kill -9
or a power loss before that finds the texts here at the next start, which records them
before anything else (``record``, every key). Held in memory only, they were lost, and
the next start recorded the edited text as the note's first version.

Of two passes keeping a note's text, the first kept is the older (``INSERT OR IGNORE``):
the note's baseline, also for a tool's change made before it is recorded (``held``).
A text recorded is deleted once history's file is synced (a power loss may lose its
last commits otherwise); recorded again (a kill between), history already holds the
note and ``keep_befores`` does nothing. (The table: ``schema.BEFORES_DDL``.)
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

from indexer.index.befores import exact_text
from indexer.index.connections import Connections
from indexer.sqlite_lib import sqlite3

log = logging.getLogger("indexer.index")

Key = tuple[str, str]
KeepBefores = Callable[[list[tuple[str, str, bytes]]], None]  # (lang, path, text)s

CHUNK = 256  # texts read, recorded and deleted at a time


def put(conn: sqlite3.Connection, lang: str, path: str, data: bytes) -> None:
    """Keep ``data`` as the text ``lang``/``path`` had (in the caller's transaction),
    unless an older one is kept already."""
    conn.execute(
        "INSERT OR IGNORE INTO befores (lang, path, data) VALUES (?, ?, ?)", (lang, path, data)
    )


def held(db: Connections, lang: str, path: str) -> bytes | None:
    """The text the index holds of a note history never saw: the one a pass kept, else
    its row's exact text (one snapshot: a commit between two reads would hide both)."""
    try:
        with db.read() as conn:
            kept = _text(conn, lang, path)
            row = conn.execute(
                "SELECT head, body, joined, hash FROM notes WHERE lang = ? AND path = ?",
                (lang, path),
            ).fetchone()
    except sqlite3.Error as err:
        log.warning("could not read the indexed text of %s/%s: %s", lang, path, err)
        return None
    if kept is not None:
        return kept
    return None if row is None else exact_text(row[0], row[1], bool(row[2]), row[3])


def record(
    db: Connections,
    keys: Iterable[Key] | None,
    keep_befores: KeepBefores,
    durable: Callable[[], None],
) -> int:
    """Have history record the kept texts of ``keys`` (None: every text kept), then
    delete them once ``durable`` made history's commits survive a power loss (its
    ``synchronous=NORMAL`` syncs them later), ``CHUNK`` texts at a time (one history
    transaction each: a text a transaction was most of history's time in a checkout);
    texts history refused (``keep_befores`` raised) stay for the next reconcile. How
    many were recorded."""
    if keys is None:
        with db.read() as conn:
            keys = conn.execute("SELECT lang, path FROM befores").fetchall()
    todo = list(keys)
    recorded = 0
    for start in range(0, len(todo), CHUNK):
        chunk = todo[start : start + CHUNK]
        with db.read() as conn:
            texts = [(lang, path, _text(conn, lang, path)) for lang, path in chunk]
        found = [(lang, path, data) for lang, path, data in texts if data is not None]
        try:  # (None: recorded by another pass meanwhile)
            keep_befores(found)
        except Exception:
            log.exception("could not keep the former texts of %d note(s)", len(found))
            continue
        done = [(lang, path) for lang, path, _ in found]
        recorded += len(done)
        if not done:
            continue
        try:
            durable()
        except OSError as err:  # (kept for the next reconcile)
            log.warning("history: could not sync its file: %s", err)
            continue
        with db.write() as conn:
            conn.executemany("DELETE FROM befores WHERE lang = ? AND path = ?", done)
    return recorded


def _text(conn: sqlite3.Connection, lang: str, path: str) -> bytes | None:
    row = conn.execute(
        "SELECT data FROM befores WHERE lang = ? AND path = ?", (lang, path)
    ).fetchone()
    return None if row is None else bytes(row[0])
