"""``NoteIndex``: the full-text index of a workspace's vaults, kept current.

The facade every other layer calls. It owns the life cycle (open, the background
thread that reconciles with disk at start-up while a watchdog observer feeds it
external edits, close), the change listeners, and composes the parts: the
connections (``connections``: one writer behind a lock, so every write reads the disk
under that lock and the newest content always wins; a pool of readers), the syncing
of changed files (``applying``), the tools' changes (``tool_changes``: writes by group
commit, appends deferred until the next read of the index) and the reads
(``reads``: search, recent, grep plans, folder notes, counts). Thread-safe.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from indexer.index import gone_modes, kept_texts, reconcile, upgrade, vouching, whole_pass
from indexer.index import schema as index_schema
from indexer.index.applying import ChangeSync
from indexer.index.befores import Befores, Wanted
from indexer.index.connections import Connections
from indexer.index.folder_counts import FolderCounts
from indexer.index.keeper import Keeper
from indexer.index.local_fs import LocalFolders
from indexer.index.reads import GrepPlan, IndexedNote, IndexReads
from indexer.index.reconcile import Progress, ReconcileStats
from indexer.index.schema import LISTENERS_BEHIND, WHOLE_SINCE
from indexer.index.tidy import Tidier
from indexer.index.told import BatchListener, ChangeListener, RenamesTold, renames_first, tell_all
from indexer.index.tool_changes import MIN_DELAY, Key, Told, ToolChanges
from indexer.index.vault_access import VaultAccess
from indexer.sqlite_errors import disk_trouble, not_allowed, unwritable_index
from indexer.sqlite_lib import sqlite3
from shared.errors import IndexSchemaError
from shared.workspace import Workspace

if TYPE_CHECKING:
    from indexer.index.watcher import VaultWatcher

__all__ = ["ChangeListener", "GrepPlan", "IndexedNote", "NoteIndex", "ReconcileStats"]


log = logging.getLogger("indexer.index")


class NoteIndex:
    """The SQLite index at ``workspace.index_path``."""

    def __init__(
        self, workspace: Workspace, *, debounce: float = 0.05, flush_delay: float = MIN_DELAY
    ) -> None:
        self.workspace = workspace
        self.path = workspace.index_path
        self._debounce = debounce
        self._db = Connections(self.path)
        self._ready = threading.Event()
        self._stopping = threading.Event()
        self.closed_whole = True  # False: the watcher's batch went on past ``close``
        self._behind_at_open = False  # the start's mark a full disk refused (``open``)
        self.checking = threading.Event()  # set while a server checks the file (``late_check``)
        self.on_failure: Callable[[Exception], None] | None = None  # (a catch-up's, as ``Keeper``)
        self._keeper: Keeper | None = None
        self._watcher: VaultWatcher | None = None
        # Told (lang, path, source) after a note's row changed: source is "tool" (a tool
        # call's note_changed), "watcher", "catch_up" (a reconcile while serving: lost
        # events, polling), "offline" (at start-up, of an index that was whole before: made
        # while no indexer ran) or "reconcile" (building the index): outside changes;
        # "rewritten": the watcher saw the bytes the row held written again (its stat).
        self.change_listeners: list[ChangeListener] = []
        self.batch_listeners: list[BatchListener] = []  # told the same, a batch at once
        # Called (with a "stop now?" check) when changes may have been indexed without
        # being told (a crash, a reconcile stopped part way, ``indexer reindex``): each
        # compares every file it knows with disk; False when it stopped before the end.
        self.recheck_listeners: list[Callable[[Callable[[], bool]], bool]] = []
        # When the change history outside the index last recorded one (epoch ns; None:
        # never): an index built anew beside it tells what changed since as "offline".
        self.history_since: Callable[[], int | None] | None = None
        # History's side of an outside change: ``history_lacks(lang, path)`` says it has
        # no version of the note, and ``keep_befores([(lang, path, text)])`` records the texts
        # the index held before the change (``befores``), told before the change itself.
        self.history_lacks: Wanted | None = None
        self.keep_befores: kept_texts.KeepBefores | None = None
        self.history_durable: Callable[[], None] = lambda: None  # (its commits: fsync'd)
        self.renames_told: RenamesTold | None = None  # (history pairs a pass's renames first)
        # ``flush_delay``: the least time an append waits for the background flush.
        self._tool = ToolChanges(self._sync_tool_changes, self._tell_all, min_delay=flush_delay)
        self._sync = ChangeSync(
            workspace,
            self._db,
            self._tool,
            mark_behind=self.mark_behind,
            tell=self._tell,
            seen_links=self._seen_links,
            befores=self._befores,
            stopping=self._stopping.is_set,
        )
        # Files with other names (hard links): edits through those make no event here,
        # so grep never takes the watcher's word for them (``changed_since_indexed``).
        self._linked: set[Key] = set()
        self._linked_lock = threading.Lock()
        self._local = LocalFolders()
        self._reads = IndexReads(self._db, flush=self._tool.flush, partial=lambda: self.partial)
        self._access = VaultAccess(workspace, self._indexed_langs)
        self.folders = FolderCounts(self._db, self._tool.flush, self.changed_since_indexed)

    @property
    def _generation(self) -> int:
        """How many writes were committed (the read caches' clock)."""
        return self._db.generation

    # -- life cycle ----------------------------------------------------------------------

    def open(self, *, readonly: bool = False, check: bool = True, full: bool | None = None) -> None:
        """Create or migrate the file (``index_schema.open_index``; ``check``: the last
        process stopped uncleanly: the file is read whole, unless ``full`` says).
        ``readonly``: an existing index, for searching only (the CLI while a server owns
        the workspace; raises if unusable). One this user may not write: IndexSchemaError."""
        if readonly:
            self._db.open_readonly()
        else:
            self._db.open_writer(check=check if full is None else full, carry=self._carried)
            try:
                if check:  # the last process did not stop cleanly: what it indexed may
                    self._db.set_state(LISTENERS_BEHIND, "1")  # never have been told
                self._db.set_state("reconcile_running", "1")
            except sqlite3.OperationalError as err:
                if not_allowed(err):
                    self._db.close()
                    raise IndexSchemaError(unwritable_index(self.path, err)) from None
                trouble = disk_trouble(self.path, err)
                if trouble is None:
                    raise
                # The server still starts (reads and searches work; the catch-up says
                # partial and retries): a full disk refused the start's marks, which
                # the first reconcile writes again; the one it reads is kept here.
                log.warning("index: %s; the catch-up retries until it has room", trouble)
                self._behind_at_open = check

    def close(self) -> None:
        """Stop the watcher and background thread, then close every connection."""
        self._stopping.set()
        if self._watcher is not None:
            self.closed_whole = self._watcher.stop()
            self._watcher = None
        if self._keeper is not None:
            self._keeper.stop()
            self._keeper = None
        self._tool.stop()  # the appends not indexed yet
        self._db.close()

    def stop_background(self) -> None:
        """A stop began: the background passes end (the batch under way rolled back)."""
        self._stopping.set()

    @property
    def ready(self) -> bool:
        """True once the start-up reconcile has finished."""
        return self._ready.is_set()

    @property
    def partial(self) -> bool:
        """True while changes on disk may be missing (start-up, lost events, a failed
        write to the index) until a reconcile has caught up (``keeper.Keeper``), and
        from when the watcher hears a folder or a large batch change (not a tool's own
        writes) until it has applied them; and while the file's check runs (``checking``)."""
        keeper, watcher = self._keeper, self._watcher
        if keeper is None or self.checking.is_set():
            return not self.ready or self.checking.is_set()
        return keeper.partial or (
            watcher is not None and (watcher.catching_up() or watcher.polling())
        )

    def health(self) -> dict:
        """Whether the index is caught up and why not, and the watcher's state."""
        keeper = self._keeper
        state = keeper.state() if keeper is not None else {"partial": not self.ready}
        if not state["partial"] and self.checking.is_set():
            state = {**state, "partial": True, "reason": "checking the index file after a crash"}
        if not state["partial"] and self._watcher is not None and self._watcher.catching_up():
            state = {**state, "partial": True, "reason": "applying changes seen on disk"}
        if not state["partial"] and self._watcher is not None and self._watcher.polling():
            reason = "the file watcher misses some or all folders: changes are found by a periodic"
            state = {**state, "partial": True, "reason": f"{reason} reconcile"}
        kept_out = self._access.kept_out()
        if kept_out and not state["partial"]:
            langs = ", ".join(kept_out)
            reason = f"the vault {langs} cannot be read: its notes in search may be out of date"
            state = {**state, "partial": True, "reason": reason}
        watcher = self._watcher.state() if self._watcher is not None else {"state": "stopped"}
        return {**state, "unreadable_vaults": kept_out, "watcher": watcher}

    def unreadable_vaults(self) -> dict[str, str]:
        """The vaults this user may not read now, and why (their notes stay indexed)."""
        return self._access.kept_out()

    def mark_behind(self, reason: str) -> None:
        """The index may miss changes (``reason``): results are partial until a
        reconcile in the background has caught up."""
        if self._keeper is not None:
            self._keeper.behind(reason)

    def start_background(self) -> None:
        """Start the watcher and, in a daemon thread, the start-up reconcile (then any
        catching up that falls due). The watcher's module (watchdog) is imported here: a
        server calls this once serving, so it is no part of a start up to the URL file."""
        from indexer.index.watcher import VaultWatcher

        self._watcher = VaultWatcher(
            self.workspace, self._apply_changes, debounce=self._debounce, on_lost=self.mark_behind
        )
        tidy, failed = Tidier(self._db), self.on_failure
        self._db.on_damaged = failed  # (a read SQLite finds the file damaged in: checked)
        self._keeper = Keeper(self._catch_up, polling=self._polling, tidier=tidy, on_failure=failed)
        self._watcher.start()
        self._keeper.start()

    def _polling(self) -> bool:
        watcher = self._watcher
        return watcher is not None and watcher.state()["state"] != "running"

    def _catch_up(self) -> ReconcileStats:
        first = not self.ready
        stats = self.reconcile(source="reconcile" if first else "catch_up")
        changed = stats.added or stats.updated or stats.removed
        log.log(
            logging.INFO if first or changed else logging.DEBUG,  # polling: quiet when idle
            "index reconciled in %.1fs: %d files, %d added, %d updated, %d removed",
            stats.seconds, stats.scanned, stats.added, stats.updated, stats.removed,
        )  # fmt: skip
        for lang, path, reason in stats.invalid:
            log.warning("%s/%s: %s", lang, path, reason)
        return stats

    # -- keeping current -----------------------------------------------------------------

    def reconcile(
        self, progress: Progress | None = None, *, source: str = "reconcile"
    ) -> ReconcileStats:
        """Make the index equal to disk (blocking); marks the index ready. ``source``:
        what the listeners are told the changes came from; a start-up ``reconcile`` of an
        index that has been whole before tells ``offline`` (made while no indexer ran),
        one building the index tells ``reconcile`` (what was there before it)."""
        self._tool.flush()  # the tools' appends are told as theirs
        self._access.check()
        whole_since = self._db.get_state(WHOLE_SINCE)  # the last complete reconcile's start
        if source == "reconcile" and whole_since is not None:
            source = "offline"
        # An index built anew while history goes on (the file deleted, an upgrade's newer
        # schema): what changed since history last recorded was made while no indexer
        # ran (notes made then got no version, deleted ones stayed alive in history).
        rebuilt_since = None
        if source == "reconcile" and self.history_since is not None:
            rebuilt_since = self.history_since()
        started_ns = time.time_ns()
        self._db.set_state("reconcile_running", "1")
        # Listeners may have missed changes this file holds (``open`` after a crash, a
        # reconcile stopped part way: its batches are told at its end, or one made
        # without listeners: ``indexer reindex``): the recheck listeners look at all.
        behind = self._db.get_state(LISTENERS_BEHIND) == "1" or rebuilt_since is not None
        behind = behind or self._behind_at_open
        self._db.set_state(LISTENERS_BEHIND, "1")
        if self.keep_befores is not None:  # (texts kept by a pass killed before it told,
            # or an older index's: history meets those notes now, and the recheck looks
            # at them all, the deleted ones too)
            kept = kept_texts.record(self._db, None, self.keep_befores, self.history_durable)
            behind = behind or kept > 0
        befores = self._befores()
        try:
            stats = whole_pass.reconcile_all(
                self._db.write,
                self.workspace,
                stop=self._stopping.is_set,
                progress=progress,
                befores=befores,
            )
        except reconcile.Stopped:  # the batches committed hold the new texts: keep the old
            self._keep_befores(befores)
            raise
        with self._linked_lock:  # every file was seen: the whole set
            self._linked = {key for key, linked in stats.linked.items() if linked}
        self._db.set_state("last_reconcile", reconcile.now_iso())
        self._db.set_state(WHOLE_SINCE, str(started_ns))
        self._db.set_state("reconcile_running", "0")
        self._tell(stats, source)  # before ``ready``: a listener waiting for it
        if behind and source == "offline" and whole_since is not None:
            self._tell_changed_since(int(whole_since), set(stats.changed))
        elif rebuilt_since is not None:
            self._tell_changed_since(rebuilt_since, set())
        self._ready.set()  # has heard every change of the start-up reconcile
        if behind:  # each looks at every file it knows (history: deletions too)
            for recheck in self.recheck_listeners:
                if not recheck(self._stopping.is_set):
                    return stats  # stopped: still behind, done at the next start
        heard = bool(self.recheck_listeners) or not (behind or stats.changed)
        self._db.set_state(LISTENERS_BEHIND, "0" if heard else "1")
        return stats

    def _seen_links(self, stats: ReconcileStats) -> None:
        """Files synced one by one: what their stat said of their other names."""
        with self._linked_lock:
            for key, linked in stats.linked.items():
                if linked:
                    self._linked.add(key)
                else:
                    self._linked.discard(key)

    def _carried(self, old: sqlite3.Connection) -> list[upgrade.Text]:
        """What an index of an older schema held that history lacks, read before the file
        is recreated (``upgrade``); nothing when no history listens."""
        befores = self._befores()
        return [] if befores is None else upgrade.changed_texts(old, self.workspace, befores)

    def _befores(self) -> Befores | None:
        """A pass's keeper of replaced texts, when history wants them."""
        wanted = self.history_lacks
        if wanted is None or self.keep_befores is None:
            return None
        return Befores(wanted)

    def _tell(self, stats: ReconcileStats, source: str) -> None:
        """Tell the change listeners what changed (history first the texts the changes
        replaced: ``befores``); a listener's failure is logged, never raised."""
        self._keep_befores(stats.befores)
        renames_first(self.renames_told, self._db.read, stats.changed, source)
        with gone_modes.telling(stats.gone):  # (history records deletions with them)
            self._tell_all([(lang, path, source) for lang, path in stats.changed])

    def _keep_befores(self, befores: Befores | None) -> None:
        """Have history record the texts a pass kept, then forget them (``kept_texts``)."""
        if befores is not None and self.keep_befores is not None:
            kept_texts.record(self._db, befores.kept, self.keep_befores, self.history_durable)

    def _tell_changed_since(self, since_ns: int, told: set[tuple[str, str]]) -> None:
        """An earlier start-up reconcile, cut short (a crash, a kill), indexed changes
        made while no indexer ran and never told them: this one found those rows
        current. Every row whose file changed since the last complete reconcile began
        is told as ``offline`` (a listener drops what it knew already)."""
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT lang, path FROM notes WHERE ctime_ns >= ?", (since_ns,)
            ).fetchall()
        self._tell_all([(lang, path, "offline") for lang, path in rows if (lang, path) not in told])

    def _tell_all(self, told: Told) -> None:
        tell_all(told, self.batch_listeners, self.change_listeners)

    def rebuild(self, progress: Progress | None = None) -> ReconcileStats:
        """Drop every row and index all vaults from scratch."""
        self._ready.clear()
        with self._db.write() as conn:
            index_schema.clear(conn)
        stats = self.reconcile(progress)
        with self._db.write() as conn:
            conn.execute("INSERT INTO notes_fts(notes_fts) VALUES ('optimize')")
        self._db.checkpoint()
        return stats

    def note_changed(self, lang: str, relpath: str, etag: str | None = None) -> None:
        """A tool call wrote, appended or deleted ``lang``/``relpath`` (a write leaving
        ``etag``): sync it before returning (concurrent calls share one transaction:
        ``tool_changes``)."""
        self.notes_changed([(lang, relpath, etag)])

    def notes_changed(self, changes: list[tuple[str, str, str | None]]) -> None:
        """``note_changed`` of many files in one transaction (a folder moved, an entry
        undone: a row whose file only moved is re-keyed, ``batch_sync``)."""
        wanted = {(lang, rel): etag for lang, rel, etag in changes if reconcile.is_note_path(rel)}
        if self._db.writer is None or not wanted:
            return
        if self._watcher is not None:
            self._watcher.tools_changed_all(list(wanted))
        self._tool.changed_all(wanted)

    def note_appended(self, lang: str, relpath: str, etag: str) -> None:
        """A tool call appended to ``lang``/``relpath`` (leaving ``etag``): sync it before
        the next read of the index, or in the background soon."""
        if self._db.writer is None or not reconcile.is_note_path(relpath):
            return
        if self._watcher is not None:
            self._watcher.tools_changed(lang, relpath)
        self._tool.appended((lang, relpath), etag)

    def tools_writing(self, keys: list[Key]) -> None:
        """A tool call writes these files now and tells them later, together
        (``notes_changed``): the watcher takes their events as the tools' own meanwhile."""
        if self._watcher is not None:
            self._watcher.tools_changed_all(keys)

    def flush(self) -> None:
        """Index the appends made so far (every query does this first)."""
        self._tool.flush()

    def _sync_tool_changes(self, batch: dict[Key, str | None]) -> Told:
        """Sync a batch of the tools' changes (``applying.ChangeSync``)."""
        return self._sync.sync_tool_changes(batch)

    def _apply_changes(self, files: set[tuple[str, str]], folders: set[tuple[str, str]]) -> None:
        """Sync what the watcher saw (``applying.ChangeSync``); a vault root that changed
        (its permissions, maybe) is looked at again."""
        if any(rel == "" for _, rel in folders):
            self._access.check()
        self._sync.apply_changes(files, folders)

    def _indexed_langs(self) -> set[str]:
        with self._db.read() as conn:
            return {row[0] for row in conn.execute("SELECT DISTINCT lang FROM notes")}

    # -- queries (``reads.IndexReads``) -------------------------------------------------

    def search(
        self,
        lang: str,
        query: str,
        limit: int = 10,
        type: str | None = None,
        tags: list[str] | None = None,
        path: str = "",
        offset: int = 0,
    ) -> dict:
        """BM25-ranked notes of ``lang`` holding every word and phrase of ``query``;
        ``partial`` too while this user may not read the vault (its notes are missing)."""
        found = self._reads.search(lang, query, limit, type, tags, path, offset)
        if not found["partial"] and self._access.refused(lang) is not None:
            found["partial"] = True
        return found

    def recent(self, lang: str, limit: int = 5, path: str = "") -> list[dict]:
        """The ``limit`` most recently changed notes of ``lang``, newest first."""
        return self._reads.recent(lang, limit, path)

    def search_any(self, lang: str, keywords: list[str], limit: int = 10, path: str = "") -> list:
        """Notes holding ANY of ``keywords``, best BM25 first, with their bodies."""
        return self._reads.search_any(lang, keywords, limit, path)

    def grep_plan(
        self, lang: str, pattern: str, fixed: bool, ignore_case: bool, deadline: float | None = None
    ) -> GrepPlan | None:
        """Candidate files for a grep, or None when every file must be read. What may
        have changed is asked before the plan reads the index (see ``changed_since``)."""
        changed = self.changed_since_indexed(lang)
        plan = self._reads.grep_plan(lang, pattern, fixed, ignore_case, deadline)
        if plan is None or changed is None:
            return plan
        return dataclasses.replace(plan, changed=changed)

    def changed_since_indexed(self, lang: str) -> frozenset[str] | None:
        """The files of ``lang`` that may differ from their rows (``vouching``): those
        the watcher has not applied yet, appends not flushed, hard-linked files (edits
        through another name make no event here); None when the watcher cannot vouch."""
        if not self.ready:
            return None
        vault = self.workspace.vault_dir(lang)

        def others() -> set[str]:
            with self._linked_lock:
                linked = {rel for key_lang, rel in self._linked if key_lang == lang}
            return linked | self._tool.unflushed(lang)

        return vouching.changed_since(self._watcher, self._keeper, self._local, vault, lang, others)

    def folder_notes(self, lang: str, folder: str) -> dict[str, IndexedNote]:
        """The indexed notes directly inside ``folder`` (its summary included)."""
        return self._reads.folder_notes(lang, folder)

    def paths_named(self, lang: str, keys: list[str]) -> dict[str, list[str]]:
        """Indexed note paths whose file name (ASCII lower case) is one of ``keys``."""
        return self._reads.paths_named(lang, keys)

    def etags(self) -> list[tuple[str, str, str]]:
        """(lang, path, etag) of every indexed file."""
        return self._reads.etags()

    def held_text(self, lang: str, path: str, limit: int) -> bytes | None:
        """What a change not synced yet replaced (at most ``limit`` bytes): a pass's text
        not recorded yet, else the row's exact text (``kept_texts.held``)."""
        data = kept_texts.held(self._db, lang, path)
        return data if data is not None and len(data) <= limit else None

    def counts(self) -> dict[str, int]:
        """Notes per lang (folder summaries are not notes)."""
        return self._reads.counts()

    def info(self) -> dict:
        """Size on disk, time of the last finished reconcile, notes and problem files."""
        return self._reads.info()

    def problems(self, lang: str | None = None) -> list[tuple[str, str, str]]:
        """(lang, path, reason) of every note whose text could not be fully understood."""
        return self._reads.problems(lang)
