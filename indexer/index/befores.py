"""The texts a change from outside replaced, as the index held them, for history.

History records a note's text at its first change through a tool; a note the index met
when it was built, and that another program then edits or deletes, had no version:
its text was lost to ``restore``. The index holds that text (``head`` and ``body`` make
the file's exact text, checked against the row's hash), so a sync that replaces or
removes such a row keeps it here, and the history listener records it before the
change. Only the notes history does not know are kept (``wanted``), within a bound of
bytes per pass: a folder of a hundred thousand notes deleted at once must not hold them
all in memory (past the bound they go unrecorded, as before, with one warning).
"""

from __future__ import annotations

import itertools
import logging
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field

from indexer.vault.fsops import etag_of

log = logging.getLogger("indexer.index")

MAX_BEFORE_BYTES = 64 * 1024 * 1024

Wanted = Callable[[str, str], bool]

# The order texts are kept in (inside the index's write transactions, one at a time): of
# two passes holding a note's text, the first kept is the older (``first_kept``).
_KEPT = itertools.count()


@dataclass(eq=False)
class Befores:
    """The replaced texts of one sync pass, by (lang, path) (hashed as itself: a pass's
    texts are found while not recorded yet, ``NoteIndex.held_text``)."""

    wanted: Wanted
    room: int = MAX_BEFORE_BYTES
    texts: dict[tuple[str, str], bytes] = field(default_factory=dict)
    full: bool = False
    order: dict[tuple[str, str], int] = field(default_factory=dict)

    def keep(self, lang: str, path: str, head: str, body: str, joined: bool, digest: str) -> None:
        """Keep the row's text if it is the file's exact text and history wants it."""
        if (lang, path) in self.texts or not self.wanted(lang, path):
            return
        data = exact_text(head, body, joined, digest)
        if data is None:
            return
        if len(data) > self.room:
            if not self.full:
                self.full = True
                log.warning(
                    "history: more than %d MiB of notes it never recorded changed at once"
                    " from outside; the texts that did not fit are not kept",
                    MAX_BEFORE_BYTES // (1024 * 1024),
                )
            return
        self.room -= len(data)
        self.order[(lang, path)] = next(_KEPT)
        self.texts[(lang, path)] = data


class Untold:
    """The passes whose kept texts history has not recorded yet: their rows hold the new
    texts already (a start-up reconcile's batches are told at its end), so a tool's
    change, or a later pass, asks here first for the text a note had."""

    def __init__(self) -> None:
        self._passes: weakref.WeakSet[Befores] = weakref.WeakSet()
        self._lock = threading.Lock()

    def add(self, befores: Befores) -> Befores:
        with self._lock:
            self._passes.add(befores)
        return befores

    def first(self, key: tuple[str, str]) -> bytes | None:
        """The oldest text of ``key`` the passes hold (a start-up reconcile's, told at its
        end, and a watcher's pass over a later edit of the same note)."""
        with self._lock:
            passes = list(self._passes)
        found = [(b.order.get(key, -1), b.texts.get(key)) for b in passes]
        return min(((n, text) for n, text in found if text is not None), default=(0, None))[1]


def exact_text(head: str, body: str, joined: bool, digest: str) -> bytes | None:
    """The file's bytes as a row holds them (``head`` and ``body``), or None when its
    hash says they are not the file's exact text (too large to index, not UTF-8)."""
    try:
        data = (head + body if joined else head).encode("utf-8")
    except UnicodeEncodeError:  # (a lone surrogate: not a file's strict decoding)
        return None
    return data if etag_of(data) == digest else None
