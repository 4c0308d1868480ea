"""The index file: create, check, version (``PRAGMA user_version``) and recreate.

The index is derived data: an older schema or a damaged file is simply deleted and
recreated empty (a reconcile refills it from the vaults). Only a *newer* schema is
refused, since a newer indexer that shares the workspace would otherwise lose it.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from pathlib import Path

from indexer.index import carried_file
from indexer.index.text import TOKEN_CHARS
from indexer.sqlite_errors import disk_trouble
from indexer.sqlite_lib import sqlite3
from shared.errors import IndexSchemaError

log = logging.getLogger("indexer.index")

# Bump on any change of the tables below or of note_parse.fts_values/trigram_value.
# 2: Thai, Lao, Khmer and Myanmar runs cut into bigrams, their marks kept as token chars.
# 3: folder summaries (``.overview.md``) are indexed, with a partial index of their rows;
#    each note's abstract is stored (for the summaries).
# 4: combining marks are token characters (``categories``); words are indexed NFC and
#    without Arabic/Hebrew vowel points (``text.searchable``).
# 5: rows keep the file's ctime.
# 6: ``text.searchable`` drops format characters, breaks words at symbols newer than
#    Unicode 6.1 (emoji) and folds ß ı İ đ ł ø ħ.
# 7: ``text.searchable`` folds the case unicode61 does not know (Unicode after 6.1:
#    Georgian Mtavruli, Cherokee's small letters, Adlam, Osage, ...), and the alef's
#    hamza forms, teh marbuta, alef maksura, and Persian keheh and yeh.
# 8: frontmatter scalars are typed as YAML 1.2 reads them (``shared.frontmatter``): tags
#    ``[no, on]`` are the words, not booleans; rows keep their tags folded (``tag_keys``)
#    for the tags filter, which folded every matching note's tags at each search.
# 9: ``tag_keys`` (an index stamped 8 before it had the column is rebuilt); a tag's
#    full-width ``＃`` is dropped as ``#`` is; frontmatter `=`, `<<` and dates as titles.
# 10: frontmatter read as it is since 9 changed without a bump (U+0085/U+2028/U+2029 kept,
#    typed ids as their text, a date no calendar has as its text: a block that held one
#    was body text, its title, tags and type lost): an older index's rows are rebuilt.
# 11: a note's abstract is its first paragraph of prose (not code, a table or a comment),
#    and never a frontmatter block that cannot be read (nor is its title).
# 12: a title from the body is its first ``# `` heading outside fenced code (a shell
#    block's ``# install`` was one); a day file's preamble is no abstract; tags
#    ``"#a #b, c"`` are three.
# 13: compatibility letters past U+F000-U+FFFF are their plain letters too (``ĳ``, the
#    Armenian ``և``, enclosed and mathematical letters); Russian ``ё`` is ``е``; rows keep
#    their type folded (``type_key``), as their tags, and their tags without a closing
#    ``/``; a Khmer or Myanmar stacked consonant is one unit of its run's bigrams.
# 14: rows' ``tag_keys`` hold a note's inline ``#tags`` too (``inline_tags``), as
#    Obsidian's tag search finds them.
# 15: a note's abstract from its first paragraph is its text as a reader sees it: links
#    and wikilinks as their text, embeds and images left out, no quote or callout marks.
# 16: a tag's (and a type's) key leaves out invisible characters and Arabic and Hebrew
#    vowel points (``reader_folds.tag_key``): ``a\u200b`` is ``a``, ``שָׁלוֹם`` is
#    ``שלום``, a tag of a zero-width space alone is none.
# 17: a title from the body may be a first-level heading underlined with ``=`` (setext),
#    and an underlined heading (``=`` or ``-``) is no abstract (``Title ====`` was one).
# 18: what shows nothing though it is a mark (the grapheme joiner U+034F, Mongolian's free
#    variation selectors) is left out of words as format characters are, and the
#    modifier letter apostrophe (``мʼясо``) is the apostrophe.
# 19: Thai, Lao, Khmer and Myanmar runs are cut into bigrams of characters as seen (a
#    letter with its marks), not of code points.
# 20: a folder summary's row has an id below 0 (a note's above): ``rowid > 0`` leaves
#    summaries out of a search.
# 21: a note's abstract leaves out the bullet its first paragraph starts with (``- ``,
#    ``* ``, ``+ ``, a task's ``[ ]``): not an FTS input, but a row of a note unchanged
#    since is never parsed again, and kept ``- a preference`` as its abstract.
# 22: a note's abstract is its first paragraph of prose past a math block (``$$``), a
#    paragraph of links or images alone, a table with no leading ``|``, and stops at a
#    fence or a rule under it; a note of no prose shows its first block's text (a
#    fence's code, a table's cells), not its markup (``\`\`\` print(1) \`\`\``).
# 23: Yiddish's ligatures (``װ``, ``ױ``, ``ײ``) are their two letters (``וואסער`` finds
#    ``װאַסער``); every script's decimal digits are the ASCII ones (``٢٠٢٤`` is ``2024``).
# 24: a tag's (and a type's) key folds the letters one to their readers
#    (``reader_folds.tag_key``: ``كتاب`` is ``کتاب``, ``ёлка`` is ``елка``), and a note
#    keeps one tag of those spellings, its first as written: a note tagged both had two.
# 25: three changes that came after releases had written indexes of 24, so those kept
#    their rows (a release's index of 24 held any of three row states): a frontmatter
#    abstract (``summary``, ``description``) that YAML typed, a number, date or boolean
#    (``abstract: 12345``), is the abstract as written, not the first paragraph (not an
#    FTS input, but a row of a note unchanged since kept the paragraph); Bengali's khanda
#    ta is its ta and virama (``উৎসব`` is ``উত্সব``, as a chillu is): ``উত্\u200dসব``, its
#    spelling before Unicode 4.1, and ``উৎসব`` found only themselves; the trigram table
#    holds a note composed (NFC, ``text.fold``), as grep reads notes and patterns: a note
#    saved decomposed (Korean in jamo) was no grep candidate. A version's rows are pinned
#    once released (``test_scripts_search.INDEXED_BY_VERSION``): a change needs a bump.
# 26: a note's abstract keeps its no-break spaces (U+00A0, U+2007, U+202F: ``1 000 €``,
#    French ``« x »``), as a snippet does (``snippet_spaces``): a row of a note unchanged
#    since kept them as plain spaces, in filter-only searches' snippets and summaries.
# 27: rows keep the file's permission bits and group (``mode``, ``gid``), as the stat
#    that indexed it (or a chmod since: its new ctime syncs the row) said: the deletion
#    another program makes (``rm``) is recorded with them, and a restore makes the note
#    0600 again, not 0644 less the umask (``indexer.vault.outside``); and a tags or
#    aliases string in a note another program wrote is cut at any script's comma, as a
#    write cuts it (``شعر، أدب``, ``数据，索引``: ASCII's only before, one tag each).
SCHEMA_VERSION = 27
# The texts replaced rows held that history has not recorded yet (``kept_texts``):
# made on open in an index of any version, with no bump (an older indexer sharing the
# file leaves it alone, and no index is rebuilt for it); a rebuild's ``clear`` keeps it.
BEFORES_DDL = (
    "CREATE TABLE IF NOT EXISTS befores (lang TEXT NOT NULL, path TEXT NOT NULL,"
    " data BLOB NOT NULL, UNIQUE (lang, path))"
)
# The rows of folder summaries: ``INDEXED BY notes_overviews`` lists them without a scan
# (a default search leaves them out, note counts do not count them).
# State keys: "1" while the change listeners may not have heard every change indexed;
# when the last complete reconcile began (time.time_ns).
LISTENERS_BEHIND = "listeners_behind"
WHOLE_SINCE = "whole_since_ns"
OVERVIEW_ROWS = "(path = '.overview.md' OR substr(path, -13) = '/.overview.md')"
# Title far above tags, tags above body and other frontmatter values; the lang column
# (one token naming the vault, see note_parse.lang_token) only filters.
BM25_WEIGHTS = (10.0, 4.0, 1.0, 1.0, 0.0)

# Marks are token characters (a Devanagari vowel sign is part of its word), and so is
# every character of Thai, Lao, Khmer and Myanmar runs, marks and letters newer than
# unicode61's tables included: a bigram such as ``น้`` stays one token (see text.py).
_WORDS_DDL = (
    "CREATE VIRTUAL TABLE notes_fts USING fts5(title, tags, body, meta, lang, content='',"
    " tokenize='unicode61 remove_diacritics 2 categories ''L* N* Co M*''"
    f" tokenchars ''{TOKEN_CHARS}''')"
)
_TRIGRAMS_DDL = (
    "CREATE VIRTUAL TABLE notes_tri USING fts5("
    "text, content='', detail=none, tokenize='trigram case_sensitive 1')"
)


def connect(path: Path, *, readonly: bool = False) -> sqlite3.Connection:
    """A connection with our pragmas; autocommit (transactions are explicit)."""
    if readonly:
        conn = sqlite3.connect(
            f"file:{path}?mode=ro", uri=True, isolation_level=None, check_same_thread=False
        )
    else:
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA busy_timeout = 10000")
    if not readonly:
        conn.execute("PRAGMA page_size = 8192")  # new files only: rows of ~2 KB pack better
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA cache_size = -16000")
    return conn


# What of an older index is kept in the new one: ``upgrade.changed_texts``, given the
# old file; they go in the new file's ``befores`` (lang, path, data).
Carry = Callable[[sqlite3.Connection], list[carried_file.Text]]


def open_index(path: Path, *, check: bool = True, carry: Carry | None = None) -> sqlite3.Connection:
    """Open (creating or recreating as needed) the index at ``path`` for writing.

    Raises ``IndexSchemaError`` for a newer schema; recreates an older or corrupt file
    (``check`` runs ``PRAGMA quick_check``, which reads the whole file), an older one
    after ``carry`` read from it the texts history may need (kept in the new file).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        reason = _problem(path, check)
        if reason is not None:
            carried = _carried(path, carry) if carry is not None else []
            if carried:  # (on disk before the old file goes: ``carried_file``)
                carried_file.save(path, carried)
            log.warning("index %s %s: recreating it from the vaults", path, reason)
            delete_index_files(path)
        conn = connect(path)
        if conn.execute("PRAGMA user_version").fetchone()[0] == 0:
            create_schema(conn)
        conn.execute(BEFORES_DDL)
        carried_file.keep(conn, path)
    except (sqlite3.Error, OSError) as err:
        trouble = disk_trouble(path, err)
        if trouble is None:
            raise
        raise IndexSchemaError(
            f"the index {path} cannot be opened ({err}): {trouble}; free some space or fix"
            " the disk, then start again"
        ) from None
    return conn


