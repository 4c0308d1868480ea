"""Content hashes and the start-up sweep of temp files a crash left behind.

A write goes to a temp file in the same folder (``.<name>.tmp.<random>``, a dot-file so
no tool, index or watcher ever sees it), is fsync'd, renamed over the target, and the
folder is fsync'd (``fsops.replace_at``, which works on folder descriptors only). Temp
files orphaned by a crash are removed at the next start (``remove_orphan_temp_files``).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator
from pathlib import Path

from indexer import fsops
from shared.errors import ForbiddenPathError

MAX_DEPTH = 64
TEMP_RE = re.compile(r"^\..+\.tmp\.[0-9a-f]{16}$")


def etag_of(data: bytes) -> str:
    """The content hash clients pass back as ``if_match``."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _iter_temp_files(fd: int, rel: str, depth: int = 0) -> Iterator[tuple[int, str, str]]:
    """(folder fd, name, vault path) of our temp files below the open folder ``fd``.

    Dot-folders are not entered and links are never followed (folders are opened with
    ``O_NOFOLLOW`` relative to their parent); no tool writes deeper than ``MAX_DEPTH``.
    """
    if depth > MAX_DEPTH:
        return
    with os.scandir(fd) as it:
        entries = list(it)
    for entry in entries:
        if entry.is_file(follow_symlinks=False) and TEMP_RE.match(entry.name):
            yield fd, entry.name, rel + entry.name
        elif entry.is_dir(follow_symlinks=False) and not entry.name.startswith("."):
            try:
                child = fsops.open_dir(entry.name, fd)
            except (OSError, ForbiddenPathError):
                continue
            with fsops.opened(child):
                yield from _iter_temp_files(child, rel + entry.name + "/", depth + 1)


def remove_orphan_temp_files(root: Path) -> int:
    """Delete temp files a crash left below the vault ``root``; returns how many."""
    try:
        top = os.open(os.path.realpath(root), os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        return 0
    count = 0
    with fsops.opened(top):
        for fd, name, _ in _iter_temp_files(top, ""):
            try:
                os.unlink(name, dir_fd=fd)
            except FileNotFoundError:
                continue
            count += 1
    return count
