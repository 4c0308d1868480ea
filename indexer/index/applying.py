"""``ChangeSync``: bringing the rows of changed files up to date with disk.

Two callers tell the index that files changed: the tools (a batch from
``tool_changes``, synced in one transaction, each change told as the tools' unless the
file no longer holds the bytes the tool left) and the watcher (files, and folders
created, moved or gone; only those whose row differs from their stat are synced).
Split from the facade (``service.NoteIndex``) so that what a change does to the rows
is read in one place; a failed write leaves the index behind (``mark_behind``) rather
than raising into a tool call or the watcher's thread.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable

from indexer.index import reconcile
from indexer.index.batch_sync import sync_files
from indexer.index.befores import Befores
from indexer.index.connections import Connections
from indexer.index.reconcile import ReconcileStats
from indexer.index.tool_changes import Key, Told, ToolChanges
from indexer.sqlite_lib import sqlite3
from indexer.vault.scan import signature
from shared.workspace import Workspace

__all__ = ["ChangeSync"]

log = logging.getLogger("indexer.index")


class ChangeSync:
    """Syncs the files the tools or the watcher report as changed."""

    def __init__(
        self,
        workspace: Workspace,
        db: Connections,
        tool: ToolChanges,
        *,
        mark_behind: Callable[[str], None],
        tell: Callable[[ReconcileStats, str], None],
        seen_links: Callable[[ReconcileStats], None] = lambda stats: None,
        befores: Callable[[], Befores | None] = lambda: None,
        stopping: Callable[[], bool] = lambda: False,
    ) -> None:
        self.workspace = workspace
        self._db = db
        self._tool = tool
        self._mark_behind = mark_behind
        self._seen_links = seen_links
        self._tell = tell
        self._befores = befores
        self._stopping = stopping

    def sync_tool_changes(self, batch: dict[Key, str | None]) -> Told:
        """Sync the files of ``batch`` in one transaction; a change whose file no longer
        holds the bytes the tool left (``etag``), or is gone, was made outside the tools
        meanwhile (history compares it with its latest version: telling a tool's own
        change so records nothing twice)."""
        stats = ReconcileStats()
        told: Told = []
        try:
            with self._db.write() as conn:
                sync_files(conn, self.workspace, batch, stats)
                changed = set(stats.changed)
                for lang, rel in [*stats.changed, *(key for key in batch if key not in changed)]:
                    etag = batch.get((lang, rel))
                    source = "tool"
                    if etag is not None:  # (gone, or other bytes: changed outside since)
                        held = stats.hashes.get((lang, rel))
                        if held is None:  # (not found on disk, or a row moved here)
                            row = conn.execute(
                                "SELECT hash FROM notes WHERE lang = ? AND path = ?", (lang, rel)
                            ).fetchone()
                            held = None if row is None else row[0]
                        source = "tool" if held == etag else "watcher"
                    if (lang, rel) in changed or source == "watcher":
                        # (a file the tool made and another program took away before it
                        # was indexed changed nothing here, but history holds it)
                        told.append((lang, rel, source))
        except (sqlite3.Error, OSError) as err:
            log.warning("could not index %d changed file(s): %s", len(batch), err)
            self._mark_behind(f"a write to the index failed ({err})")
            return []
        self._seen_links(stats)
        for lang, path, reason in stats.invalid:
            log.debug("%s/%s: %s", lang, path, reason)
        return told

    def apply_changes(self, files: set[tuple[str, str]], folders: set[tuple[str, str]]) -> None:
        """Sync what the watcher saw; a batch that fails leaves the index behind, and one
        the index's close cuts short is taken back whole (the next start's reconcile
        finds its files changed, their old rows and texts as they were)."""
        try:
            self._apply(files, folders)
        except reconcile.Stopped:
            log.info("the index closed: %d outside change(s) left for the next start", len(files))
        except Exception as err:
            log.warning("could not apply %d change(s) to the index: %s", len(files), err)
            self._mark_behind(f"a write to the index failed ({err})")

    def _apply(self, files: set[tuple[str, str]], folders: set[tuple[str, str]]) -> None:
        """Sync single files, and folders (created, moved, gone)."""
        if self._db.writer is None:
            return
        if folders:
            self._tool.flush()  # a folder's sync covers its appended notes: the tools'
        # A file with an append not indexed yet is the flush's to sync (and to tell apart
        # from an outside change by its etag).
        files = self._differing({key for key in files if not self._tool.pending(key)})
        if not files and not folders:
            return
        stats = ReconcileStats(befores=self._befores())
        with self._db.write() as conn:
            keys = sorted(files)
            for lang, folder in sorted(folders):
                self._stop_if_closing()
                keys += self._folder_keys(conn, lang, folder, stats)
            # (a folder moved: its notes' rows re-keyed, not made anew)
            sync_files(conn, self.workspace, keys, stats, self._stop_if_closing)
        self._seen_links(stats)
        for lang, path, reason in stats.invalid:
            log.warning("%s/%s: %s", lang, path, reason)
        self._tell(stats, "watcher")
        if stats.rewritten:  # (the same bytes: only a text history read in between differs)
            self._tell(ReconcileStats(changed=stats.rewritten), "rewritten")

    def _stop_if_closing(self) -> None:
        """The index is closing: the batch is rolled back (``reconcile.Stopped``)."""
        if self._stopping():
            raise reconcile.Stopped

    def _differing(self, files: set[Key]) -> set[Key]:
        """The files whose row does not match their stat signature (without the write
        lock: the watcher sees every write of the tools, already indexed by them)."""
        differing = set()
        with self._db.read() as conn:
            for lang, rel in files:
                row = conn.execute(
                    "SELECT size, mtime_ns, ctime_ns FROM notes WHERE lang = ? AND path = ?",
                    (lang, rel),
                ).fetchone()
                try:
                    info = os.lstat(self.workspace.vault_dir(lang) / rel)
                except OSError:
                    # Gone, or on disk under another spelling of its name (NFD, as a
                    # Mac writes it: ``rel`` is NFC): the sync finds out which.
                    differing.add((lang, rel))
                    continue
                if row is None or tuple(row) != signature(info):
                    differing.add((lang, rel))
        return differing

    def _folder_keys(
        self, conn: sqlite3.Connection, lang: str, folder: str, stats: ReconcileStats
    ) -> list[Key]:
        """The notes below ``folder`` (rows and files) whose stat differs from their row."""
        rows = {
            (lang, path): (size, mtime, ctime)
            for path, size, mtime, ctime in conn.execute(
                "SELECT path, size, mtime_ns, ctime_ns FROM notes WHERE lang = ?"
                " AND (? = '' OR (path > ? AND path < ?))",
                (lang, folder, folder + "/", folder + "0"),
            )
        }
        kept_out: set[str] = set()
        keys = []
        for f in reconcile.walk_notes(self.workspace, lang, folder, kept_out):
            stats.linked[(lang, f.rel)] = f.linked
            if rows.pop((lang, f.rel), None) != f.signature:
                keys.append((lang, f.rel))
        reconcile.keep_below(rows, lang, kept_out)  # (made unreadable: not gone)
        return keys + list(rows)