def _carried(path: Path, carry: Carry) -> list[carried_file.Text]:
    """What ``carry`` reads from the file at ``path`` if it is an index of an older
    schema (a damaged one is not read); nothing when it cannot be read."""
    try:
        old = connect(path, readonly=True)
    except sqlite3.Error:
        return []
    try:
        version = old.execute("PRAGMA user_version").fetchone()[0]
        return carry(old) if 0 < version < SCHEMA_VERSION else []
    except (sqlite3.Error, OSError, ValueError) as err:
        log.warning("index: the older index's texts could not be read (%s)", err)
        return []
    finally:
        old.close()


def _problem(path: Path, check: bool) -> str | None:
    """Why the file at ``path`` cannot be used as is (None: usable or absent)."""
    if not path.exists():
        return None
    try:
        conn = connect(path)
    except sqlite3.DatabaseError as err:
        if disk_trouble(path, err) is not None:
            raise  # the file is whole: a full or failing disk is no reason to delete it
        return f"cannot be opened ({err})"
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise IndexSchemaError(
                f"the index {path} has schema version {version}, newer than this indexer's "
                f"{SCHEMA_VERSION}: upgrade the indexer, or delete the file to rebuild it"
            )
        if version == 0:
            tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
            return "has unknown tables and no schema version" if tables else None
        if version < SCHEMA_VERSION:
            return f"has the older schema version {version} (this indexer: {SCHEMA_VERSION})"
        if check:
            result = conn.execute("PRAGMA quick_check").fetchall()
            if result != [("ok",)]:
                return f"failed its integrity check ({result[0][0]})"
        conn.execute("SELECT count(*) FROM notes").fetchone()
        return None
    except sqlite3.DatabaseError as err:
        if disk_trouble(path, err) is not None:
            raise
        return f"is damaged ({err})"
    finally:
        conn.close()


