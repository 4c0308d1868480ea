"""The FTS values of the rows last inserted, kept for their delete.

Why: the FTS5 tables are contentless, so a row is deleted by giving the very values it
was inserted with, and ``reconcile.delete_row`` computed them again from the stored row
(``fts_values``, ``trigram_value``) at every replace: as much CPU as the insert's own
(a write of a 3.6 KB note in several scripts: about 0.4 ms of its 3.5, the same note
replaced at its next write). An inserted row's values are kept here under its hash, with
the stored columns they derive from; a delete whose stored columns are equal to those
takes the kept values (the same pure function of equal texts: the same values), any
other computes them as before. Only small rows are kept, and few (the last ones).
"""

from __future__ import annotations

import threading

from indexer.index.parse import NoteRow, fts_values, lang_token, trigram_value

MAX_KEPT_ROWS = 32
MAX_KEPT_CHARS = 32_768  # a row's head and body together (the kept copies stay small)

Columns = tuple[str, str, str, str, str, bool]  # title, tags, body, frontmatter, head, joined
Words = tuple[str, str, str, str]  # title, tags, body, meta (the lang token is added)

_kept: dict[str, tuple[Columns, Words, str]] = {}
_lock = threading.Lock()


def inserted(row: NoteRow) -> tuple[Words, str]:
    """The word and trigram values of ``row`` (computed at its parse and here), kept
    for its delete."""
    trigrams = trigram_value(row.head, row.body, row.joined)
    if len(row.head) + len(row.body) <= MAX_KEPT_CHARS:
        columns = (row.title, row.tags, row.body, row.frontmatter, row.head, row.joined)
        with _lock:
            _kept.pop(row.hash, None)  # (the newest last: the first is the oldest)
            if len(_kept) >= MAX_KEPT_ROWS:
                del _kept[next(iter(_kept))]
            _kept[row.hash] = (columns, row.words, trigrams)
    return row.words, trigrams


def deleted(old: tuple) -> tuple[tuple[str, str, str, str, str], str]:
    """The FTS values (words with the lang token, trigrams) of a stored row ``old``
    (``reconcile.SELECT_OLD``'s columns) as ``fts_values`` and ``trigram_value`` give
    them: the kept ones when its columns are those they were computed from."""
    _, lang, title, tags, body, frontmatter, head, joined, _, _, digest = old[:11]
    columns = (title, tags, body, frontmatter, head, bool(joined))
    with _lock:
        found = _kept.get(digest)
    if found is not None and found[0] == columns:
        return (*found[1], lang_token(lang)), found[2]
    words = fts_values(lang, title, tags, body, frontmatter)
    return words, trigram_value(head, body, bool(joined))
