"""``HistoryStore``: the versions of every vault file, in ``W/.indexer/history/``.

What a version is: a recorded state of one file (``lang``, ``path``), numbered 1, 2,
3... per path, so ``diff``/``restore``/``read(version=)`` name versions with small
integers; a version with no content (``etag`` None) says the file did not exist after
that change (deleted, moved away). Numbers are never reused: pruning removes old rows
and the next version is still the highest + 1.

Recording is two-phase, so that kill -9 at any moment leaves history and files
consistent. Under the vault's lock of the file, ``begin`` commits the new rows marked
``pending`` (blob and row in one transaction: no row ever points at a missing blob);
the file is then changed; ``commit`` clears the mark before the caller is answered
(concurrent changes share that transaction); ``abort``
deletes the rows of a change that failed. At start-up ``recover`` settles what a crash
left pending, against the files: a row is dropped only when the file still holds the
bytes from before the change (it never happened), else kept with its actor and reason
(it happened, even if the caller got no answer, and even if the file was edited again
while the indexer was down). So every acknowledged write has its version.

"The text before when not yet recorded": when the bytes a change replaces are not the
latest version (history never saw the file, or it was edited outside the tools and the
watcher has not told us yet), ``begin`` first records them as a version of their own
(actor ``external``; op ``baseline`` for a first sight, else ``edit``/``create``/
``delete``), so nothing a tool overwrites is ever lost.

Durability: WAL with ``synchronous=NORMAL``. A commit is in the WAL before the file
changes, and the WAL survives a crash of the process. A power loss may lose the last
commits since the WAL was last synced (never half of one); the vault files themselves
are fsync'd and stay the truth, and a file whose latest state history lost is recorded
again (as ``external``) at its next change or sighting. ``synchronous=FULL`` would cost
an fsync per commit (0.6 ms measured here, more than an append's own fsync).

Concurrency: one writer connection behind a lock held only for the inserts (reading
the latest version, hashing and compressing happen before, on reader connections);
changes to one path are already serialized by the vault's lock of that file.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from indexer.sqlite_lib import sqlite3
from indexer.vault.history import recovery, retention, schema, writes
from indexer.vault.history.pairing import OutsideRenames, Unpaired
from indexer.vault.history.reads import HistoryReads
from indexer.vault.history.reserve import Reserve
from indexer.vault.history.rows import (
    VERSION_COLUMNS,
    VERSIONS_FROM,
    Change,
    Pending,
    PruneStats,
    Seen,
    Version,
    millis,
    version_of,
)
from shared.errors import HistoryStoreError, StorageError

log = logging.getLogger("indexer.history")
EtagOf = Callable[[bytes], str]
Held = Callable[[str, str], bytes | None]  # a file's text as the index holds it


class HistoryStore(HistoryReads):
    """The history database of one workspace (thread-safe): records, and answers
    (``HistoryReads``)."""

    def __init__(self, folder: Path, etag_of: EtagOf, *, readonly: bool = False) -> None:
        super().__init__(folder, readonly=readonly)
        self._etag_of = etag_of
        self._reserve = Reserve(folder)  # (room for deletes on a full disk)
        self._writer: sqlite3.Connection | None = None
        self._settled: list[int] = []  # rows whose change is done; cleared in the next write
        self._renames = OutsideRenames(etag_of(b""))

    # -- life cycle ----------------------------------------------------------------------

    def open(self, *, check: bool = False) -> None:
        """Open (or create) the file; ``HistoryStoreError`` when it cannot be used.
        ``check`` also runs ``PRAGMA quick_check``, which reads the whole file."""
        conn = schema.open_history(self.folder, readonly=self._readonly)
        if check:
            try:
                schema.quick_check(conn, self.path)
            except BaseException:
                conn.close()
                raise
        self._connections.append(conn)
        if self._readonly:
            self._readers.put(conn)
        else:
            self._writer = conn
            self._reserve.keep()

    def close(self) -> None:
        if self._writer is not None and self._settled:
            try:
                with self._write():
                    pass  # clears the settled rows' marks
            except (StorageError, HistoryStoreError) as err:  # (a full disk: the stop goes on)
                why = err.message.removesuffix("; nothing was changed")  # (the files were)
                log.warning(
                    "history: the last versions stay marked pending (%s); the next start"
                    " settles them against the files",
                    why,
                )
        with self._lock:
            self._closed = True
            for conn in self._connections:
                conn.close()
            self._connections.clear()
            self._writer = None
        while not self._readers.empty():
            self._readers.get_nowait()

    # -- recording -----------------------------------------------------------------------

    def begin(
        self,
        changes: list[Change],
        *,
        actor: str,
        reason: str | None,
        at: datetime,
        held: Held | None = None,
    ) -> Pending:
        """Record ``changes`` (one operation) as pending rows, after catch-up rows for
        any ``before`` that is not the latest version. ``held``: the text the index holds
        of a file history never saw, recorded first when another program changed it since
        (the catch-up then records that program's change: the index's text was lost).
        Call with each file's lock held. Deletes only (they free space) refused for a
        full disk are tried once more after the reserve is given up (``reserve``)."""
        try:
            return self._begin(changes, actor=actor, reason=reason, at=at, held=held)
        except StorageError as err:
            frees = all(change.after is None for change in changes)
            if not (frees and err.http_status == 507 and self._reserve.give_up()):
                raise
        return self._begin(changes, actor=actor, reason=reason, at=at, held=held)

    def _begin(
        self,
        changes: list[Change],
        *,
        actor: str,
        reason: str | None,
        at: datetime,
        held: Held | None,
    ) -> Pending:
        at_ms = millis(at)
        plans = [self._plan(change, actor, reason, held, at) for change in changes]
        pending = Pending()
        with self._write() as conn:
            for plan in plans:
                catch_up, blob = plan.catch_up, plan.row.blob
                if catch_up is not None:
                    writes.insert_row(conn, catch_up, at_ms)
                    if blob is not None and blob.base == writes.UNKNOWN_ID:
                        depth = catch_up.depth + 1
                        plan.row.blob = replace(blob, base=catch_up.blob_id, depth=depth)
            batch = None
            for plan in plans:
                row_id = writes.insert_row(conn, plan.row, at_ms, pending=True, batch=batch)
                if batch is None and len(plans) > 1:
                    batch = row_id
                    conn.execute("UPDATE versions SET batch = ? WHERE id = ?", (batch, row_id))
                pending.ids.append(row_id)
                pending.versions[(plan.row.lang, plan.row.path)] = plan.row.version
        return pending

    def commit(self, pending: Pending) -> None:
        """The file changes are done: their rows are final, marked so by ``settle`` (or
        the next write transaction) before the caller is answered, or by ``recover``
        after a crash, which keeps them."""
        with self._lock:
            self._settled.extend(pending.ids)

    def settle(self) -> None:
        """Mark the changes done so far as final, unless a transaction since did: called
        once the files' locks are let go, before the changes are answered. (Left pending,
        a row was settled by ``recover`` against the file: a note made by a tool, then
        deleted or moved away while no indexer ran, looked like a write that never
        happened, and its version was dropped.) Changes queued on one file's lock find
        theirs marked by the next one's ``begin``; a mark the disk refuses (full) is
        made by the next transaction, or by ``recover``."""
        try:
            with self._lock:  # (held from the look to the mark: no empty transaction)
                if not self._settled:
                    return  # (another transaction cleared them)
                self._mark_settled()
        except (StorageError, HistoryStoreError) as err:  # (closed: the server stops)
            log.warning("history: %s (marked done later)", err)
        else:
            self._reserve.keep()  # (once given up: made again when there is room)

    def _mark_settled(self) -> None:
        """Clear the marks of the changes done (call with ``_lock`` held) in one statement,
        a transaction of its own: ``_write``'s BEGIN IMMEDIATE and COMMIT around it were
        two more calls into SQLite for nothing (most writes with 8 clients at once ended
        with such a transaction: 0.76 a write)."""
        conn, settled = self._writer, self._settled
        if conn is None:
            raise HistoryStoreError("the history is not open for writing")
        marks = ",".join("?" * len(settled))
        try:
            conn.execute(f"UPDATE versions SET pending = 0 WHERE id IN ({marks})", settled)
        except sqlite3.Error as err:
            raise writes.unwritable(err) from None
        self._settled = []

    def abort(self, pending: Pending) -> None:
        """The file changes failed: forget their rows (catch-up rows stay: they are true)."""
        with self._write() as conn:
            conn.executemany("DELETE FROM versions WHERE id = ?", [(i,) for i in pending.ids])

    def observe(
        self,
        lang: str,
        path: str,
        data: bytes | None,
        at: datetime,
        *,
        unknown: bool,
        kept: bool = False,
        moved_from: str | None = None,
        moved_to: str | None = None,
    ) -> Version | None:
        """Record a change seen outside the tools (actor ``external``), if ``data`` (None:
        the file is absent) is not the latest version. A file history never saw is
        recorded only when ``unknown`` is set. A deletion and a new file of the same
        bytes name each other (``pairing``: a rename); ``moved_from``: the path a pass
        found this new file renamed from (``pairing.match``), paired whenever its
        deletion was recorded; ``moved_to``: the new path of a deletion a pass paired,
        named at once (a kill before the new file's row leaves the pair to finish:
        ``recheck``). ``kept``: ``data`` is the text an outside change replaced, kept
        by the index (no new file). Call with the file's lock held."""
        seen = Seen(lang, path, data, unknown, kept, moved_from, moved_to)
        return self.latest(lang, path) if self.observe_many([seen], at) else None

    def observe_many(self, seen: list[Seen], at: datetime) -> int:
        """``observe`` of many files (each once) in one transaction, in order (a deletion
        and a new file of its bytes among them pair as they would one by one): a checkout
        or a copy of thousands of notes was a transaction each, half the watcher's time.
        How many rows were recorded; none when it raises. Call with the files' locks held."""
        rows = [(one, row) for one in seen if (row := self._seen_row(one)) is not None]
        if not rows:
            return 0
        at_ms = millis(at)
        remembered: list[writes.Row] = []
        taken: list[tuple[writes.Row, list[Unpaired]]] = []
        try:
            with self._write() as conn:
                for one, row in rows:
                    self._insert_seen(conn, one, row, at_ms, remembered, taken)
        except BaseException:
            for row, partners in taken:  # (these did not pair: kept for a later one)
                self._renames.give_back(row, partners)
            for row in remembered:  # (rolled back: no partner for a later file; after
                self._renames.drop(row)  # the above, which may give back one of them)
            raise
        return len(rows)

    def _seen_row(self, seen: Seen) -> writes.Row | None:
        """The row recording ``seen``; None when history holds it already (or has no
        version of a file ``seen`` does not make known)."""
        latest = self.latest(seen.lang, seen.path)
        if latest is None and not seen.unknown:
            return None
        data = seen.data
        etag = None if data is None else self._etag_of(data)
        row = writes.catch_up(latest, Change(seen.lang, seen.path, "", data, data), etag)
        if row is None or row.etag is not None or row.op != "delete":
            return row
        if seen.moved_to is not None:
            row.other_path = seen.moved_to  # (its new file pairs by this name, not by time)
        if seen.mode_of in (None, row.prev_etag):
            row.mode = seen.mode  # (the file as it went: a restore makes it so again)
        return row

    def _insert_seen(
        self,
        conn: sqlite3.Connection,
        seen: Seen,
        row: writes.Row,
        at_ms: int,
        remembered: list[writes.Row],
        taken: list[tuple[writes.Row, list[Unpaired]]],
    ) -> None:
        """Insert ``row`` (in ``observe_many``'s transaction), naming its partner and
        named by it when it is the other half of a rename; ``remembered``, ``taken``:
        what it left with, and took from, the renames kept (undone on a rollback)."""
        partner = None
        lone = not seen.kept and row.other_path is None  # (left to pair by time: the watcher's)
        if seen.moved_from is not None:
            partner = self._gone_before(row, seen.moved_from, at_ms, taken)
        if partner is None and lone:
            partner = self._renames.partner(row, at_ms)  # (a rename)
            if partner is not None:
                taken.append((row, [partner]))
        if partner is not None:
            row.other_path = partner.path
        row_id = writes.insert_row(conn, row, at_ms)
        if partner is not None:
            conn.execute(
                "UPDATE versions SET other_path = ? WHERE id = ? AND other_path IS NULL",
                (seen.path, partner.row_id),
            )
        elif lone:
            self._renames.remember(row, row_id, at_ms)
            remembered.append(row)

    def _gone_before(
        self,
        row: writes.Row,
        path: str,
        at_ms: int,
        taken: list[tuple[writes.Row, list[Unpaired]]],
    ) -> Unpaired | None:
        """The deletion of ``path`` a new file (``row``) of its bytes was renamed from,
        when that is the latest version of ``path`` and names no other file yet (or
        names this one: a pass paired them, ``moved_to``)."""
        gone = self.latest(row.lang, path)
        if row.etag is None or row.prev_etag is not None or gone is None:
            return None
        if gone.op != "delete" or gone.prev_etag != row.etag:
            return None
        if gone.other_path not in (None, row.path):
            return None
        taken.append((row, self._renames.forget(row.lang, row.etag, path)))
        return Unpaired(path, gone.id, at_ms)

    def recover(
        self,
        current_etag: recovery.CurrentEtag,
        finish_move: recovery.FinishMove | None = None,
    ) -> tuple[int, int]:
        """Settle the rows a crash left pending against the files (``recovery.settle``);
        (kept, dropped). ``current_etag`` answers False when a file cannot be looked at
        (its vault is missing): its row is kept."""
        with self._read() as conn:
            rows = [
                version_of(r)
                for r in conn.execute(
                    f"SELECT {VERSION_COLUMNS} {VERSIONS_FROM} WHERE v.pending = 1"
                )
            ]
        keep, drop = recovery.settle(rows, current_etag, finish_move)
        with self._write() as conn:
            conn.executemany("UPDATE versions SET pending = 0 WHERE id = ?", keep)
            conn.executemany("DELETE FROM versions WHERE id = ?", drop)
        return len(keep), len(drop)

    # -- retention -----------------------------------------------------------------------

    def prune(
        self,
        now: datetime,
        *,
        days: int,
        keep: int,
        step: int = 86_400_000,
        stop: Callable[[], bool] = lambda: False,
    ) -> PruneStats:
        """Remove what retention lets go (see ``retention``), in short transactions; the
        cut-off moves at most ``step`` ms past the last pass's (``retention.next_cutoff``)."""
        wanted = millis(now) - days * 86_400_000
        with self._write() as conn:
            cutoff = retention.next_cutoff(conn, wanted, days * 86_400_000, step)
        stats = PruneStats(cutoff_ms=cutoff, held_ms=wanted - cutoff)
        with self._read() as conn:
            crowded = retention.crowded_paths(conn, keep)
        for start in range(0, len(crowded), 100):
            if stop():
                return stats
            with self._write() as conn:
                doomed: list[int] = []
                for path_id in crowded[start : start + 100]:
                    ids, lost = retention.doomed(conn, path_id, cutoff, keep)
                    retention.remember_lost(conn, path_id, lost)
                    doomed += ids
                conn.executemany("DELETE FROM versions WHERE id = ?", [(i,) for i in doomed])
                stats.versions += len(doomed)
        for _ in range(8):  # each round frees what the one before left without a user
            with self._read() as conn:
                unused, newest = retention.unused_blobs(conn)
            if not unused:
                break
            for start in range(0, len(unused), 500):
                if stop():
                    return stats
                with self._write() as conn:
                    stats.blobs += retention.drop_blobs(conn, unused[start : start + 500], newest)
        return stats

    # -- internals -----------------------------------------------------------------------

    def _plan(
        self, change: Change, actor: str, reason: str | None, held: Held | None, at: datetime
    ) -> writes.Plan:
        """The rows and blobs of one change, computed before taking the write lock: one
        read of the latest version, then hashing and compressing."""
        before, after = change.before, change.after
        before_etag = None if before is None else change.before_etag or self._etag_of(before)
        after_etag = None if after is None else change.after_etag or self._etag_of(after)
        lang, path = change.lang, change.path
        latest, latest_depth = self._latest_with_depth(lang, path)
        text = held(lang, path) if latest is None and held is not None else None
        kept = text not in (None, before)  # (``begin``'s ``held``)
        if kept and self.observe(lang, path, text, at, unknown=True, kept=True):
            latest, latest_depth = self._latest_with_depth(lang, path)
        catch_up = writes.catch_up(latest, change, before_etag)
        number = (latest.version if latest is not None else 0) + 1
        base_id: int | None = None
        base_depth = 0
        if catch_up is not None:
            number += 1
            if catch_up.blob is not None:  # its id is known once it is inserted
                base_id, base_depth = writes.UNKNOWN_ID, catch_up.blob.depth
        elif latest is not None and latest.blob is not None:
            base_id, base_depth = latest.blob, latest_depth
        row = writes.Row(
            change.lang,
            change.path,
            change.op,
            actor,
            reason,
            etag=after_etag,
            prev_etag=before_etag,
            size=None if after is None else len(after),
            blob=None
            if after is None
            else writes.encode(after, before, base_id, base_depth, change.after_sha),
            data=after,
            other_path=change.other_path,
            version=number,
            path_id=None if latest is None else latest.path_id,
            mode=change.mode if after is None else None,
        )
        return writes.Plan(catch_up, row)

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """The writer connection, with the lock held and a transaction open (which also
        clears the pending marks of changes done since the last one). A failure of SQLite
        itself (a full disk, an I/O error) rolls back and becomes ``StorageError``: the
        change it was recording is not made."""
        with self._lock:
            conn = self._writer
            if conn is None:
                raise HistoryStoreError("the history is not open for writing")
            settled = self._settled
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    if settled:
                        marks = ",".join("?" * len(settled))
                        conn.execute(
                            f"UPDATE versions SET pending = 0 WHERE id IN ({marks})", settled
                        )
                    yield conn
                    conn.execute("COMMIT")
                except BaseException:
                    with suppress(sqlite3.Error):
                        conn.execute("ROLLBACK")
                    raise
            except sqlite3.Error as err:
                raise writes.unwritable(err) from None
            if settled:
                self._settled = []
