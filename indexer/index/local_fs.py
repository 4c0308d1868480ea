"""Whether a folder is on a file system whose every change inotify reports.

inotify hears the changes made through this machine's kernel: on a network or FUSE file
system (NFS, SMB, sshfs, a VM's shared folder) another machine's edits make no event.
grep takes the watcher's word for unchanged files only on the local file systems named
here (an allow-list: an unknown type means "compare every file's stat").
"""

from __future__ import annotations

import os
import re
import threading
import time
from pathlib import Path

LOCAL_TYPES = frozenset(
    {
        "ext2", "ext3", "ext4", "xfs", "btrfs", "f2fs", "zfs", "bcachefs", "jfs",
        "reiserfs", "nilfs2", "tmpfs", "ramfs", "overlay", "vfat", "exfat", "ntfs3",
        "hfsplus",
    }
)  # fmt: skip
MOUNTINFO = Path("/proc/self/mountinfo")
RECHECK_SECONDS = 60.0
_OCTAL = re.compile(r"\\([0-7]{3})")


def mount_type(mountinfo: str, path: str) -> str | None:
    """The file system type of the mount holding the absolute, real ``path``, from the
    text of ``/proc/self/mountinfo`` (the longest mount point that contains it)."""
    best, found = -1, None
    for line in mountinfo.splitlines():
        fields = line.split(" ")
        try:
            fstype = fields[fields.index("-", 6) + 1]
        except (ValueError, IndexError):
            continue
        mount = _OCTAL.sub(lambda m: chr(int(m.group(1), 8)), fields[4])
        inside = path == mount or path.startswith(mount.rstrip("/") + "/")
        if inside and len(mount) > best:
            best, found = len(mount), fstype
    return found


class LocalFolders:
    """``is_local(folder)``, answered again at most once a minute per folder."""

    def __init__(self, mountinfo: Path = MOUNTINFO) -> None:
        self._mountinfo = mountinfo
        self._known: dict[str, tuple[float, bool]] = {}
        self._lock = threading.Lock()

    def is_local(self, folder: Path) -> bool:
        """Whether ``folder`` (links followed) is on a local file system type; its real
        path and the mount table are read again once the last answer is a minute old."""
        key = str(folder)
        now = time.monotonic()
        with self._lock:
            known = self._known.get(key)
        if known is not None and now - known[0] < RECHECK_SECONDS:
            return known[1]
        try:
            real = os.path.realpath(folder)
            local = mount_type(self._mountinfo.read_text(), real) in LOCAL_TYPES
        except OSError:
            local = False  # not Linux, or no /proc: nothing is known
        with self._lock:
            self._known[key] = (now, local)
        return local
