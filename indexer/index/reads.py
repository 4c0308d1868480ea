"""``IndexReads``: every question the index answers.

Searches (BM25 ``search``, recall's ``recent`` and ``search_any``), the candidate
files of a grep (``grep_plan``, from the trigram table), what the folder summaries
read (``folder_notes``), and the counts and problems the CLI and health report. Each
read first indexes the appends not indexed yet (read-your-writes), except the grep
plan, which needs not. Kept apart from the facade (``service.NoteIndex``), which keeps
the index current, so that the read side is read in one place. Thread-safe.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass

from indexer.index import lookups
from indexer.index import schema as index_schema
from indexer.index.connections import Connections
from indexer.index.file_names import IndexedNames
from indexer.index.grep_plan import grep_trigram_match
from indexer.index.loop_bound import DeadlinePassed, bounded_on_loop, interrupted_past
from indexer.index.query import (
    PAGE_SNIPPETS_CPU_SECONDS,
    SNIPPET_CPU_SECONDS,
    SNIPPET_SOURCE_SQL,
    make_snippet,
    snippet_source,
)
from indexer.index.query_parse import any_keywords, parse_query
from indexer.index.schema import BM25_WEIGHTS, OVERVIEW_ROWS
from indexer.index.search_filters import search_filters
from indexer.index.text import fold
from indexer.sqlite_lib import sqlite3
from indexer.vault.no_wait import may_take_long, may_wait
from indexer.vault.scan import Signature
from shared.errors import MAX_WHOLE_NUMBER, InvalidArgumentError
from shared.filetypes import NOTE_SUFFIX
from shared.langs import check_lang, is_lang
from shared.models import MAX_SEARCH_LIMIT
from shared.workspace import OVERVIEW_FILE

__all__ = ["GrepPlan", "IndexReads", "IndexedNote"]

log = logging.getLogger("indexer.index")
_FOLDER_NOTES = (
    "SELECT path, mtime_ns, min(mtime_ns, ctime_ns), type, abstract, exact"
    " FROM notes INDEXED BY notes_stat"
    " WHERE lang = ? AND path > ? AND path < ? AND instr(substr(path, ?), '/') = 0"
)
# (GLOB on the covering (lang, path) index: as fast as counting every row; substr() = ...
# took twice as long at 100,000 rows)
_NOTE_COUNTS = (
    f"SELECT lang, count(*) FROM notes WHERE path GLOB '*{NOTE_SUFFIX}' GROUP BY lang ORDER BY lang"
)
_OVERVIEW_COUNTS = (
    f"SELECT lang, count(*) FROM notes INDEXED BY notes_overviews WHERE {OVERVIEW_ROWS}"
    " GROUP BY lang"
)
# What a grep may skip by: every exactly indexed note of a lang, or one of them.
_INDEXED_ALL = (
    "SELECT path, size, mtime_ns, ctime_ns, exact FROM notes INDEXED BY notes_stat WHERE lang = ?"
)
_INDEXED_ONE = (
    "SELECT size, mtime_ns, ctime_ns, exact FROM notes INDEXED BY notes_stat"
    " WHERE lang = ? AND path = ?"
)


@dataclass
class GrepPlan:
    """Files that may match a grep (``candidates``) and what the index saw of each
    indexed file (``indexed``: relpath -> its ``scan.signature``); files not indexed, or
    whose stat differs, must be read too. ``changed``, when known, holds every indexed
    file that may differ from its row (the watcher vouches for the others, so they need
    no stat); None: compare each file's stat."""

    candidates: set[str]
    indexed: dict[str, Signature]
    changed: frozenset[str] | None = None


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
    changed_ns: int  # when it last changed: its mtime, or its ctime when earlier


