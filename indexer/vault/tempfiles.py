"""The start-up sweep of temp files a crash left behind.

A write goes to a temp file in the same folder (``.<name>.tmp.<random>``, a dot-file so
no tool, index or watcher ever sees it), is fsync'd, renamed over the target, and the
folder is fsync'd (``atomic.replace_at``). Temp files orphaned by a crash are removed at
the next start: those in the vaults (whatever their path's length: a temp name is up to
22 bytes longer than its note's), and those of the workspace's own files.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable
from pathlib import Path

from indexer.vault import atomic, fsops
from indexer.vault.scan import walk_files

TEMP_RE = re.compile(r"^\..+\.tmp\.[0-9a-f]{16}$")
TEMP_NAME_RE = re.compile(TEMP_RE.pattern.encode())  # the same, for the watcher's bytes
_TOKEN = re.compile(r"[0-9a-f]{16}")


def is_temp_name(name: str) -> bool:
    """Whether ``name`` is a write's temp file's (``.<name>.tmp.<16 hex digits>``)."""
    return TEMP_RE.fullmatch(name) is not None


def remove_orphan_temp_files(root: Path, spare: Callable[[str], bool] | None = None) -> int:
    """Delete temp files a crash left below the vault ``root``, never one ``spare`` names
    (a server sweeping while it serves spares its own writes' files); returns how many."""
    try:
        top = os.open(os.path.realpath(root), os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        return 0
    count = 0
    walk = walk_files(top, "", hidden_files=True, any_length=is_temp_name)
    with fsops.opened(top), contextlib.closing(walk) as files:
        for entry in files:
            if is_temp_name(entry.name):
                if spare is not None and spare(entry.name):
                    continue
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.name, dir_fd=entry.dir_fd)
                    count += 1
    return count


def remove_temp_files_of(path: Path, spare: Callable[[str], bool] | None = None) -> int:
    """Delete the temp files a crash left of the writes of the one file ``path`` (the
    workspace's own files: the URL, the token...), never one ``spare`` names; only the
    names ``atomic`` gives them, nothing else beside ``path``. Returns how many."""
    prefix = atomic.temp_prefix(path.name)
    try:
        folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        return 0
    count = 0
    with fsops.opened(folder), os.scandir(folder) as entries:
        for entry in entries:
            name = entry.name
            if not name.startswith(prefix) or not _TOKEN.fullmatch(name[len(prefix) :]):
                continue
            if not entry.is_file(follow_symlinks=False) or (spare is not None and spare(name)):
                continue
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name, dir_fd=folder)
                count += 1
    return count
