"""Retention: which versions pruning lets go, and the blobs nothing uses any more.

Kept for each path: the newest ``keep`` versions, every version younger than the
cut-off, and what undoing the path's latest change needs (the trailing run of versions
with the latest's reason, and the one before it: ``undo`` goes back to that one); the
latest version is always among them. A blob goes once no version and no delta uses
it; its base may then go in turn. A delta keeps its base alive, so pruning frees the
older texts of a delta chain only once a full copy cuts the chain (at most
``codec.MAX_DEPTH`` deltas later).

The unused blobs are found by one scan on a reader's snapshot (no index is kept for
this: it would cost about a tenth of history's size); a blob is then deleted, under
the write lock, unless a version or a delta recorded after the snapshot uses it (a
range of the newest row ids, cheap to look at).

The cut-off moves forward by at most ``step`` per pass (``next_cutoff``): it is kept in
the file (table ``prune_cutoff``, made by the first pass), so a clock that jumps years
ahead (a board with no clock battery, a wrong NTP answer) cannot delete every older
version at the next pass; it costs at most ``step`` a pass until the clock is set right,
while a real long shutdown catches up over a few passes (keeping more meanwhile).

A memory entry's version let go, one no undo of the entry took back, is remembered
(table ``pruned_entries``, made by the first pass that needs it): ``undo`` of that
entry then refuses, where it would have undone the rest of the entry alone and said
it was done (the file whose version went may well have been changed since).
"""

from __future__ import annotations

from indexer.sqlite_lib import sqlite3
from indexer.vault.history.rows import PUT_BACK, UNDO_REASON, first_word


def next_cutoff(conn: sqlite3.Connection, wanted: int, days_ms: int, step: int) -> int:
    """The cut-off of this pass (ms): ``wanted`` (the clock's now - days), but at most
    ``step`` past the last pass's; with no last pass (a new history, or one from before
    this was kept), past the newest version's time - days, as if a pass had run then.
    Saved for the next pass, in the caller's write transaction."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS prune_cutoff"
        " (id INTEGER PRIMARY KEY CHECK (id = 1), at_ms INTEGER NOT NULL)"
    )
    row = conn.execute("SELECT at_ms FROM prune_cutoff WHERE id = 1").fetchone()
    if row is None:
        newest = conn.execute("SELECT max(at_ms) FROM versions").fetchone()[0]
        row = (wanted if newest is None else min(wanted, newest - days_ms),)
    cutoff = min(wanted, int(row[0]) + step)
    conn.execute("INSERT OR REPLACE INTO prune_cutoff (id, at_ms) VALUES (1, ?)", (cutoff,))
    return cutoff


def crowded_paths(conn: sqlite3.Connection, keep: int) -> list[int]:
    """Ids of the paths with more than ``keep`` versions (the only ones to prune)."""
    rows = conn.execute(
        "SELECT path_id FROM versions GROUP BY path_id HAVING count(*) > ?", (keep,)
    )
    return [r[0] for r in rows]


def doomed(
    conn: sqlite3.Connection, path_id: int, cutoff: int, keep: int
) -> tuple[list[int], set[str]]:
    """Ids of the versions of one path that retention lets go, and the entries
    (``entry:<id>``) one of those was written for and no later undo took back."""
    rows = conn.execute(
        "SELECT id, at_ms, reason, pending FROM versions WHERE path_id = ? ORDER BY version DESC",
        (path_id,),
    ).fetchall()
    protected = keep
    reason = rows[0][2] if rows else None
    if reason is not None:  # what undoing the latest change needs: its run and one more
        run = 0
        while run < len(rows) and rows[run][2] == reason:
            run += 1
        protected = max(protected, run + 1)
    ids: list[int] = []
    lost: set[str] = set()
    undos: dict[str, int] = {}  # entry id -> the undos met (newest first), less put-backs
    for index, (id_, at_ms, reason, pending) in enumerate(rows):
        word = first_word(reason) or ""
        if index >= protected and at_ms < cutoff and not pending:
            ids.append(id_)
            if word.startswith("entry:") and undos.get(word.removeprefix("entry:"), 0) <= 0:
                lost.add(word)
        if word == "undo" and reason is not None and reason.startswith(UNDO_REASON):
            entry = reason.removeprefix(UNDO_REASON)
            back = entry.endswith(PUT_BACK)
            entry = entry.removesuffix(PUT_BACK)
            undos[entry] = undos.get(entry, 0) + (-1 if back else 1)
    return ids, lost


def remember_lost(conn: sqlite3.Connection, path_id: int, words: set[str]) -> None:
    """Keep the entries ``doomed`` found losing a version of the path, by its vault."""
    if not words:
        return
    conn.execute(
        "CREATE TABLE IF NOT EXISTS pruned_entries"
        " (lang TEXT NOT NULL, word TEXT NOT NULL, PRIMARY KEY (lang, word)) WITHOUT ROWID"
    )
    (lang,) = conn.execute("SELECT lang FROM paths WHERE id = ?", (path_id,)).fetchone()
    conn.executemany(
        "INSERT OR IGNORE INTO pruned_entries (lang, word) VALUES (?, ?)",
        [(lang, word) for word in sorted(words)],
    )


def entry_lost(conn: sqlite3.Connection, lang: str, word: str) -> bool:
    """Whether retention let go a version written for entry ``word`` in ``lang``."""
    made = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'pruned_entries'"
    ).fetchone()
    found = (
        made
        and conn.execute(
            "SELECT 1 FROM pruned_entries WHERE lang = ? AND word = ?", (lang, word)
        ).fetchone()
    )
    return bool(found)


def unused_blobs(conn: sqlite3.Connection) -> tuple[list[int], tuple[int, int]]:
    """(ids of the blobs no version and no delta uses, (newest version id, newest blob
    id)) in the snapshot of ``conn``."""
    newest_version = conn.execute("SELECT coalesce(max(id), 0) FROM versions").fetchone()[0]
    newest_blob = conn.execute("SELECT coalesce(max(id), 0) FROM blobs").fetchone()[0]
    unused = conn.execute(
        "SELECT id FROM blobs WHERE id NOT IN (SELECT blob FROM versions WHERE blob IS NOT NULL)"
        " AND id NOT IN (SELECT base FROM blobs WHERE base IS NOT NULL)"
    )
    return [r[0] for r in unused], (newest_version, newest_blob)


def drop_blobs(conn: sqlite3.Connection, ids: list[int], newest: tuple[int, int]) -> int:
    """Delete the blobs of ``ids`` that nothing recorded since the snapshot uses."""
    removed = 0
    for blob_id in ids:
        used = conn.execute(
            "SELECT 1 FROM versions WHERE id > ? AND blob = ? UNION ALL"
            " SELECT 1 FROM blobs WHERE id > ? AND base = ? LIMIT 1",
            (newest[0], blob_id, newest[1], blob_id),
        ).fetchone()
        if used is None:
            removed += conn.execute("DELETE FROM blobs WHERE id = ?", (blob_id,)).rowcount
    return removed
