"""What is on disk, to prove that a refused call changed nothing."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path


def snapshot(root: Path) -> dict[str, tuple]:
    """Every entry under ``root`` (links not followed) with its type, size, mtime and hash."""
    state: dict[str, tuple] = {}
    for folder, dirs, files in os.walk(root, followlinks=False):
        for name in dirs + files:
            path = Path(folder, name)
            info = os.lstat(path)
            digest = ""
            if path.is_file() and not path.is_symlink():
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
            state[str(path)] = (info.st_mode, info.st_size, info.st_mtime_ns, digest)
    return state


def contents(root: Path) -> dict[str, tuple]:
    """``snapshot`` without times: what a change that was taken back must leave as it was
    (putting things back moves folders' and files' mtimes)."""
    return {path: (mode, size, digest) for path, (mode, size, _, digest) in snapshot(root).items()}
