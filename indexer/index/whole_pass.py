"""The whole-workspace passes: every vault walked, each file whose stat differs from its
row synced, in batches (one transaction each, under the write lock).

A reconcile after changes made while no indexer ran (the start's catch-up) or lost
events: a folder moved meanwhile is, to the walk, rows whose file is gone and files
at paths with no row. Before the batches, the gone rows are read (``GoneRows``): a
file come with a gone row's name and bytes takes that row (re-keyed, as a move by a
tool is: ``batch_sync``), where each was deleted and tokenized anew (a 3,000-note folder
moved offline: 17 s of catch-up, 200,000 FTS statements). A row is taken only if it is
still as the walk saw it and its file still gone (the batches let tools write between).
In a batch each folder is listed once for the other spellings of its names
(``names.listings_kept``): a gone file of an accented name listed its whole folder.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager

from indexer.index.batch_sync import GoneRows, sync_path
from indexer.index.befores import Befores
from indexer.index.fts_writes import FtsWrites, held
from indexer.index.parse import NoteRow, parse_note
from indexer.index.reconcile import (
    Progress,
    ReconcileStats,
    Stopped,
    VaultFile,
    insert_rows,
    keep_below,
    read_note,
    sync_file,
    vault_langs,
    walk_notes,
)
from indexer.sqlite_lib import sqlite3
from indexer.vault.names import listings_kept
from indexer.vault.scan import Signature
from shared.workspace import Workspace

__all__ = ["reconcile_all"]

# A batch holds the write lock: short, so that tool writes wait little; a fresh index
# (nobody else writes much yet) takes longer batches, which FTS5 inserts much faster.
BATCH_FILES = 200
BATCH_SECONDS = 0.1
FRESH_BATCH_FILES = 2000
# (the start's catch-up of files at paths with no row takes them too: a tool's write
# waited for one. A first index of 10,000 notes of 4 KiB beside a test run on 2 cores,
# 8 runs each: 0.5 s, writes over MCP p50 25-27 ms p99 1.4-1.75 s, the index 22.6 s
# (mean; 13.7 s of CPU); 0.25 s, p99 0.6-0.85 s, the index 23.7 s (+5%, CPU +4% median))
FRESH_BATCH_SECONDS = 0.25
# Files walked or read between two looks at ``stop``: a stop waited for the walk of every
# vault (0.1-0.4 s at 10,000 notes beside a test run) and for a fresh batch's reads.
STOP_EVERY = 100


def reconcile_all(
    writer: Callable[[], AbstractContextManager[sqlite3.Connection]],
    workspace: Workspace,
    *,
    stop: Callable[[], bool],
    progress: Progress | None = None,
    befores: Befores | None = None,
) -> ReconcileStats:
    """Bring every row in line with disk. ``writer()`` is a context manager giving the
    writer connection with the lock held and a transaction open (one per batch)."""
    started = time.monotonic()
    stats = ReconcileStats(befores=befores)
    with writer() as conn:  # the covering index notes_stat answers this
        known: dict[tuple[str, str], Signature] = {
            (lang, path): (size, mtime, ctime)
            for lang, path, size, mtime, ctime in conn.execute(
                "SELECT lang, path, size, mtime_ns, ctime_ns FROM notes INDEXED BY notes_stat"
            )
        }
    todo: list[VaultFile] = []  # files whose row says otherwise
    arrived: list[VaultFile] = []  # files at a path with no row
    langs = vault_langs(workspace)  # and the langs known (a languages folder not listed)
    for lang in [*langs, *sorted({lang for lang, _ in known} - set(langs))]:
        kept_out: set[str] = set()
        for f in walk_notes(workspace, lang, kept_out=kept_out):
            stats.scanned += 1
            if stats.scanned % STOP_EVERY == 0 and stop():
                raise Stopped
            if f.linked:  # the others are not kept: the whole set is replaced after
                stats.linked[(f.lang, f.rel)] = True
            old = known.pop((f.lang, f.rel), None)
            if old == f.signature:
                stats.unchanged += 1
            else:
                (todo if old is not None else arrived).append(f)
        keep_below(known, lang, kept_out)
    total = stats.scanned
    done = stats.unchanged
    if progress:
        progress(done, total)
    gone = GoneRows(workspace, seen_now=False)
    # Files at paths with no row while no row is gone (none can be a moved one: a first
    # index, or the rest of one a stop cut short) take the long batches; the others are
    # synced (a copy of the workspace, whose files all have new ctimes, was taken for a
    # fresh index: every note parsed, then read again for its row).
    if known and arrived:  # (a move: rows gone, files come; a file may take a gone row)
        with writer() as conn:
            gone.add_rows(conn, known)
        todo += arrived
        arrived = []
    while todo or arrived:
        if stop():
            raise Stopped
        batch_end = time.monotonic() + BATCH_SECONDS
        with writer() as conn, listings_kept(), held(conn) as fts:
            if not todo:
                done += _insert_batch(conn, fts, workspace, arrived, stats, stop)
            else:
                count = 0
                while todo and count < BATCH_FILES and time.monotonic() < batch_end:
                    f = todo.pop()
                    sync_path(conn, fts, workspace, f.lang, f.rel, gone, stats)
                    count += 1
                done += count
        if progress:
            progress(done, total)
    vanished = [key for key in known if key not in gone.taken]
    while vanished:
        if stop():
            raise Stopped
        with writer() as conn, listings_kept(), held(conn) as fts:
            for lang, rel in vanished[-BATCH_FILES:]:
                sync_file(conn, fts, workspace, lang, rel, stats)
            del vanished[-BATCH_FILES:]
    stats.seconds = time.monotonic() - started
    return stats


def _insert_batch(
    conn: sqlite3.Connection,
    fts: FtsWrites,
    workspace: Workspace,
    todo: list[VaultFile],
    stats: ReconcileStats,
    stop: Callable[[], bool],
) -> int:
    """Fast path of a fresh index: read, parse and insert up to BATCH_FILES new notes. A
    stop while it reads raises ``Stopped`` (its transaction rolled back, nothing in it
    written yet: the files read stay unindexed, for the next start), not after its
    0.5 s of reading."""
    items: list[tuple[VaultFile, NoteRow]] = []
    deadline = time.monotonic() + FRESH_BATCH_SECONDS
    count = 0
    while todo and count < FRESH_BATCH_FILES and time.monotonic() < deadline:
        if count and count % STOP_EVERY == 0 and stop():
            raise Stopped
        f = todo.pop()
        count += 1
        got = read_note(workspace, f.lang, f.rel)
        if got is None:
            continue
        data, info = got
        stats.linked[(f.lang, f.rel)] = info.st_nlink > 1
        row = parse_note(data, f.rel)
        if row.problem:
            stats.invalid.append((f.lang, f.rel, row.problem))
        items.append((VaultFile.of(f.lang, f.rel, info), row))
    if items:
        # A note written through MCP meanwhile may already have a row: sync those.
        new: list[tuple[VaultFile, NoteRow]] = []
        existing: list[tuple[VaultFile, NoteRow]] = []
        for f, row in items:
            found = conn.execute(
                "SELECT 1 FROM notes WHERE lang = ? AND path = ?", (f.lang, f.rel)
            ).fetchone()
            (existing if found else new).append((f, row))
        insert_rows(conn, fts, new)
        stats.added += len(new)
        stats.changed.extend((f.lang, f.rel) for f, _ in new)
        for f, _ in existing:
            sync_file(conn, fts, workspace, f.lang, f.rel, stats)
    return count
