"""The start-up sweep of temp files a crash left behind.

A write goes to a temp file in the same folder (``.<name>.tmp.<random>``, a dot-file so
no tool, index or watcher ever sees it), is fsync'd, renamed over the target, and the
folder is fsync'd (``atomic.replace_at``). Temp files orphaned by a crash are removed at
the next start.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable
from pathlib import Path

from indexer.vault import fsops
from indexer.vault.scan import FileEntry, walk_files

TEMP_RE = re.compile(r"^\..+\.tmp\.[0-9a-f]{16}$")
TEMP_NAME_RE = re.compile(TEMP_RE.pattern.encode())  # the same, for the watcher's bytes


def remove_orphan_temp_files(
    root: Path, older_than: float | None = None, spare: Callable[[str], bool] | None = None
) -> int:
    """Delete temp files a crash left below the vault ``root`` (only those last changed
    before ``older_than``, seconds since the epoch, when given; never one ``spare`` names:
    a server sweeping while it serves spares its own writes' files); returns how many."""
    try:
        top = os.open(os.path.realpath(root), os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        return 0
    count = 0
    with fsops.opened(top), contextlib.closing(walk_files(top, "", hidden_files=True)) as files:
        for entry in files:
            if TEMP_RE.match(entry.name):
                if older_than is not None and not _older(entry, older_than):
                    continue
                if spare is not None and spare(entry.name):
                    continue
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.name, dir_fd=entry.dir_fd)
                    count += 1
    return count


def _older(entry: FileEntry, when: float) -> bool:
    try:
        _, mtime_ns, _ = entry.signature()
    except OSError:
        return False
    return mtime_ns < when * 1e9