class IndexReads:
    """The read side of ``NoteIndex``: ``flush`` indexes the pending appends, and
    ``partial`` tells whether changes on disk may be missing."""

    def __init__(
        self, db: Connections, *, flush: Callable[[], None], partial: Callable[[], bool]
    ) -> None:
        self._db = db
        self._flush = flush
        self._partial = partial
        self._cache_lock = threading.Lock()
        self._indexed_cache: tuple[str, int, dict[str, Signature]] | None = None
        self._recent_cache: tuple[tuple[str, int, str, int], list[dict]] | None = None
        self._names = IndexedNames()

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """A reader connection with one snapshot, after the pending appends are indexed
        (read-your-writes)."""
        self._flush()
        with self._db.read() as conn:
            yield conn

    def _reconciling(self, conn: sqlite3.Connection) -> bool:
        """Whether a read-only index (a CLI beside no server) is being reconciled, as
        ``conn``'s snapshot says."""
        return self._db.readonly and Connections.state(conn, "reconcile_running") == "1"

    def _partial_after(self, reconciling: bool) -> bool:
        """A search's ``partial``: the index's own word, or for a read-only one whether
        it was being reconciled (``_reconciling``)."""
        return self._partial() if not self._db.readonly else reconciling

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
        match (in the same statement as the page; one more only for a page past the end)."""
        check_lang(lang)
        whole = isinstance(limit, int) and not isinstance(limit, bool)
        if not whole or not 1 <= limit <= MAX_SEARCH_LIMIT:
            raise InvalidArgumentError(f"limit must be an integer from 1 to {MAX_SEARCH_LIMIT}")
        if not isinstance(offset, int) or isinstance(offset, bool):
            raise InvalidArgumentError("offset must be a whole number ≥ 0")
        if not 0 <= offset <= MAX_WHOLE_NUMBER:
            raise InvalidArgumentError(f"offset must be from 0 to {MAX_WHOLE_NUMBER}")
        if isinstance(query, str) and not query.strip() and (type is not None or tags):
            return self._filtered(lang, limit, type, tags, path, offset)
        try:
            parsed = parse_query(query)
        except InvalidArgumentError as err:
            if (type is not None or tags) and "no searchable words" in err.message:
                raise InvalidArgumentError(
                    f"{err.message}; an empty query lists every note the filter keeps"
                ) from None
            raise
        if parsed.walks:  # a prefix (``datab*``, one CJK character)
            may_wait()  # FTS5 walks its words in one step no deadline stops (9 ms at 100k)
        where, params = search_filters(type, tags, path)
        weights = ", ".join(str(w) for w in BM25_WEIGHTS)
        source = "FROM notes_fts"
        filtered = bool(where)
        if filtered:  # CROSS JOIN keeps the FTS table as the outer loop
            source += " CROSS JOIN notes AS n ON n.id = notes_fts.rowid"
        if type is None:  # folder summaries (ids below 0) only when asked for
            where += " AND notes_fts.rowid > 0"
        with self._read() as conn, bounded_on_loop(conn):
            match, kept_to_lang = lookups.in_lang(conn, lang, parsed.match)
            # The page and its total come from one statement. A match found in one walk
            # (a word) is walked again to count it, unranked (SQLite 3.51 does so); one
            # that checks lists against each other (a phrase, two words, a lang's notes,
            # a filter's rows) is kept instead (4-character CJK: 1.25 -> 0.92 ms at 100k).
            once = parsed.one_walk and not kept_to_lang and not filtered
            kept = "" if once else " MATERIALIZED"
            sql = (
                f"WITH hits AS{kept} (SELECT notes_fts.rowid AS id,"
                f" bm25(notes_fts, {weights}) AS rank,"
                f" bm25(notes_fts, 1.0, 0.0, 0.0, 0.0, 0.0) < 0 AS in_title {source}"
                f" WHERE notes_fts MATCH ?{where})"
                " SELECT id, rank, (SELECT count(*) FROM hits) FROM hits"
                " ORDER BY in_title DESC, rank LIMIT ? OFFSET ?"
            )
            try:
                hits = conn.execute(sql, (match, *params, limit, offset)).fetchall()
                if hits:
                    total = hits[0][2]
                elif offset:  # past the end: how far it goes
                    total = conn.execute(
                        f"SELECT count(*) {source} WHERE notes_fts MATCH ?{where}",
                        (match, *params),
                    ).fetchone()[0]
                else:
                    total = 0
            except sqlite3.OperationalError as err:
                if "fts5" not in str(err):
                    raise
                raise InvalidArgumentError(f"the query cannot be searched ({err})") from None
            marks = ",".join("?" * len(hits))
            rows = {
                rowid: (p, title, *snippet_source(start))
                for rowid, p, title, start in conn.execute(
                    f"SELECT id, path, title, {SNIPPET_SOURCE_SQL} FROM notes"
                    f" WHERE id IN ({marks})",
                    [h[0] for h in hits],
                )
            }
            running = self._reconciling(conn)
        results = []
        began = time.thread_time()  # (the snippets of a page share a budget of CPU time)
        for rowid, rank, _ in hits:
            may_take_long()  # (on the loop: past its time there, the call moves to a thread)
            note_path, title, body, cut = rows[rowid]
            left = PAGE_SNIPPETS_CPU_SECONDS - (time.thread_time() - began)
            seconds = max(0.0, min(SNIPPET_CPU_SECONDS, left))
            results.append(
                {
                    "path": note_path,
                    "title": title,
                    "score": lookups.shown_score(rank),
                    "snippet": make_snippet(body, parsed.terms, seconds=seconds, cut=cut),
                }
            )
        return {"results": results, "partial": self._partial_after(running), "total": total}

    def _filtered(
        self,
        lang: str,
        limit: int,
        type_: str | None,
        tags: list[str] | None,
        path: str,
        offset: int,
    ) -> dict:
        """A search with no words but a type or tags filter: every note it keeps, the
        latest changed first, each with its abstract as the snippet (score 0: nothing
        ranks them). An agent asks for "the notes tagged x" so; it was refused."""
        where, params = search_filters(type_, tags, path)
        if type_ is None:
            where += f" AND NOT {OVERVIEW_ROWS}"
        source = f"FROM notes AS n WHERE n.lang = ?{where}"
        with self._read() as conn:
            total = conn.execute(f"SELECT count(*) {source}", (lang, *params)).fetchone()[0]
            rows = conn.execute(
                f"SELECT n.path, n.title, n.abstract {source}"
                " ORDER BY min(n.mtime_ns, n.ctime_ns) DESC, n.path LIMIT ? OFFSET ?",
                (lang, *params, limit, offset),
            ).fetchall()
            running = self._reconciling(conn)
        results = [
            {"path": p, "title": title, "score": 0.0, "snippet": abstract}
            for p, title, abstract in rows
        ]
        return {"results": results, "partial": self._partial_after(running), "total": total}

    def recent(self, lang: str, limit: int = 5, path: str = "") -> list[dict]:
        """The ``limit`` most recently changed notes of ``lang`` (below folder ``path``),
        newest first, with their bodies: {path, title, type, body}."""
        check_lang(lang)
        self._flush()
        key = (lang, limit, path, self._db.generation)  # before the snapshot, as _indexed
        cached = self._recent_cache
        if cached is not None and cached[0] == key and not self._db.readonly:
            return cached[1]  # nothing was written since (shared: callers must not change it)
        where, params = search_filters(None, None, path)
        with self._read() as conn, bounded_on_loop(conn):
            rows = lookups.recent(conn, lang, limit, where, params)
        self._recent_cache = (key, rows)
        return rows

    def search_any(self, lang: str, keywords: list[str], limit: int = 10, path: str = "") -> list:
        """Notes holding ANY of ``keywords`` (words or "phrases"), best BM25 first, with
        their bodies: {path, title, type, body, score}; [] when no keyword is searchable."""
        check_lang(lang)
        parsed = any_keywords(keywords)
        if parsed is None:
            return []
        if parsed.walks:  # (recall's word starts: as a prefix search, to a thread)
            may_wait()
        where, params = search_filters(None, None, path)
        with self._read() as conn, bounded_on_loop(conn):  # (recall runs on the loop too)
            return lookups.search_any(conn, lang, parsed, limit, where, params)

    def grep_plan(
        self,
        lang: str,
        pattern: str,
        fixed: bool,
        ignore_case: bool,
        deadline: float | None = None,
    ) -> GrepPlan | None:
        """Candidate files for a grep, or None when no literal of 3+ chars is provably
        required (then every file must be read). Case does not matter: the trigram
        table holds case-folded text, so ``ignore_case`` needs nothing special. The
        candidates are narrowed to the notes holding the literal until ``deadline``
        (``time.monotonic``): folding every candidate's text takes a second per 30 MB,
        and grep's budget must hold; past it, the trigram hits are the candidates."""
        if not isinstance(pattern, str) or not is_lang(lang):
            return None
        query = grep_trigram_match(pattern, fixed)
        if query is None:
            return None
        # ``+lang``: the trigram hits drive the query (by rowid), not every note of the lang.
        sql = (
            "SELECT path FROM notes WHERE +lang = ? AND id IN"
            " (SELECT rowid FROM notes_tri WHERE notes_tri MATCH ?)"
        )
        params: list[object] = [lang, query.match]
        unnarrowed = (sql, list(params))
        if query.literal is not None:
            # Exact text of the file; folded (composed) unless case surely matters and the
            # literal is ASCII (a note saved decomposed holds a composed literal folded).
            text = "CASE joined WHEN 1 THEN head || body ELSE head END"
            if ignore_case or (not fixed and "(?" in pattern) or not query.literal.isascii():
                sql += f" AND instr(vm_fold({text}), ?) > 0"
                params.append(fold(query.literal))
            else:
                sql += f" AND instr({text}, ?) > 0"
                params.append(query.literal)
        generation = self._db.generation  # before the snapshot: a cache never claims more
        # No flush: a file with an append not indexed yet is read (its stat differs from its
        # row, and it is in ``changed``: see ``NoteIndex.changed_since_indexed``).
        with self._db.read() as conn:
            try:
                candidates = _narrowed(conn, (sql, params), unnarrowed, deadline)
            except sqlite3.OperationalError:
                log.exception("grep plan failed for %r; scanning every file", pattern)
                return None
            indexed = self._indexed(conn, lang, generation)
        return GrepPlan(candidates, indexed)

    def _indexed(
        self, conn: sqlite3.Connection, lang: str, generation: int
    ) -> dict[str, Signature]:
        """The signature of every exactly indexed note of ``lang``, cached (the same
        dict object is shared: callers must not change it, and neither does this). After
        writes, the cache is patched (``_patched``) rather than read whole again."""
        with self._cache_lock:
            cached = self._indexed_cache
        indexed = None
        if cached is not None and cached[0] == lang:
            if cached[1] == generation:
                return cached[2]
            indexed = self._patched(conn, lang, cached[1], cached[2], generation)
        if indexed is None:
            indexed = {
                p: (size, mtime, ctime)
                for p, size, mtime, ctime, exact in conn.execute(_INDEXED_ALL, (lang,))
                if exact
            }
        with self._cache_lock:
            newest = self._indexed_cache  # another grep's may be newer: keep that
            if newest is None or newest[0] != lang or newest[1] <= generation:
                self._indexed_cache = (lang, generation, indexed)
        return indexed

    def _patched(
        self,
        conn: sqlite3.Connection,
        lang: str,
        since: int,
        old: dict[str, Signature],
        generation: int,
    ) -> dict[str, Signature] | None:
        """A copy of ``old`` (the map at generation ``since``) with the rows written
        since read again from ``conn``; None when the log of commits cannot tell which,
        or when they are so many that reading every row is as quick.

        As exact as reading every row: ``generation`` was read before ``conn``'s
        snapshot, and counts a commit only once it is committed and logged, so the
        snapshot holds every commit up to it. So did the snapshot ``old`` was read from
        (up to ``since``); every row written in between is read again here, and the
        others have not changed since. Only a commit still in flight (committed, not
        yet counted) may show in some entries and not in others, as it may in a map
        cached at one generation: a grep that overlaps the write of a file sees it
        before or after that write, and a stale entry whose stat is not the file's only
        makes the grep read that file."""
        changed = self._db.changes(since, generation)
        if changed is None:
            return None
        paths = [path for lang_, path in changed if lang_ == lang]
        if len(paths) > len(old) // 2:  # one row alone costs about two of a full read
            return None
        indexed = dict(old)
        for path in paths:
            row = conn.execute(_INDEXED_ONE, (lang, path)).fetchone()
            if row is not None and row[3]:
                indexed[path] = (row[0], row[1], row[2])
            else:
                indexed.pop(path, None)
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
                path[len(prefix) :]: IndexedNote(
                    mtime_ns, kind, abstract, bool(exact), None, changed_ns
                )
                for path, mtime_ns, changed_ns, kind, abstract, exact in rows
            }
            overview = notes.get(OVERVIEW_FILE)
            if overview is not None:
                (meta,) = conn.execute(
                    "SELECT frontmatter FROM notes WHERE lang = ? AND path = ?",
                    (lang, prefix + OVERVIEW_FILE),
                ).fetchone()
                notes[OVERVIEW_FILE] = IndexedNote(
                    overview.mtime_ns,
                    overview.type,
                    overview.abstract,
                    overview.exact,
                    meta,
                    overview.changed_ns,
                )
        return notes

    def etags(self) -> list[tuple[str, str, str]]:
        """(lang, path, etag) of every indexed file (its bytes' hash, as the tools'
        etags are)."""
        with self._read() as conn:
            return conn.execute("SELECT lang, path, hash FROM notes").fetchall()

    def paths_named(self, lang: str, keys: list[str]) -> dict[str, list[str]]:
        """Indexed paths by file name key (``file_names``), for the page's links."""
        check_lang(lang)
        self._flush()  # (an append may have made a note)
        generation = None if self._db.readonly else self._db.generation
        return self._names.find(self._read, lang, keys, generation)

    def counts(self) -> dict[str, int]:
        """Notes per lang: ``.md`` files (the plain text files the index also holds are
        not notes, as ``note_counts`` has it without an index; nor are folder summaries)."""
        with self._read() as conn:
            counts = dict(conn.execute(_NOTE_COUNTS))
            for lang, overviews in conn.execute(_OVERVIEW_COUNTS):
                counts[lang] -= overviews
        return {lang: count for lang, count in counts.items() if count}

    def info(self) -> dict:
        """Size on disk, time of the last finished reconcile, notes and problem files.
        Notes as ``counts`` has them (``.md`` files, no summaries), so that the total is
        the sum of the vaults' counts shown beside it, not that plus the text files."""
        with self._read() as conn:
            notes = sum(count for _, count in conn.execute(_NOTE_COUNTS))
            notes -= sum(count for _, count in conn.execute(_OVERVIEW_COUNTS))
            problems = conn.execute(
                "SELECT count(*) FROM notes WHERE problem IS NOT NULL"
            ).fetchone()[0]
            last = Connections.state(conn, "last_reconcile")
            running = Connections.state(conn, "reconcile_running") == "1"
        return {
            "size_bytes": index_schema.index_size(self._db.path),
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


def _narrowed(
    conn: sqlite3.Connection,
    narrowing: tuple[str, list[object]],
    unnarrowed: tuple[str, list[object]],
    deadline: float | None,
) -> set[str]:
    """The paths ``narrowing`` selects, or (once ``deadline`` passed, before or while it
    ran) those of ``unnarrowed``, the superset it narrows."""
    if deadline is None:
        return {path for (path,) in conn.execute(*narrowing)}
    if time.monotonic() < deadline:
        with (
            suppress(DeadlinePassed),
            interrupted_past(conn, lambda: time.monotonic() > deadline, steps=100),
        ):
            return {path for (path,) in conn.execute(*narrowing)}
    return {path for (path,) in conn.execute(*unnarrowed)}
