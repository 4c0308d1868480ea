"""The texts a change from outside replaced, as the index held them, for history.

History records a note's text at its first change through a tool; a note the index met
when it was built, and that another program then edits or deletes, had no version:
its text was lost to ``restore``. The index holds that text (``head`` and ``body`` make
the file's exact text, checked against the row's hash), so a sync that replaces or
removes such a row keeps it (``kept_texts``: in the index's file, in the transaction
that changes the row), and the history listener records it before the change. Only
the notes history does not know are kept (``wanted``), within a bound of bytes per
pass: a folder of a hundred thousand notes deleted at once must not be copied whole
(past the bound they go unrecorded, as before, with one warning).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from indexer.vault.fsops import etag_of

log = logging.getLogger("indexer.index")

MAX_BEFORE_BYTES = 64 * 1024 * 1024

Wanted = Callable[[str, str], bool]


@dataclass
class Befores:
    """Which texts one sync pass kept, by (lang, path), and the room left for more."""

    wanted: Wanted
    room: int = MAX_BEFORE_BYTES
    kept: set[tuple[str, str]] = field(default_factory=set)
    full: bool = False

    def keep(
        self, lang: str, path: str, head: str, body: str, joined: bool, digest: str
    ) -> bytes | None:
        """The row's text to keep, if it is the file's exact text and history wants it."""
        if (lang, path) in self.kept or not self.wanted(lang, path):
            return None
        data = exact_text(head, body, joined, digest)
        if data is None:
            return None
        if len(data) > self.room:
            if not self.full:
                self.full = True
                log.warning(
                    "history: more than %d MiB of notes it never recorded changed at once"
                    " from outside; the texts that did not fit are not kept",
                    MAX_BEFORE_BYTES // (1024 * 1024),
                )
            return None
        self.room -= len(data)
        self.kept.add((lang, path))
        return data


def exact_text(head: str, body: str, joined: bool, digest: str) -> bytes | None:
    """The file's bytes as a row holds them (``head`` and ``body``), or None when its
    hash says they are not the file's exact text (too large to index, not UTF-8)."""
    try:
        data = (head + body if joined else head).encode("utf-8")
    except UnicodeEncodeError:  # (a lone surrogate: not a file's strict decoding)
        return None
    return data if etag_of(data) == digest else None
