"""Whether a folder's entries changed between a summary pass's listing and its write.

A pass lists a folder, makes its summary (a model's answer takes seconds) and writes
``.overview.md`` into it. Written while another program emptied the folder (``rm -rf``
between its listing of the folder and its ``rmdir``), the summary made that removal
fail ("Directory not empty"); written over a folder whose notes changed meanwhile, it
was stale already. The folder's names are read again just before the write: a change
since the listing leaves the summary unwritten, for the next pass (the watcher marks a
changed note's folder; the pass's timer retries what it does not mark).
"""

from __future__ import annotations

import os


class FolderChangedError(Exception):
    """The folder's entries changed since the pass listed it: its summary is not written."""


def entry_names(dir_fd: int) -> frozenset[str] | None:
    """The names in the folder ``dir_fd`` but dot-names (the summary itself, editors'
    swap files, our own and others' temporary files), or None when it cannot be listed."""
    try:
        return frozenset(name for name in os.listdir(dir_fd) if not name.startswith("."))
    except OSError:
        return None


def check_unchanged(dir_fd: int, listed: frozenset[str] | None) -> None:
    """Raise ``FolderChangedError`` when the folder's names are no longer ``listed``
    (None: nothing was listed to compare with)."""
    if listed is not None and entry_names(dir_fd) != listed:
        raise FolderChangedError
