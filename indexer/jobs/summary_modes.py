"""The mode of a folder summary: no more open to other users than what it quotes.

A ``.overview.md`` quotes the notes of its folder (the fallback their first words, a
model their gist) and its sub-folders' abstracts. Made 0644 (less the umask) as any new
file, the summary of a folder of 0600 notes told every local user what they said. A
file of another group than the summary's counts by its bits for others (``group_bits``).
"""

from __future__ import annotations

import os
import stat

from indexer.jobs.group_bits import seen_by, written_group
from indexer.vault.history.rows import permissions
from shared.workspace import OVERVIEW_FILE

OPEN = 0o644  # a new file's mode (less the umask) when nothing it quotes is narrower


def summary_mode(dir_fd: int) -> int | None:
    """The mode for the folder's summary: ``OPEN`` narrowed by each file's and sub-folder's
    permissions (a sub-folder's summary's too) and by the summary already there; None
    where nothing narrows it (or the summary there is read-only, which the write
    refuses as a person's), so that a new file's umask still applies."""
    group = written_group(dir_fd, OVERVIEW_FILE)
    allowed = OPEN
    with os.scandir(dir_fd) as entries:
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue  # (gone meanwhile)
            if entry.name == OVERVIEW_FILE:
                if stat.S_ISREG(info.st_mode) and not info.st_mode & stat.S_IWUSR:
                    return None
                allowed &= seen_by(info, group) if stat.S_ISREG(info.st_mode) else OPEN
            elif stat.S_ISREG(info.st_mode):
                allowed &= seen_by(info, group)
            elif stat.S_ISDIR(info.st_mode):
                allowed &= seen_by(info, group) & _summary_bits(dir_fd, entry.name, group)
    return None if allowed == OPEN else allowed | stat.S_IRUSR | stat.S_IWUSR


def _summary_bits(dir_fd: int, folder: str, group: int) -> int:
    """The permission bits of a sub-folder's own summary as ``group`` sees them (``OPEN``
    where it has none)."""
    try:
        info = os.stat(f"{folder}/{OVERVIEW_FILE}", dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return OPEN
    return seen_by(info, group) if stat.S_ISREG(info.st_mode) else OPEN


def removed_mode(found: os.stat_result | None, dir_fd: int) -> int | None:
    """The permissions history keeps for a summary the job removes (``found``: its
    lstat, in ``dir_fd``), which a restore of it makes it with again; None: unknown."""
    return None if found is None else permissions(found, dir_fd)
