"""Retention: which versions pruning lets go, and the blobs nothing uses any more.

Kept for each path: the newest ``keep`` versions, every version younger than the
cut-off, and what undoing the path's latest change needs (the trailing run of versions
with the latest's reason, and the one before it: ``undo`` goes back to that one); the
latest version is always among them. A blob goes once no version and no delta uses
it; its base may then go in turn. A delta keeps its base alive, so pruning frees the
older texts of a delta chain only once a full copy cuts the chain (at most
``codec.MAX_DEPTH`` deltas later).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable


def doomed(
    conn: sqlite3.Connection, path_id: int, cutoff: int, keep: int
) -> list[tuple[int, bytes | None]]:
    """(id, blob) of the versions of one path that retention lets go."""
    rows = conn.execute(
        "SELECT id, at_ms, reason, pending, blob FROM versions WHERE path_id = ?"
        " ORDER BY version DESC",
        (path_id,),
    ).fetchall()
    protected = keep
    reason = rows[0][2]
    if reason is not None:  # what undoing the latest change needs: its run and one more
        run = 0
        while run < len(rows) and rows[run][2] == reason:
            run += 1
        protected = max(protected, run + 1)
    return [
        (id_, blob)
        for id_, at_ms, _, pending, blob in rows[protected:]
        if at_ms < cutoff and not pending
    ]


def collect(conn: sqlite3.Connection, candidates: Iterable[bytes]) -> int:
    """Delete the candidate blobs no version and no delta uses, then their bases in
    turn; returns how many went."""
    removed = 0
    todo = set(candidates)
    while todo:
        bases: set[bytes] = set()
        for sha in todo:
            used = conn.execute(
                "SELECT 1 FROM versions WHERE blob = ? UNION ALL"
                " SELECT 1 FROM blobs WHERE base = ? LIMIT 1",
                (sha, sha),
            ).fetchone()
            if used:
                continue
            row = conn.execute("DELETE FROM blobs WHERE sha = ? RETURNING base", (sha,)).fetchone()
            if row is not None:
                removed += 1
                if row[0] is not None:
                    bases.add(row[0])
        todo = bases
    return removed