# The notes table as sqlite-utils wrote it (its quoting and layout: ``sqlite_master``
# reads the same in a file either made), so that a new index, what every empty start
# makes, imports no sqlite-utils (20-30 ms of the start before the URL file).
_NOTES_COLUMNS = (
    ("id", "INTEGER PRIMARY KEY"),
    ("lang", "TEXT NOT NULL"),
    ("path", "TEXT NOT NULL"),
    ("title", "TEXT NOT NULL"),
    ("type", "TEXT"),
    ("type_key", "TEXT"),  # the type as the filter compares it (``text.fold_tag``)
    ("abstract", "TEXT NOT NULL"),  # before the body: read without loading the body's pages
    ("tags", "TEXT NOT NULL"),
    ("tag_keys", "TEXT NOT NULL"),  # the tags as the filter compares them (``text.fold_tag``)
    ("frontmatter", "TEXT NOT NULL"),
    ("body", "TEXT NOT NULL"),
    ("head", "TEXT NOT NULL"),
    ("joined", "INTEGER"),
    ("exact", "INTEGER"),
    ("size", "INTEGER"),
    ("mtime_ns", "INTEGER"),
    ("ctime_ns", "INTEGER"),  # with size and mtime: a write that kept both is seen
    ("mode", "INTEGER"),  # st_mode & 0o7777: the mode history keeps of a file gone
    ("gid", "INTEGER"),  # its group: a file made again there may get another one
    ("hash", "TEXT NOT NULL"),
    ("problem", "TEXT"),
)
_TABLES_DDL = (
    'CREATE TABLE "notes" (\n'
    + ",\n".join(f'   "{name}" {kind}' for name, kind in _NOTES_COLUMNS)
    + "\n)",
    'CREATE UNIQUE INDEX "idx_notes_lang_path"\n    ON "notes" ("lang", "path")',
    # Covering index: a reconcile compares every (lang, path, size, mtime, ctime), and a
    # folder summary reads its notes' types and abstracts, without reading the rows (and
    # their bodies).
    'CREATE INDEX "notes_stat"\n    ON "notes" ("lang", "path", "size", "mtime_ns",'
    ' "ctime_ns", "exact", "type", "abstract")',
    f"CREATE INDEX notes_overviews ON notes (lang) WHERE {OVERVIEW_ROWS}",
    'CREATE TABLE "state" (\n   "key" TEXT PRIMARY KEY,\n   "value" TEXT\n)',
    _WORDS_DDL,
    _TRIGRAMS_DDL,
)


def create_schema(conn: sqlite3.Connection) -> None:
    """Create every table in an empty database and stamp the schema version."""
    conn.execute("BEGIN")
    for sql in _TABLES_DDL:
        conn.execute(sql)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    conn.execute("COMMIT")


def clear(conn: sqlite3.Connection) -> None:
    """Empty every table (for a rebuild) inside the caller's transaction."""
    conn.execute("DELETE FROM notes")
    conn.execute("INSERT INTO notes_fts(notes_fts) VALUES ('delete-all')")
    conn.execute("INSERT INTO notes_tri(notes_tri) VALUES ('delete-all')")


def delete_index_files(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def index_size(path: Path) -> int:
    """Bytes on disk of the index and its WAL."""
    total = 0
    for suffix in ("", "-wal"):
        with contextlib.suppress(FileNotFoundError):
            total += Path(f"{path}{suffix}").stat().st_size
    return total
