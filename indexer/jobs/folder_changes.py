"""Whether a folder's entries changed between a summary pass's listing and its write.

A pass lists a folder, makes its summary (a model's answer takes seconds) and writes
``.overview.md`` into it. Written while another program emptied the folder (``rm -rf``
between its listing of the folder and its ``rmdir``), the summary made that removal
fail ("Directory not empty"); written over a folder whose notes changed meanwhile, it
was stale already. The folder's names are read again just before the write: a change
since the listing leaves the summary unwritten, for the next pass (the watcher marks a
changed note's folder; the pass's timer retries what it does not mark).

Only notes and folders are compared: what a summary is about, and what ``rm -rf`` removes
from a vault's folders. Other programs' temporary files (``sed -i``'s ``sedXXXXXX``,
vim's ``note.md~`` and ``4913``, a download's ``.part``) come and go as they save a note:
counted, they left the summary unwritten until the pass's timer came round again.
"""

from __future__ import annotations

import os

from shared.filetypes import NOTE_SUFFIX


class FolderChangedError(Exception):
    """The folder's entries changed since the pass listed it: its summary is not written."""


def entry_names(dir_fd: int) -> frozenset[str] | None:
    """The names of the notes and folders in the folder ``dir_fd`` but dot-names (the
    summary itself, editors' swap files), or None when it cannot be listed."""
    try:
        with os.scandir(dir_fd) as entries:
            return frozenset(
                entry.name
                for entry in entries
                if not entry.name.startswith(".")
                and (entry.name.endswith(NOTE_SUFFIX) or _is_folder(entry))
            )
    except OSError:
        return None


def _is_folder(entry: os.DirEntry[str]) -> bool:
    """Whether ``entry`` is a folder (not a link to one); False when it is gone already."""
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def check_unchanged(dir_fd: int, listed: frozenset[str] | None) -> None:
    """Raise ``FolderChangedError`` when the folder's names are no longer ``listed``
    (None: nothing was listed to compare with)."""
    if listed is not None and entry_names(dir_fd) != listed:
        raise FolderChangedError
