"""The index's notes by file name, for the page's links (``[[Note]]`` names a note
anywhere in its vault): file name key -> paths, per lang, kept until the index changes.

SQLite has no file-name function, and an expression for one cost 130 ms a query over
100,000 notes; reading the paths (one pass over the ``(lang, path)`` index) and keeping
them by name until the next commit makes a render's lookup a few dict reads (0.3 ms
for 2,000 names). The first render after a commit reads them again: 200 ms for
100,000 notes, 2 ms for 1,000. A read-only index (another process writes it) is read
again at each lookup.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection
from contextlib import AbstractContextManager

from indexer.sqlite_lib import sqlite3
from indexer.vault.file_names import name_key

Reader = Callable[[], AbstractContextManager[sqlite3.Connection]]


class IndexedNames:
    """Per lang: (the index generation it was read at, name key -> paths)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cached: dict[str, tuple[int, dict[str, list[str]]]] = {}

    def find(
        self, read: Reader, lang: str, keys: Collection[str], generation: int | None
    ) -> dict[str, list[str]]:
        """The indexed paths of ``lang`` for each of ``keys`` it has; ``generation``:
        the index's, taken before the read (None: read again whatever it is)."""
        with self._lock:
            cached = self._cached.get(lang)
            if cached is None or generation is None or cached[0] != generation:
                with read() as conn:
                    names = _names(conn, lang)
                if generation is not None:
                    self._cached[lang] = (generation, names)
            else:
                names = cached[1]
        return {key: names[key] for key in keys if key in names}


def _names(conn: sqlite3.Connection, lang: str) -> dict[str, list[str]]:
    names: dict[str, list[str]] = {}
    for (path,) in conn.execute("SELECT path FROM notes WHERE lang = ?", (lang,)):
        names.setdefault(name_key(path[path.rfind("/") + 1 :]), []).append(path)
    return names
