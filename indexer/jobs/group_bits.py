"""Permission bits as the group of a file being written sees them.

A file a job distils from others (USER.md, a folder summary) is made no more open than
what it quotes. Group bits grant access to a file's own group only: a 0640 note of
group A lets A read it, and a summary left 0640 under its own group B let every member
of B read what only A could. So a quoted file of another group counts, for the written
file's group, with its bits for others (what a member of B who is not in A may do): 0640
of A narrows the output to 0600, 0644 of A does not. The output keeps its group rather
than being given A's: only root, or a member of A, may hand it over, and it quotes files
of many groups.
"""

from __future__ import annotations

import os
import stat


def seen_by(info: os.stat_result, group: int) -> int:
    """``info``'s permission bits, its bits for others in place of its group bits where
    it is not ``group``'s."""
    bits = stat.S_IMODE(info.st_mode)
    if info.st_gid == group:
        return bits
    return (bits & ~0o070) | ((bits & 0o007) << 3)


def written_group(dir_fd: int, rel: str) -> int:
    """The group ``rel`` (under ``dir_fd``) has once written: its own where it is there
    (the vault's writes keep it), else a new file's: its folder's where that folder is
    set-group-ID, else the process's."""
    try:
        return os.stat(rel, dir_fd=dir_fd, follow_symlinks=False).st_gid
    except OSError:
        pass
    try:
        folder = os.stat(os.path.dirname(rel) or ".", dir_fd=dir_fd)
    except OSError:
        return os.getegid()
    return folder.st_gid if folder.st_mode & stat.S_ISGID else os.getegid()
