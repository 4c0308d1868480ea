"""Keeping index rows equal to the files on disk: walk, compare, upsert, remove.

Like watchdog's snapshot diff: the rows the index has are compared with what a walk
of the vaults finds. An unchanged file (same size, mtime and ctime) costs one ``stat``; a
changed one is read, and its content hash decides whether the row must be rebuilt.

Every function that writes takes the writer connection and must run with the index's
write lock held, inside a transaction; a file is (re-)read under that lock, so two
syncs of one path can never store an older content over a newer one. The walk of
every vault and its batches are ``whole_pass``'s.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from indexer.index import kept_texts
from indexer.index.befores import Befores
from indexer.index.fts_writes import FtsWrites
from indexer.index.parse import MAX_INDEXED_BYTES, NoteRow, lang_token, parse_note
from indexer.index.row_words import deleted, inserted
from indexer.index.text import fold_tag
from indexer.sqlite_lib import sqlite3
from indexer.vault import fsops
from indexer.vault.names import tool_path
from indexer.vault.scan import Signature, signature, walk_files
from indexer.vault.tempfiles import is_temp_name
from shared.errors import ForbiddenPathError
from shared.filetypes import is_text_name
from shared.langs import is_lang
from shared.timestamps import utc_now
from shared.workspace import OVERVIEW_FILE, Workspace

Progress = Callable[[int, int], None]
GoneMode = tuple[str, int, int]  # a removed row's (hash, mode, gid)


@dataclass
class ReconcileStats:
    """What a reconcile (or rebuild) did; ``invalid`` lists (lang, path, reason)."""

    scanned: int = 0
    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    invalid: list[tuple[str, str, str]] = field(default_factory=list)
    seconds: float = 0.0
    changed: list[tuple[str, str]] = field(default_factory=list)  # (lang, path) synced
    # (lang, path) written again with the bytes its row holds (a new stat only): history
    # may have read a text in between (git's A, B, A), so the watcher tells them too
    rewritten: list[tuple[str, str]] = field(default_factory=list)
    # (lang, path) -> whether it has other names (hard links), for each file synced (a
    # whole pass names only the linked ones: it replaces the set): edits through another
    # name make no event the watcher hears
    linked: dict[tuple[str, str], bool] = field(default_factory=dict)
    # the texts rows held before this pass replaced or removed them (for history), when
    # asked: a tool's own sync is not (history has its text)
    befores: Befores | None = None
    # (lang, path) -> the hash its row holds once synced here, for each file ``sync_read``
    # found on disk: a tool's sync compares it with the etag the tool left, with no
    # statement reading the row back
    hashes: dict[tuple[str, str], str] = field(default_factory=dict)
    # (lang, path) -> (hash, mode, gid) of each row removed (its file gone): history
    # records the deletion with that mode (``gone_modes``), the file being gone by then
    gone: dict[tuple[str, str], GoneMode] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class VaultFile:
    lang: str
    rel: str
    size: int
    mtime_ns: int
    ctime_ns: int
    linked: bool = False  # it has other names (hard links)
    mode: int | None = None  # its permission bits and group, as its row keeps them
    gid: int | None = None  # (``of``; a walk's files are compared, not stored)

    @classmethod
    def of(cls, lang: str, rel: str, info: os.stat_result) -> VaultFile:
        return cls(lang, rel, *signature(info), False, info.st_mode & 0o7777, info.st_gid)

    @property
    def signature(self) -> Signature:
        return self.size, self.mtime_ns, self.ctime_ns


def is_note_path(rel: str) -> bool:
    """A vault-relative path the index covers: a ``*.md`` note or a plain text file
    (``shared.filetypes``), no dot-names (except a folder's summary, ``.overview.md``:
    ``search(type="summary")`` finds those; none in ``*.assets/``). One inside a note's
    ``*.assets/`` folder too: find, grep and read serve it as a note (the tools make
    none there, another program may)."""
    *folders, name = rel.split("/")
    return (
        is_text_name(name)
        and all(p and not p.startswith(".") for p in folders)
        and (not name.startswith(".") or (name == OVERVIEW_FILE and not _in_assets(folders)))
    )


def _in_assets(folders: list[str]) -> bool:
    return any(p.endswith(".assets") for p in folders)


def is_indexed_folder(rel: str) -> bool:
    """A folder whose notes may be indexed (the vault root is "")."""
    return all(not p.startswith(".") for p in rel.split("/") if p)


def walk_notes(
    workspace: Workspace, lang: str, under: str = "", kept_out: set[str] | None = None
) -> Iterator[VaultFile]:
    """Note files (and folder summaries) of ``lang``'s vault below folder ``under``, by the
    vault's one walker (folders opened by descriptor, links never followed, dot-folders
    pruned). ``kept_out`` gathers the folders the system does not let the indexer read
    (``""``: the vault, or ``under``): their notes are not gone."""
    try:
        top = os.open(workspace.vault_dir(lang), os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as err:
        if kept_out is not None and isinstance(err, PermissionError):
            kept_out.add("")
        return
    try:
        for segment in [p for p in under.split("/") if p]:
            child = fsops.open_dir(segment, top)
            os.close(top)
            top = child
    except (OSError, ForbiddenPathError) as err:
        os.close(top)
        if kept_out is not None and isinstance(err, PermissionError):
            kept_out.add(under)
        return
    # (a write's temp file beside a note near the path limit is longer than it: passed
    # over below by name, never warned about)
    walk = walk_files(
        top,
        under,
        hidden_files=True,
        any_length=is_temp_name,
        refused=None if kept_out is None else kept_out.add,
    )
    with fsops.opened(top), contextlib.closing(walk) as files:
        for entry in files:
            name = entry.name
            if is_text_name(name) and (not name.startswith(".") or is_note_path(entry.rel)):
                try:
                    size, mtime_ns, ctime_ns = entry.signature()
                    linked = entry.hard_linked()
                except OSError:
                    continue
                yield VaultFile(lang, entry.rel, size, mtime_ns, ctime_ns, linked)


def keep_below(rows: dict[tuple[str, str], Signature], lang: str, folders: set[str]) -> None:
    """Leave out of ``rows`` (the notes to remove) those of ``lang`` below ``folders``:
    a folder the indexer may not read (a person's chmod) is no deletion of its notes,
    which search lost until it could be read again."""
    if not folders:
        return
    prefixes = tuple(f + "/" for f in folders if f)
    for key in [k for k in rows if k[0] == lang]:
        if "" in folders or key[1].startswith(prefixes):
            del rows[key]


def vault_langs(workspace: Workspace) -> list[str]:
    return [lang for lang in workspace.langs() if is_lang(lang)]


def read_note(workspace: Workspace, lang: str, rel: str) -> tuple[bytes, os.stat_result] | None:
    """The bytes and stat of a regular note file, or None when there is none (or a link,
    or a path no tool could use: ``names.tool_path``; a row an older index kept goes)."""
    if tool_path(rel.split("/")) != rel:
        return None
    return fsops.read_under(str(workspace.vault_dir(lang)), rel, MAX_INDEXED_BYTES)


# -- row writes (caller holds the write lock and a transaction) -----------------------

SELECT_OLD = (
    "SELECT id, lang, title, tags, body, frontmatter, head, joined, size, mtime_ns, hash,"
    " ctime_ns, mode, gid FROM notes WHERE lang = ? AND path = ?"
)
_INSERT_NOTE = (
    "INSERT INTO notes (id, lang, path, title, type, type_key, abstract, tags, tag_keys,"
    " frontmatter, body, head, joined, exact, size, mtime_ns, ctime_ns, mode, gid, hash,"
    " problem) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
)
_INSERT_WORDS = "INSERT INTO notes_fts (rowid, title, tags, body, meta, lang) VALUES (?,?,?,?,?,?)"
_INSERT_TRIGRAMS = "INSERT INTO notes_tri (rowid, text) VALUES (?,?)"


def _type_key(kind: str | None) -> str | None:
    """A note's type as the type filter compares it: as a tag (case, width, spelling)."""
    return None if kind is None else fold_tag(kind)


def is_summary(rel: str) -> bool:
    """Whether ``rel`` is a folder's summary (``.overview.md``)."""
    return rel.rpartition("/")[2] == OVERVIEW_FILE


def insert_rows(
    conn: sqlite3.Connection, fts: FtsWrites, items: list[tuple[VaultFile, NoteRow]]
) -> None:
    """Insert new rows (none exists yet for their paths; their FTS rows held in ``fts``),
    each with a new id: a note's counts up from 1, a folder summary's down from -1, so
    that ``rowid > 0`` keeps summaries out of a search as FTS5 reads it, a bound of its
    walk, not a test of every match (a ``NOT IN`` of the summaries cost a quarter of a
    common word's search at 100,000 notes)."""
    up, down = conn.execute(
        "SELECT max(coalesce(max(id), 0), 0) + 1, min(coalesce(min(id), 0), 0) - 1 FROM notes"
    ).fetchone()
    notes, words, trigrams = [], [], []
    for f, row in items:
        if is_summary(f.rel):
            rowid, down = down, down - 1
        else:
            rowid, up = up, up + 1
        note, row_words, row_trigrams = _row_values(rowid, f, row)
        notes.append(note)
        words.append(row_words)
        trigrams.append(row_trigrams)
    conn.executemany(_INSERT_NOTE, notes)
    for values in words:
        fts.add(_INSERT_WORDS, values)
    for values in trigrams:
        fts.add(_INSERT_TRIGRAMS, values)


def _row_values(rowid: int, f: VaultFile, row: NoteRow) -> tuple[tuple, tuple, tuple]:
    """The values of ``_INSERT_NOTE``, ``_INSERT_WORDS`` and ``_INSERT_TRIGRAMS`` for a row."""
    row_words, row_trigrams = inserted(row)
    return (
        (rowid, f.lang, f.rel, row.title, row.type, _type_key(row.type), row.abstract,
         row.tags, row.tag_keys, row.frontmatter, row.body, row.head, int(row.joined),
         int(row.exact), f.size, f.mtime_ns, f.ctime_ns, f.mode, f.gid, row.hash,
         row.problem),
        (rowid, *row_words, lang_token(f.lang)),
        (rowid, row_trigrams),
    )  # fmt: skip


_DELETE_WORDS = (
    "INSERT INTO notes_fts (notes_fts, rowid, title, tags, body, meta, lang)"
    " VALUES ('delete', ?, ?, ?, ?, ?, ?)"
)
_DELETE_TRIGRAMS = "INSERT INTO notes_tri (notes_tri, rowid, text) VALUES ('delete', ?, ?)"


def _delete_words(fts: FtsWrites, old: tuple) -> None:
    """Take a row's terms out of both FTS tables (contentless: given the old values)."""
    words, trigrams = deleted(old)  # (kept from its insert when the row is as inserted)
    fts.add(_DELETE_WORDS, (old[0], *words))
    fts.add(_DELETE_TRIGRAMS, (old[0], trigrams))


def delete_row(conn: sqlite3.Connection, fts: FtsWrites, old: tuple) -> None:
    """Remove a note's row (its FTS entries held in ``fts``)."""
    conn.execute("DELETE FROM notes WHERE id = ?", (old[0],))
    _delete_words(fts, old)


def replace_row(
    conn: sqlite3.Connection, fts: FtsWrites, old: tuple, f: VaultFile, row: NoteRow
) -> None:
    """Put ``row`` in the place of the row ``old``, under its id (no look for a new one);
    its FTS statements held in ``fts`` (``fts_writes``: the old terms deleted at once
    were a segment of their own at the next ``notes`` statement)."""
    rowid = old[0]
    note, words, trigrams = _row_values(rowid, f, row)
    conn.execute("DELETE FROM notes WHERE id = ?", (rowid,))
    conn.execute(_INSERT_NOTE, note)
    _delete_words(fts, old)
    fts.add(_INSERT_WORDS, words)
    fts.add(_INSERT_TRIGRAMS, trigrams)


def keep_before(conn: sqlite3.Connection, stats: ReconcileStats, rel: str, old: tuple) -> None:
    """The text of a row about to be replaced or removed, for history (``befores``),
    kept in the transaction that replaces it (``kept_texts``: it survives a kill)."""
    if stats.befores is not None:
        _, lang, _, _, body, _, head, joined, _, _, digest = old[:11]
        data = stats.befores.keep(lang, rel, head, body, bool(joined), digest)
        if data is not None:
            kept_texts.put(conn, lang, rel, data)


def sync_file(
    conn: sqlite3.Connection,
    fts: FtsWrites,
    workspace: Workspace,
    lang: str,
    rel: str,
    stats: ReconcileStats,
) -> None:
    """Make the row of ``lang``/``rel`` match the disk: upsert, touch, remove or nothing
    (its FTS statements held in ``fts``)."""
    old = conn.execute(SELECT_OLD, (lang, rel)).fetchone()
    got = read_note(workspace, lang, rel) if is_note_path(rel) else None
    sync_read(conn, fts, lang, rel, old, got, stats)


def sync_read(
    conn: sqlite3.Connection,
    fts: FtsWrites,
    lang: str,
    rel: str,
    old: tuple | None,
    got: tuple[bytes, os.stat_result] | None,
    stats: ReconcileStats,
) -> None:
    """``sync_file`` once its row (``SELECT_OLD``) and file (``read_note``) were read,
    under the write lock."""
    stats.linked[(lang, rel)] = got is not None and got[1].st_nlink > 1
    if got is None:
        if old is not None:
            keep_before(conn, stats, rel, old)
            if old[12] is not None:
                stats.gone[(lang, rel)] = (old[10], old[12], old[13])
            delete_row(conn, fts, old)
            stats.removed += 1
            stats.changed.append((lang, rel))
        return
    data, info = got
    if old is not None and (old[8], old[9], old[11]) == signature(info):
        stats.unchanged += 1
        stats.hashes[(lang, rel)] = old[10]
        return
    f = VaultFile.of(lang, rel, info)
    # The same bytes (a copy of the workspace, ``touch``, a save of the same text): no
    # parse, which was most of the cost (a ``cp -a`` of a 10,000-note workspace gives
    # every file a new ctime: its first start parsed all of them again).
    if old is not None and old[10] == fsops.etag_of(data):
        conn.execute(
            "UPDATE notes SET size = ?, mtime_ns = ?, ctime_ns = ?, mode = ?, gid = ? WHERE id = ?",
            (*f.signature, f.mode, f.gid, old[0]),
        )
        stats.unchanged += 1
        stats.rewritten.append((lang, rel))
        stats.hashes[(lang, rel)] = old[10]
        return
    row = parse_note(data, rel)
    if row.problem:
        stats.invalid.append((lang, rel, row.problem))
    if old is not None:
        keep_before(conn, stats, rel, old)
        replace_row(conn, fts, old, f, row)
        stats.updated += 1
    else:
        insert_rows(conn, fts, [(f, row)])
        stats.added += 1
    stats.changed.append((lang, rel))
    stats.hashes[(lang, rel)] = row.hash


class Stopped(Exception):
    """The index is closing: a long pass gives up between batches."""


def now_iso() -> str:
    return utc_now()
