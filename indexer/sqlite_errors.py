"""What an SQLite error on opening a file says about it: damaged, or the disk beside it.

A damaged index is rebuilt from the vaults, and a damaged history is refused with the
advice to move it aside; neither must follow from a full or failing disk, which leaves
the file whole (a full disk made the server call an intact history damaged, and
``indexer search`` delete the index, then fail on a traceback).
"""

from __future__ import annotations

import os
from pathlib import Path

LOW_SPACE_BYTES = 1 << 20  # less free space than this beside the file: SQLite's "disk I/O
# error" on opening (the -wal and -shm files it writes even to read) is a full disk


# SQLite's names for a file it may open but not write (another user's, mode 0444, a
# read-only disk): it opens such a file read-only without a word, and the first write fails.
_NOT_ALLOWED = ("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_AUTH")


def not_allowed(err: Exception) -> bool:
    """Whether ``err`` is SQLite refusing a file this user may not write: no damage (a
    good file moved aside or rebuilt would be lost for nothing)."""
    return str(getattr(err, "sqlite_errorname", "")).startswith(_NOT_ALLOWED)


def called_damaged(err: BaseException) -> bool:
    """Whether SQLite said the file behind ``err`` is damaged (malformed, not a database):
    a reason to check it whole, not proof (``late_check.damage`` is)."""
    name = str(getattr(err, "sqlite_errorname", "") or "")
    return name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB"))


def disk_trouble(path: Path, err: Exception) -> str | None:
    """What a full or failing disk did to the open of the SQLite file ``path`` (words for
    a message), or None when ``err`` is no such thing."""
    name = str(getattr(err, "sqlite_errorname", "") or "")
    if name.startswith("SQLITE_FULL") or (name.startswith("SQLITE_IOERR") and _full(path)):
        return "the disk holding it is full"
    if name.startswith("SQLITE_IOERR"):
        return "the disk reported an I/O error"
    return None


def said_plainly(err: BaseException) -> bool:
    """Whether ``err`` is the disk's or the system's answer (full, failing, a file this
    user may not write), whose words say all there is: logged without a traceback."""
    name = str(getattr(err, "sqlite_errorname", "") or "")
    return isinstance(err, OSError) or name.startswith(
        ("SQLITE_FULL", "SQLITE_IOERR", *_NOT_ALLOWED)
    )


def _full(path: Path) -> bool:
    try:
        info = os.statvfs(path.parent)
    except OSError:
        return False
    return info.f_bavail * info.f_frsize < LOW_SPACE_BYTES


def unwritable_index(path: Path, err: Exception) -> str:
    """The start-up message for an index this user may not write. It is not replaced: the
    index is derived, but a file made read-only may be so on purpose."""
    said = " ".join(str(err).split())[:300]
    return (
        f"the index {path} cannot be written by this user ({said}): run the indexer as the"
        " user who owns the workspace, or make the file writable, or delete it to have it"
        " rebuilt from the vaults (SQLite also writes the -wal and -shm files beside it)"
    )
