"""``NoteIndex``: the full-text index of a workspace's vaults, kept current.

One writer connection behind a lock (every write reads the disk under that lock, so
the newest content always wins), a pool of reader connections (WAL lets them read
while a write is under way), and a background thread that reconciles with disk at
start-up while a watchdog observer feeds it external edits. The tools' changes come
through ``tool_changes`` (writes by group commit, appends deferred until the next read
of the index). Thread-safe.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from indexer.index import lookups, reconcile
from indexer.index import schema as index_schema
from indexer.index.grep_plan import grep_trigram_match
from indexer.index.keeper import Keeper
from indexer.index.parse import lang_token
from indexer.index.query import make_snippet, parse_any, parse_query
from indexer.index.reconcile import Progress, ReconcileStats
from indexer.index.schema import BM25_WEIGHTS, OVERVIEW_ROWS
from indexer.index.text import fold
from indexer.index.tool_changes import MIN_DELAY, Key, Told, ToolChanges
from indexer.index.watcher import VaultWatcher
from shared.errors import IndexSchemaError, InvalidArgumentError
from shared.langs import check_lang, is_lang
from shared.workspace import OVERVIEW_FILE, Workspace

__all__ = ["ChangeListener", "GrepPlan", "IndexedNote", "NoteIndex", "ReconcileStats"]

ChangeListener = Callable[[str, str, str], None]

log = logging.getLogger("indexer.index")
MAX_LIMIT = 100
_OVERVIEW_IDS = (
    f"SELECT id FROM notes INDEXED BY notes_overviews WHERE lang = ? AND {OVERVIEW_ROWS}"
)
_FOLDER_NOTES = (
    "SELECT path, mtime_ns, type, abstract, exact FROM notes INDEXED BY notes_stat"
    " WHERE lang = ? AND path > ? AND path < ? AND instr(substr(path, ?), '/') = 0"
)
_OVERVIEW_COUNTS = (
    f"SELECT lang, count(*) FROM notes INDEXED BY notes_overviews WHERE {OVERVIEW_ROWS}"
    " GROUP BY lang"
)
MAX_TAGS = 32


@dataclass
class GrepPlan:
    """Files that may match a grep (``candidates``) and what the index saw of each
    indexed file (``indexed``: relpath -> (size, mtime_ns)); files not indexed, or
    whose stat differs, must be read too."""

    candidates: set[str]
    indexed: dict[str, tuple[int, int]]


@dataclass(frozen=True, slots=True)
class IndexedNote:
    """What the index holds of one note file for a folder summary: its mtime when indexed,
    frontmatter type, abstract, whether its text is exact (not: not UTF-8, or too large
    to be indexed), and for a summary file (``.overview.md``) its frontmatter (JSON)."""

    mtime_ns: int
    type: str | None
    abstract: str
    exact: bool
    frontmatter: str | None


class NoteIndex:
    """The SQLite index at ``workspace.index_path``."""

    def __init__(
        self, workspace: Workspace, *, debounce: float = 0.05, flush_delay: float = MIN_DELAY
    ) -> None:
        self.workspace = workspace
        self.path = workspace.index_path
        self._debounce = debounce
        self._lock = threading.Lock()
        self._writer: sqlite3.Connection | None = None
        self._readers: queue.SimpleQueue[sqlite3.Connection] = queue.SimpleQueue()
        self._connections: list[sqlite3.Connection] = []
        self._readonly = False
        self._ready = threading.Event()
        self._stopping = threading.Event()
        self._keeper: Keeper | None = None
        self._watcher: VaultWatcher | None = None
        self._generation = 0  # bumped by every committed write
        # Told (lang, path, source) after a note's row changed: source is "tool" (a tool
        # call's note_changed), "watcher" or "reconcile" (a change made outside the tools).
        self.change_listeners: list[ChangeListener] = []
        self._cache_lock = threading.Lock()
        self._indexed_cache: tuple[str, int, dict[str, tuple[int, int]]] | None = None
        self._recent_cache: tuple[tuple[str, int, str, int], list[dict]] | None = None
        # ``flush_delay``: the least time an append waits for the background flush.
        self._tool = ToolChanges(self._sync_tool_changes, self._tell_all, min_delay=flush_delay)

    # -- life cycle ----------------------------------------------------------------------

    def open(self, *, readonly: bool = False, check: bool = True) -> None:
        """Create or migrate the file (see ``index_schema.open_index``).

        ``readonly`` opens an existing index for searching only (the CLI, while a server
        owns the workspace); it recreates nothing and raises if the file is unusable.
        """
        self._readonly = readonly
        if readonly:
            if not self.path.exists():
                raise FileNotFoundError(
                    f"no index at {self.path} yet: run `indexer reindex` or start the server"
                )
            conn = index_schema.connect(self.path, readonly=True)
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            conn.close()
            if version != index_schema.SCHEMA_VERSION:
                raise IndexSchemaError(
                    f"the index {self.path} has schema version {version}, this indexer "
                    f"reads {index_schema.SCHEMA_VERSION}: run `indexer reindex`"
                )
        else:
            self._writer = index_schema.open_index(self.path, check=check)
            self._connections.append(self._writer)
            self._set_state("reconcile_running", "1")

    def close(self) -> None:
        """Stop the watcher and background thread, then close every connection."""
        self._stopping.set()
        if self._watcher is not None:
            self._watcher.stop()
            self._watcher = None
        if self._keeper is not None:
            self._keeper.stop()
            self._keeper = None
        self._tool.stop()  # the appends not indexed yet
        with self._lock:
            for conn in self._connections:
                conn.close()
            self._connections.clear()
            self._writer = None
        while not self._readers.empty():
            self._readers.get_nowait()

    @property
    def ready(self) -> bool:
        """True once the start-up reconcile has finished."""
        return self._ready.is_set()

    @property
    def partial(self) -> bool:
        """True while changes on disk may be missing (start-up, lost events, a failed
        write to the index) until a reconcile has caught up (``keeper.Keeper``)."""
        keeper = self._keeper
        return not self.ready if keeper is None else keeper.partial

    def health(self) -> dict:
        """Whether the index is caught up and why not, and the watcher's state."""
        keeper = self._keeper
        state = keeper.state() if keeper is not None else {"partial": not self.ready}
        watcher = self._watcher.state() if self._watcher is not None else {"state": "stopped"}
        return {**state, "watcher": watcher}

    def mark_behind(self, reason: str) -> None:
        """The index may miss changes (``reason``): results are partial until a
        reconcile in the background has caught up."""
        if self._keeper is not None:
            self._keeper.behind(reason)

    def start_background(self) -> None:
        """Start the watcher and, in a daemon thread, the start-up reconcile (then any
        catching up that falls due)."""
        self._watcher = VaultWatcher(
            self.workspace, self._apply_changes, debounce=self._debounce, on_lost=self.mark_behind
        )
        self._keeper = Keeper(self._catch_up, polling=self._polling)
        self._watcher.start()
        self._keeper.start()

    def _polling(self) -> bool:
        watcher = self._watcher
        return watcher is not None and watcher.state()["state"] != "running"

    def _catch_up(self) -> ReconcileStats:
        first = not self.ready
        stats = self.reconcile()
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

    def reconcile(self, progress: Progress | None = None) -> ReconcileStats:
        """Make the index equal to disk (blocking); marks the index ready."""
        self._tool.flush()  # the tools' appends are told as theirs
        self._set_state("reconcile_running", "1")
        stats = reconcile.reconcile_all(
            self._write, self.workspace, stop=self._stopping.is_set, progress=progress
        )
        self._set_state("last_reconcile", reconcile.now_iso())
        self._set_state("reconcile_running", "0")
        self._tell(stats, "reconcile")  # before ``ready``: a listener waiting for it
        self._ready.set()  # has heard every change of the start-up reconcile
        return stats

    def _tell(self, stats: ReconcileStats, source: str) -> None:
        """Tell the change listeners what changed; their failure is logged, never raised."""
        self._tell_all([(lang, path, source) for lang, path in stats.changed])

    def _tell_all(self, told: Told) -> None:
        for lang, path, source in told:
            for listener in self.change_listeners:
                try:
                    listener(lang, path, source)
                except Exception:
                    log.exception("change listener failed for %s/%s", lang, path)

    def rebuild(self, progress: Progress | None = None) -> ReconcileStats:
        """Drop every row and index all vaults from scratch."""
        self._ready.clear()
        with self._write() as conn:
            index_schema.clear(conn)
        stats = self.reconcile(progress)
        with self._write() as conn:
            conn.execute("INSERT INTO notes_fts(notes_fts) VALUES ('optimize')")
        with self._lock:
            if self._writer is not None:  # give the WAL's space back
                self._writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return stats

    def note_changed(self, lang: str, relpath: str) -> None:
        """A tool call wrote, appended or deleted ``lang``/``relpath``: sync it before
        returning (concurrent calls share one transaction: ``tool_changes``)."""
        if self._writer is None or not reconcile.is_note_path(relpath):
            return
        self._tool.changed((lang, relpath))

    def note_appended(self, lang: str, relpath: str, etag: str) -> None:
        """A tool call appended to ``lang``/``relpath`` (leaving ``etag``): sync it before
        the next read of the index, or in the background soon."""
        if self._writer is None or not reconcile.is_note_path(relpath):
            return
        self._tool.appended((lang, relpath), etag)

    def flush(self) -> None:
        """Index the appends made so far (every query does this first)."""
        self._tool.flush()

    def _sync_tool_changes(self, batch: dict[Key, str | None]) -> Told:
        """Sync the files of ``batch`` in one transaction; a change whose file no longer
        holds the bytes the tool left (``etag``) was made outside the tools meanwhile."""
        stats = ReconcileStats()
        told: Told = []
        try:
            with self._write() as conn:
                for lang, rel in batch:
                    reconcile.sync_file(conn, self.workspace, lang, rel, stats)
                for lang, rel in stats.changed:
                    etag = batch.get((lang, rel))
                    source = "tool"
                    if etag is not None:
                        row = conn.execute(
                            "SELECT hash FROM notes WHERE lang = ? AND path = ?", (lang, rel)
                        ).fetchone()
                        source = "tool" if row is None or row[0] == etag else "watcher"
                    told.append((lang, rel, source))
        except (sqlite3.Error, OSError) as err:
            log.warning("could not index %d changed file(s): %s", len(batch), err)
            self.mark_behind(f"a write to the index failed ({err})")
            return []
        for lang, path, reason in stats.invalid:
            log.debug("%s/%s: %s", lang, path, reason)
        return told

    def _apply_changes(self, files: set[tuple[str, str]], folders: set[tuple[str, str]]) -> None:
        """Sync what the watcher saw; a batch that fails leaves the index behind."""
        try:
            self._apply(files, folders)
        except Exception as err:
            log.warning("could not apply %d change(s) to the index: %s", len(files), err)
            self.mark_behind(f"a write to the index failed ({err})")

    def _apply(self, files: set[tuple[str, str]], folders: set[tuple[str, str]]) -> None:
        """Sync single files, and folders (created, moved, gone)."""
        if self._writer is None:
            return
        if folders:
            self._tool.flush()  # a folder's sync covers its appended notes: the tools'
        # A file with an append not indexed yet is the flush's to sync (and to tell apart
        # from an outside change by its etag).
        files = self._differing({key for key in files if not self._tool.pending(key)})
        if not files and not folders:
            return
        stats = ReconcileStats()
        with self._write() as conn:
            for lang, rel in sorted(files):
                reconcile.sync_file(conn, self.workspace, lang, rel, stats)
            for lang, folder in sorted(folders):
                self._sync_folder(conn, lang, folder, stats)
        for lang, path, reason in stats.invalid:
            log.warning("%s/%s: %s", lang, path, reason)
        self._tell(stats, "watcher")

    def _differing(self, files: set[Key]) -> set[Key]:
        """The files whose row does not match their size and mtime (without the write
        lock: the watcher sees every write of the tools, already indexed by them)."""
        differing = set()
        with self._read(flush=False) as conn:
            for lang, rel in files:
                row = conn.execute(
                    "SELECT size, mtime_ns FROM notes WHERE lang = ? AND path = ?", (lang, rel)
                ).fetchone()
                try:
                    info = os.lstat(self.workspace.vault_dir(lang) / rel)
                except OSError:
                    if row is not None:
                        differing.add((lang, rel))
                    continue
                if row is None or tuple(row) != (info.st_size, info.st_mtime_ns):
                    differing.add((lang, rel))
        return differing

    def _sync_folder(
        self, conn: sqlite3.Connection, lang: str, folder: str, stats: ReconcileStats
    ) -> None:
        """Every note below ``folder`` (rows and files) whose stat differs is synced."""
        rows = {
            path: (size, mtime)
            for path, size, mtime in conn.execute(
                "SELECT path, size, mtime_ns FROM notes WHERE lang = ?"
                " AND (? = '' OR (path > ? AND path < ?))",
                (lang, folder, folder + "/", folder + "0"),
            )
        }
        for f in reconcile.walk_notes(self.workspace, lang, folder):
            if rows.pop(f.rel, None) != (f.size, f.mtime_ns):
                reconcile.sync_file(conn, self.workspace, lang, f.rel, stats)
        for rel in rows:
            reconcile.sync_file(conn, self.workspace, lang, rel, stats)

    # -- queries -------------------------------------------------------------------------

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
        title matches first. Snippets mark hits with ``**``. ``total`` counts every
        match (one more query, made only when this page does not already tell)."""
        check_lang(lang)
        if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_LIMIT:
            raise InvalidArgumentError(f"limit must be an integer from 1 to {MAX_LIMIT}")
        if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
            raise InvalidArgumentError("offset must be a whole number ≥ 0")
        parsed = parse_query(query)
        where, params = _filters(type, tags, path)
        weights = ", ".join(str(w) for w in BM25_WEIGHTS)
        match = f'lang : "{lang_token(lang)}" AND ({parsed.match})'
        ranked = (
            f"SELECT notes_fts.rowid, bm25(notes_fts, {weights}) AS rank,"
            " bm25(notes_fts, 1.0, 0.0, 0.0, 0.0, 0.0) < 0 AS in_title FROM notes_fts"
        )
        if where:  # CROSS JOIN keeps the FTS table as the outer loop
            ranked += " CROSS JOIN notes AS n ON n.id = notes_fts.rowid"
        if type is None:  # folder summaries only when asked for (type="summary")
            where += f" AND notes_fts.rowid NOT IN ({_OVERVIEW_IDS})"
            params.append(lang)
        sql = (
            f"{ranked} WHERE notes_fts MATCH ?{where} ORDER BY in_title DESC, rank LIMIT ? OFFSET ?"
        )
        with self._read() as conn:
            try:
                hits = conn.execute(sql, (match, *params, limit, offset)).fetchall()
                if len(hits) < limit and (hits or not offset):
                    total = offset + len(hits)
                else:
                    counted = (
                        f"SELECT count(*) FROM notes_fts{ranked.partition('FROM notes_fts')[2]}"
                    )
                    total = conn.execute(
                        f"{counted} WHERE notes_fts MATCH ?{where}", (match, *params)
                    ).fetchone()[0]
            except sqlite3.OperationalError as err:
                if "fts5" not in str(err):
                    raise
                raise InvalidArgumentError(f"the query cannot be searched ({err})") from None
            marks = ",".join("?" * len(hits))
            rows = {
                rowid: (p, title, body)
                for rowid, p, title, body in conn.execute(
                    f"SELECT id, path, title, body FROM notes WHERE id IN ({marks})",
                    [h[0] for h in hits],
                )
            }
            running = self._state(conn, "reconcile_running") == "1"
        results = []
        for rowid, rank, _ in hits:
            note_path, title, body = rows[rowid]
            results.append(
                {
                    "path": note_path,
                    "title": title,
                    "score": round(-rank, 4),
                    "snippet": make_snippet(body, parsed.terms),
                }
            )
        partial = self.partial if not self._readonly else running
        return {"results": results, "partial": partial, "total": total}

    def recent(self, lang: str, limit: int = 5, path: str = "") -> list[dict]:
        """The ``limit`` most recently changed notes of ``lang`` (below folder ``path``),
        newest first, with their bodies: {path, title, type, body}."""
        check_lang(lang)
        self._tool.flush()
        key = (lang, limit, path, self._generation)  # before the snapshot, as _indexed
        cached = self._recent_cache
        if cached is not None and cached[0] == key and not self._readonly:
            return cached[1]  # nothing was written since (shared: callers must not change it)
        where, params = _filters(None, None, path)
        with self._read() as conn:
            rows = lookups.recent(conn, lang, limit, where, params)
        self._recent_cache = (key, rows)
        return rows

    def search_any(self, lang: str, keywords: list[str], limit: int = 10, path: str = "") -> list:
        """Notes holding ANY of ``keywords`` (words or "phrases"), best BM25 first, with
        their bodies: {path, title, type, body, score}; [] when no keyword is searchable."""
        check_lang(lang)
        try:
            parsed = parse_any(keywords)
        except InvalidArgumentError:
            return []
        where, params = _filters(None, None, path)
        with self._read() as conn:
            return lookups.search_any(conn, lang, parsed, limit, where, params)

    def grep_plan(self, lang: str, pattern: str, fixed: bool, ignore_case: bool) -> GrepPlan | None:
        """Candidate files for a grep, or None when no literal of 3+ chars is provably
        required (then every file must be read). Case does not matter: the trigram
        table holds case-folded text, so ``ignore_case`` needs nothing special."""
        if not isinstance(pattern, str) or not is_lang(lang):
            return None
        query = grep_trigram_match(pattern, fixed)
        if query is None:
            return None
        sql = (
            "SELECT path FROM notes WHERE lang = ? AND id IN"
            " (SELECT rowid FROM notes_tri WHERE notes_tri MATCH ?)"
        )
        params: list[object] = [lang, query.match]
        if query.literal is not None:
            # Exact text of the file; folded unless case surely matters.
            text = "CASE joined WHEN 1 THEN head || body ELSE head END"
            if ignore_case or (not fixed and "(?" in pattern):
                sql += f" AND instr(vm_fold({text}), ?) > 0"
                params.append(fold(query.literal))
            else:
                sql += f" AND instr({text}, ?) > 0"
                params.append(query.literal)
        generation = self._generation  # before the snapshot: a cache never claims more
        # No flush: a file with an append not indexed yet differs from its row, so it is read.
        with self._read(flush=False) as conn:
            try:
                candidates = {p for (p,) in conn.execute(sql, params)}
            except sqlite3.OperationalError:
                log.exception("grep plan failed for %r; scanning every file", pattern)
                return None
            indexed = self._indexed(conn, lang, generation)
        return GrepPlan(candidates, indexed)

    def _indexed(
        self, conn: sqlite3.Connection, lang: str, generation: int
    ) -> dict[str, tuple[int, int]]:
        """(size, mtime_ns) of every exactly indexed note of ``lang``, cached until the
        next write (the same dict object is shared: callers must not change it)."""
        with self._cache_lock:
            cached = self._indexed_cache
            if cached is not None and cached[:2] == (lang, generation):
                return cached[2]
        indexed = {
            p: (size, mtime)
            for p, size, mtime, exact in conn.execute(
                "SELECT path, size, mtime_ns, exact FROM notes INDEXED BY notes_stat"
                " WHERE lang = ?",
                (lang,),
            )
            if exact
        }
        with self._cache_lock:
            self._indexed_cache = (lang, generation, indexed)
        return indexed

    def folder_notes(self, lang: str, folder: str) -> dict[str, IndexedNote]:
        """The indexed notes directly inside ``folder`` (its summary included), by file
        name: what the directory summaries read instead of parsing every file again.
        The covering index ``notes_stat`` answers for the notes; only the summary's
        frontmatter comes from its row."""
        prefix = folder + "/" if folder else ""
        upper = folder + "0" if folder else "\U0010ffff"
        with self._read() as conn:
            rows = conn.execute(_FOLDER_NOTES, (lang, prefix, upper, len(prefix) + 1))
            notes = {
                path[len(prefix) :]: IndexedNote(mtime_ns, kind, abstract, bool(exact), None)
                for path, mtime_ns, kind, abstract, exact in rows
            }
            overview = notes.get(OVERVIEW_FILE)
            if overview is not None:
                (meta,) = conn.execute(
                    "SELECT frontmatter FROM notes WHERE lang = ? AND path = ?",
                    (lang, prefix + OVERVIEW_FILE),
                ).fetchone()
                notes[OVERVIEW_FILE] = IndexedNote(
                    overview.mtime_ns, overview.type, overview.abstract, overview.exact, meta
                )
        return notes

    def counts(self) -> dict[str, int]:
        """Notes per lang (folder summaries are not notes)."""
        with self._read() as conn:
            counts = dict(
                conn.execute("SELECT lang, count(*) FROM notes GROUP BY lang ORDER BY lang")
            )
            for lang, overviews in conn.execute(_OVERVIEW_COUNTS):
                counts[lang] -= overviews
        return {lang: count for lang, count in counts.items() if count}

    def info(self) -> dict:
        """Size on disk, time of the last finished reconcile, notes and problem files."""
        with self._read() as conn:
            notes = conn.execute("SELECT count(*) FROM notes").fetchone()[0]
            notes -= sum(count for _, count in conn.execute(_OVERVIEW_COUNTS))
            problems = conn.execute(
                "SELECT count(*) FROM notes WHERE problem IS NOT NULL"
            ).fetchone()[0]
            last = self._state(conn, "last_reconcile")
            running = self._state(conn, "reconcile_running") == "1"
        return {
            "size_bytes": index_schema.index_size(self.path),
            "last_reconcile": last,
            "notes": notes,
            "problems": problems,
            "reconciling": running,
        }

    def problems(self, lang: str | None = None) -> list[tuple[str, str, str]]:
        """(lang, path, reason) of every note whose text could not be fully understood."""
        with self._read() as conn:
            return conn.execute(
                "SELECT lang, path, problem FROM notes WHERE problem IS NOT NULL"
                " AND (? IS NULL OR lang = ?) ORDER BY lang, path",
                (lang, lang),
            ).fetchall()

    # -- connections ---------------------------------------------------------------------

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """The writer connection, with the lock held and a transaction open."""
        with self._lock:
            conn = self._writer
            if conn is None:
                raise RuntimeError("the index is not open for writing")
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                # SQLite may have rolled back already (a full disk): never leave a
                # transaction open, or every later write would fail.
                if conn.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        conn.execute("ROLLBACK")
                raise
            self._generation += 1

    @contextmanager
    def _read(self, *, flush: bool = True) -> Iterator[sqlite3.Connection]:
        """A reader connection with one snapshot, after the pending appends are indexed
        (read-your-writes)."""
        if flush:
            self._tool.flush()
        try:
            conn = self._readers.get_nowait()
        except queue.Empty:
            conn = index_schema.connect(self.path, readonly=self._readonly)
            conn.create_function("vm_fold", 1, fold, deterministic=True)
            with self._lock:
                self._connections.append(conn)
        try:
            conn.execute("BEGIN")  # one snapshot for every statement of the caller
            try:
                yield conn
            finally:
                conn.execute("COMMIT")
        finally:
            self._readers.put(conn)

    def _set_state(self, key: str, value: str) -> None:
        with self._write() as conn:
            conn.execute("INSERT OR REPLACE INTO state (key, value) VALUES (?, ?)", (key, value))

    @staticmethod
    def _state(conn: sqlite3.Connection, key: str) -> str | None:
        row = conn.execute("SELECT value FROM state WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])


def _filters(type_: str | None, tags: list[str] | None, path: str) -> tuple[str, list]:
    """SQL conditions (on alias ``n``) for the type, tags and folder filters."""
    where, params = "", []
    if type_ is not None:
        if not isinstance(type_, str):
            raise InvalidArgumentError("type must be a string")
        where += " AND n.type = ?"
        params.append(type_)
    if tags:
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            raise InvalidArgumentError("tags must be a list of strings")
        tags = list(dict.fromkeys(t.strip().lstrip("#").lower() for t in tags))
        if len(tags) > MAX_TAGS:
            raise InvalidArgumentError(f"give at most {MAX_TAGS} tags (a note must have them all)")
        for tag in tags:
            where += " AND EXISTS (SELECT 1 FROM json_each(n.tags) WHERE lower(value) = lower(?))"
            params.append(tag.strip().lstrip("#"))
    if path:
        if not isinstance(path, str):
            raise InvalidArgumentError("path must be a string")
        folder = path.strip().strip("/")
        if folder.startswith("./"):
            folder = folder[2:]
        if folder:
            where += " AND (n.path = ? OR (n.path > ? AND n.path < ?))"
            params += [folder, folder + "/", folder + "0"]
    return where, params
