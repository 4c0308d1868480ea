"""How many text files lie below each subfolder of a folder, from the index: one grouped
count by the path's next segment. The page's folder listing walked the whole subtree on
every request to count them (the root of a 100,000-note vault: every file, on each
page of it).

The index's word is taken only while it can vouch for the files
(``NoteIndex.changed_since_indexed``); the files it cannot vouch for are left out of the
counts and handed back, for the caller to look at on disk.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable

from indexer.index.connections import Connections
from indexer.index.reconcile import is_note_path
from indexer.vault.folder_listing import IndexedCounts

MAX_CHANGED = 256  # files below the folder the index cannot vouch for: past it, a walk

# Rows below the folder (its ``rest``, from character ``?``) in a subfolder, but a dot-file
# (a folder's ``.overview.md``: the walk lists no dot-name) and a note in a ``*.assets/``
# folder (the walk does not go in: the page lists no such folder), by the subfolder's name.
_COUNTS = (
    "SELECT substr(rest, 1, instr(rest, '/') - 1) AS top, count(*) FROM"
    " (SELECT substr(path, ?) AS rest FROM notes WHERE lang = ?{range})"
    " WHERE instr(rest, '/') > 0 AND instr(rest, '/.') = 0 AND instr(rest, '.assets/') = 0"
    " GROUP BY top"
)
_RANGE = " AND path > ? AND path < ?"


def counted(rest: str) -> bool:
    """Whether a file at ``rest`` below a folder counts for one of its subfolders: what
    the listing's walk counts (a text file, no dot-name, no ``*.assets/`` on the way)."""
    folders, _, name = rest.rpartition("/")
    return (
        bool(folders)
        and is_note_path(rest)
        and not name.startswith(".")
        and not any(p.endswith(".assets") for p in folders.split("/"))
    )


class FolderCounts:
    """The counts of a ``NoteIndex`` (its connections, flush and vouching)."""

    def __init__(
        self,
        db: Connections,
        flush: Callable[[], None],
        changed: Callable[[str], frozenset[str] | None],
    ) -> None:
        self._db = db
        self._flush = flush
        self._changed = changed

    def below(self, lang: str, folder: str) -> IndexedCounts | None:
        """The text files below each subfolder of ``folder`` (by its vault path) that the
        index vouches for, and the paths below them it cannot (``changed``, NFC, sorted);
        None when it cannot vouch for the rest, or too many are in doubt. What may have
        changed is asked before the index is read (see ``vouching.changed_since``)."""
        changed = self._changed(lang)
        if changed is None:
            return None
        prefix = folder + "/" if folder else ""
        doubt = sorted(p for p in changed if p.startswith(prefix) and counted(p[len(prefix) :]))
        if len(doubt) > MAX_CHANGED or not all(unicodedata.is_normalized("NFC", p) for p in doubt):
            return None
        params: list[object] = [len(prefix) + 1, lang]
        if prefix:
            params += [prefix, folder + "0"]  # ("0" follows "/")
        self._flush()  # (read-your-writes, as every query)
        with self._db.read() as conn:
            rows = conn.execute(_COUNTS.format(range=_RANGE if prefix else ""), params)
            counts = {prefix + top: n for top, n in rows}
            held: list[str] = []
            if doubt:
                marks = ",".join("?" * len(doubt))
                sql = f"SELECT path FROM notes WHERE lang = ? AND path IN ({marks})"
                held = [path for (path,) in conn.execute(sql, [lang, *doubt])]
        for path in held:  # (its row is counted above: the caller looks at the file)
            top = prefix + path[len(prefix) :].partition("/")[0]
            counts[top] -= 1
        return IndexedCounts(counts, tuple(doubt))
