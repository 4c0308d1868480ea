"""Queries for recall: the most recently changed notes, and notes matching any keyword.

Both return whole rows (path, title, type, body) so that recall can quote them without
reading files again. They run on a reader connection of ``NoteIndex`` (see its
``recent`` and ``search_any``); ``where``/``params`` are its folder filter on alias ``n``.
"""

from __future__ import annotations

from typing import Any

from indexer.index.parse import lang_token
from indexer.index.query_parse import ParsedQuery
from indexer.index.schema import BM25_WEIGHTS, OVERVIEW_ROWS
from indexer.sqlite_lib import sqlite3
from shared.errors import InvalidArgumentError
from shared.models import MAX_SEARCH_LIMIT


def recent(
    conn: sqlite3.Connection, lang: str, limit: int, where: str, params: list[Any]
) -> list[dict[str, Any]]:
    """The ``limit`` notes of ``lang`` changed last (newest first), folder summaries
    left out.

    A note's time is its mtime, or its ctime when that is earlier: a program may set any
    mtime (a bad clock, an archive tool: ext4 keeps years up to 2446), while the ctime is
    the kernel's own clock at the last change, later than the mtime for every note
    written since. Five notes dated 2446 held the layer for good, above the note written
    a second ago. The order is found on the covering index ``notes_stat`` (no bodies are
    read for it); only the chosen rows are fetched whole.
    """
    check_limit(limit)
    ids = [
        rowid
        for (rowid,) in conn.execute(
            "SELECT n.id FROM notes AS n INDEXED BY notes_stat WHERE n.lang = ?"
            f" AND NOT {OVERVIEW_ROWS}{where}"
            " ORDER BY min(n.mtime_ns, n.ctime_ns) DESC, n.path LIMIT ?",
            (lang, *params, limit),
        )
    ]
    return _rows(conn, ids)


def in_lang(conn: sqlite3.Connection, lang: str, match: str) -> tuple[str, bool]:
    """``match`` (an FTS5 query) kept to the notes of ``lang``, and to their text: not
    the lang column, whose token (``l656e`` for en) a query for it found in every note;
    and whether that took a phrase of its own (the index holds other langs).

    The lang phrase matches every note of the lang, so ranking walked all of them; its
    column weighs 0 in BM25, so it changes no score (every other phrase's IDF is over the
    whole table anyway). It is left out when the index holds no other lang (two seeks
    of the ``(lang, path)`` index). The column filter is left out when the query holds
    no digit: a lang token always does (``l`` and the hex of an ASCII tag), and reading
    each hit's columns cost a search of a common word 6% of its time."""
    if any(char.isdigit() for char in match):
        match = f"- {{lang}} : ({match})"
    others = conn.execute(
        "SELECT EXISTS (SELECT 1 FROM notes WHERE lang < ?)"
        " OR EXISTS (SELECT 1 FROM notes WHERE lang > ?)",
        (lang, lang),
    ).fetchone()[0]
    if others:
        return f'lang : "{lang_token(lang)}" AND ({match})', True
    return match, False


def search_any(
    conn: sqlite3.Connection,
    lang: str,
    parsed: ParsedQuery,
    limit: int,
    where: str,
    params: list[Any],
) -> list[dict[str, Any]]:
    """Notes of ``lang`` matching ``parsed`` (an OR of keywords), best BM25 first;
    folder summaries (ids below 0: ``reconcile.insert_rows``) left out."""
    check_limit(limit)
    weights = ", ".join(str(w) for w in BM25_WEIGHTS)
    match = in_lang(conn, lang, parsed.match)[0]
    sql = f"SELECT notes_fts.rowid, bm25(notes_fts, {weights}) AS rank FROM notes_fts"
    if where:
        sql += " CROSS JOIN notes AS n ON n.id = notes_fts.rowid"
    sql += f" WHERE notes_fts MATCH ? AND notes_fts.rowid > 0{where} ORDER BY rank LIMIT ?"
    hits = conn.execute(sql, (match, *params, limit)).fetchall()
    rows = {row["id"]: row for row in _rows(conn, [rowid for rowid, _ in hits])}
    result = []
    for rowid, rank in hits:
        row = rows[rowid]
        row["score"] = shown_score(rank)
        result.append(row)
    return result


def shown_score(rank: float) -> float:
    """A hit's BM25 ``rank`` (lower is better) as the score an answer shows (higher is
    better), to 6 significant digits. Four decimals showed 0.0 for every hit of a word
    in over half the notes: FTS5 floors such a word's IDF at 1e-6."""
    return float(f"{-rank:.6g}") + 0.0  # (+ 0.0: no -0.0)


def check_limit(limit: object) -> None:
    """``InvalidArgumentError`` unless ``limit`` is a whole number from 1 to
    ``MAX_SEARCH_LIMIT``, as ``search`` takes: one past SQLite's 64 bits raised
    ``OverflowError``, and a negative one (no limit to SQLite) read every note."""
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_SEARCH_LIMIT:
        raise InvalidArgumentError(f"limit must be an integer from 1 to {MAX_SEARCH_LIMIT}")


def _rows(conn: sqlite3.Connection, ids: list[int]) -> list[dict[str, Any]]:
    """Rows by id, in the order of ``ids``; ``changed_ns`` is the time ``recent`` orders by."""
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    found = {
        rowid: {
            "id": rowid,
            "path": path,
            "title": title,
            "type": kind,
            "body": body,
            "changed_ns": changed_ns,
        }
        for rowid, path, title, kind, body, changed_ns in conn.execute(
            "SELECT id, path, title, type, body, min(mtime_ns, ctime_ns) FROM notes"
            f" WHERE id IN ({marks})",
            ids,
        )
    }
    return [found[rowid] for rowid in ids if rowid in found]
