"""Durable file primitives: atomic replace, serialized append, content hashes.

A write goes to a temp file in the same folder (``.<name>.tmp.<random>``, a dot-file so
no tool, index or watcher ever sees it), is fsync'd, renamed over the target, and the
folder is fsync'd so the new entry survives a power loss. Temp files orphaned by a
crash are removed at the next start (``remove_orphan_temp_files``).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path

from shared.errors import ForbiddenPathError

TEMP_RE = re.compile(r"^\..+\.tmp\.[0-9a-f]{16}$")


def etag_of(data: bytes) -> str:
    """The content hash clients pass back as ``if_match``."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def make_parents(folder: Path, stop: Path) -> None:
    """Create ``folder`` and its missing parents below ``stop``, fsyncing each new entry."""
    missing: list[Path] = []
    current = folder
    while current != stop and not current.exists():
        missing.append(current)
        current = current.parent
    for new in reversed(missing):
        with contextlib.suppress(FileExistsError):
            new.mkdir()
        if not new.is_dir() or new.is_symlink():
            raise ForbiddenPathError("a parent of the path is not a folder")
        fsync_dir(new.parent)


def refuse_hard_links(path: Path) -> None:
    """Refuse to modify a file that has more than one name (it may live outside the vault)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
        raise ForbiddenPathError("the file has more than one hard link; it is not modified")


def atomic_write(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data``: temp file, fsync, rename, fsync of the folder."""
    folder = path.parent
    temp = folder / f".{path.name}.tmp.{secrets.token_hex(8)}"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    fsync_dir(folder)


def append_bytes(path: Path, data: bytes, *, create: bool) -> None:
    """Append ``data`` at the end of ``path`` (fsync'd); the caller serializes per file."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
    if create:
        flags |= os.O_CREAT
    existed = path.exists()
    fd = os.open(path, flags, 0o644)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ForbiddenPathError("the path is not a regular file")
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
    finally:
        os.close(fd)
    if not existed:
        fsync_dir(path.parent)


def iter_temp_files(root: Path) -> Iterator[Path]:
    """Our temp files anywhere below ``root`` (dot-folders are not entered)."""
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            if TEMP_RE.match(name):
                yield Path(folder, name)


def remove_orphan_temp_files(root: Path) -> int:
    """Delete temp files a crash left behind; returns how many."""
    count = 0
    for temp in iter_temp_files(root):
        temp.unlink(missing_ok=True)
        count += 1
    return count
