"""Syncing many files in one transaction, the row of a file that only moved re-keyed.

A folder moved (by a tool, its undo, or another program the watcher hears) is, to the
index, each file gone from one path and come to another with the same bytes. Synced one
by one, each old row was deleted (its words and trigrams tokenized again to take them
out of the contentless FTS tables) and the new one parsed and inserted (tokenized once
more): half of a 3,000-note move's time. A row depends on its path only through the
file's name (``parse.parse_note``), so a file that came under the same name, in the
same lang, with exactly the bytes a gone row was made from (the row's hash) takes that
row: one ``UPDATE`` of its path and stat, its FTS rows (keyed by the row's id) left as
they are, what a sync of both paths would have made.

Every file is read under the index's write lock, as ``reconcile.sync_file`` does; the
rows not re-keyed are synced by it. As there, a file changed after it was read (a note
put back at the old path by another program) makes an event the watcher syncs after
this transaction (or the next reconcile, without a watcher).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable

from indexer.index.reconcile import (
    SELECT_OLD,
    ReconcileStats,
    is_note_path,
    keep_before,
    read_note,
    sync_file,
    sync_read,
)
from indexer.sqlite_lib import sqlite3
from indexer.vault.fsops import etag_of
from indexer.vault.scan import signature
from shared.workspace import Workspace

__all__ = ["sync_files"]

Key = tuple[str, str]  # (lang, path)
# The rows whose file is gone, by (lang, file name, hash of the bytes): (path, row id).
_Gone = dict[tuple[str, str, str], list[tuple[str, int]]]


def sync_files(
    conn: sqlite3.Connection,
    workspace: Workspace,
    keys: Iterable[Key],
    stats: ReconcileStats,
    stop: Callable[[], None] = lambda: None,
) -> None:
    """Make the rows of ``keys`` match the disk (each path once), in the caller's
    transaction with the write lock held; ``stop`` raises to give up between files.

    First the paths that have a row: synced, or kept aside when their file is gone;
    then those with none: a file with the name and the bytes of a row kept aside takes
    that row; last the rows left aside are removed (read once more, as a sync would)."""
    gone: _Gone = {}
    arrived: list[Key] = []
    for lang, rel in dict.fromkeys(keys):
        stop()
        old = conn.execute(SELECT_OLD, (lang, rel)).fetchone()
        if old is None:
            arrived.append((lang, rel))
            continue
        got = read_note(workspace, lang, rel) if is_note_path(rel) else None
        if got is None:
            gone.setdefault((lang, _name(rel), old[10]), []).append((rel, old[0]))
        else:
            sync_read(conn, lang, rel, old, got, stats)
    for lang, rel in arrived:
        stop()
        got = read_note(workspace, lang, rel) if is_note_path(rel) else None
        if got is None or not _took_row(conn, lang, rel, got, gone, stats):
            sync_read(conn, lang, rel, None, got, stats)
    for (lang, _, _), rows in gone.items():
        for rel, _ in rows:
            stop()
            sync_file(conn, workspace, lang, rel, stats)


def _name(rel: str) -> str:
    return rel.rpartition("/")[2]


def _took_row(
    conn: sqlite3.Connection,
    lang: str,
    rel: str,
    got: tuple[bytes, os.stat_result],
    gone: _Gone,
    stats: ReconcileStats,
) -> bool:
    """Re-key to ``rel`` the row of a gone file that had ``got``'s name and bytes, if
    there is one; whether it did."""
    if not gone:
        return False
    data, info = got
    rows = gone.get((lang, _name(rel), etag_of(data)))
    if not rows:
        return False
    old_rel, rowid = rows.pop()  # (two such rows are the same but for their path)
    if stats.befores is not None:  # (the old path's text, as its removal would keep it)
        keep_before(conn, stats, old_rel, conn.execute(SELECT_OLD, (lang, old_rel)).fetchone())
    conn.execute(
        "UPDATE notes SET path = ?, size = ?, mtime_ns = ?, ctime_ns = ? WHERE id = ?",
        (rel, *signature(info), rowid),
    )
    stats.linked[(lang, old_rel)] = False
    stats.linked[(lang, rel)] = info.st_nlink > 1
    stats.removed += 1
    stats.added += 1
    stats.changed += [(lang, old_rel), (lang, rel)]
    return True
