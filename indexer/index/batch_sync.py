"""Syncing many files at once, the row of a file that only moved re-keyed.

A folder moved (by a tool, its undo, another program the watcher hears, or while no
indexer ran) is, to the index, each file gone from one path and come to another with
the same bytes. Synced one by one, each old row was deleted (its words and trigrams
tokenized again to take them out of the contentless FTS tables) and the new one parsed
and inserted (tokenized once more): half of a 3,000-note move's time, and nine tenths
of the start's reconcile after a folder moved offline. A row depends on its path only
through the file's name (``parse.parse_note``), so a file that came under the same
name, in the same lang, with exactly the bytes a gone row was made from (the row's
hash) takes that row: one ``UPDATE`` of its path and stat, its FTS rows (keyed by the
row's id) left as they are, what a sync of both paths would have made.

Every file is read under the index's write lock, as ``reconcile.sync_file`` does; the
rows not re-keyed are synced by it. As there, a file changed after it was read (a note
put back at the old path by another program) makes an event the watcher syncs after
this transaction (or the next reconcile, without a watcher).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable

from indexer.index.fts_writes import FtsWrites, held
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
from indexer.vault.names import listings_kept
from indexer.vault.scan import signature
from shared.workspace import Workspace

__all__ = ["GoneRows", "sync_files", "sync_path"]

Key = tuple[str, str]  # (lang, path)


class GoneRows:
    """Rows whose file is gone, by (lang, file name, hash of the bytes), each with its
    path and id: a file come at a path with no row takes one (``take``).

    ``seen_now``: each row was found gone in the caller's transaction (``sync_files``);
    else by a walk before it (the start's reconcile, its batches each a transaction),
    and a row is taken only if it is still as it was and its file still gone."""

    def __init__(self, workspace: Workspace, *, seen_now: bool) -> None:
        self._workspace = workspace
        self._seen_now = seen_now
        self._rows: dict[tuple[str, str, str], list[tuple[str, int]]] = {}
        self.added: list[Key] = []
        self.taken: set[Key] = set()

    def add(self, lang: str, rel: str, rowid: int, digest: str) -> None:
        self._rows.setdefault((lang, _name(rel), digest), []).append((rel, rowid))
        self.added.append((lang, rel))

    def add_rows(self, conn: sqlite3.Connection, keys: Iterable[Key]) -> None:
        """The rows of ``keys`` (paths whose file a walk did not find) as they are now."""
        for lang, rel in keys:
            row = conn.execute(
                "SELECT id, hash FROM notes WHERE lang = ? AND path = ?", (lang, rel)
            ).fetchone()
            if row is not None:
                self.add(lang, rel, row[0], row[1])

    def left(self) -> list[Key]:
        """The rows added and not taken (to sync: removed, or found after all)."""
        return [key for key in self.added if key not in self.taken]

    def take(
        self,
        conn: sqlite3.Connection,
        lang: str,
        rel: str,
        got: tuple[bytes, os.stat_result],
        stats: ReconcileStats,
    ) -> bool:
        """Re-key to ``rel`` (no row) the row of a gone file that had ``got``'s name and
        bytes, if there is one; whether it did."""
        if not self._rows:
            return False
        data, info = got
        digest = etag_of(data)
        rows = self._rows.get((lang, _name(rel), digest))
        while rows:
            old_rel, rowid = rows.pop()  # (two such rows are the same but for their path)
            old = conn.execute(SELECT_OLD, (lang, old_rel)).fetchone()
            if (old is None or (old[0], old[10]) != (rowid, digest)) or (
                not self._seen_now and read_note(self._workspace, lang, old_rel) is not None
            ):
                continue  # (a tool's change since, or the file back: synced as any other)
            keep_before(conn, stats, old_rel, old)  # (the old path's text, as removed)
            conn.execute(
                "UPDATE notes SET path = ?, size = ?, mtime_ns = ?, ctime_ns = ?, mode = ?,"
                " gid = ? WHERE id = ?",
                (rel, *signature(info), info.st_mode & 0o7777, info.st_gid, rowid),
            )
            self.taken.add((lang, old_rel))
            stats.linked[(lang, old_rel)] = False
            stats.linked[(lang, rel)] = info.st_nlink > 1
            stats.removed += 1
            stats.added += 1
            stats.changed += [(lang, old_rel), (lang, rel)]
            return True
        return False


def sync_path(
    conn: sqlite3.Connection,
    fts: FtsWrites,
    workspace: Workspace,
    lang: str,
    rel: str,
    gone: GoneRows,
    stats: ReconcileStats,
) -> None:
    """``reconcile.sync_file``, but a file at a path with no row may take a gone row."""
    old = conn.execute(SELECT_OLD, (lang, rel)).fetchone()
    got = read_note(workspace, lang, rel) if is_note_path(rel) else None
    if old is None and got is not None and gone.take(conn, lang, rel, got, stats):
        return
    sync_read(conn, fts, lang, rel, old, got, stats)


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
    that row; last the rows left aside are removed (read once more, as a sync would).
    Each folder is listed once for the other spellings of its names (``listings_kept``);
    the FTS statements run after every ``notes`` one (``fts_writes``)."""
    with listings_kept(), held(conn) as fts:
        _sync_files(conn, fts, workspace, keys, stats, stop)


def _sync_files(
    conn: sqlite3.Connection,
    fts: FtsWrites,
    workspace: Workspace,
    keys: Iterable[Key],
    stats: ReconcileStats,
    stop: Callable[[], None],
) -> None:
    gone = GoneRows(workspace, seen_now=True)
    arrived: list[Key] = []
    for lang, rel in dict.fromkeys(keys):
        stop()
        old = conn.execute(SELECT_OLD, (lang, rel)).fetchone()
        if old is None:
            arrived.append((lang, rel))
            continue
        got = read_note(workspace, lang, rel) if is_note_path(rel) else None
        if got is None:
            gone.add(lang, rel, old[0], old[10])
        else:
            sync_read(conn, fts, lang, rel, old, got, stats)
    for lang, rel in arrived:
        stop()
        sync_path(conn, fts, workspace, lang, rel, gone, stats)
    for lang, rel in gone.left():
        stop()
        sync_file(conn, fts, workspace, lang, rel, stats)


def _name(rel: str) -> str:
    return rel.rpartition("/")[2]
