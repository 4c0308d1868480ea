"""Whether a folder move keeps everything below the folder within every tool's reach:
no path deeper than ``MAX_DEPTH`` names or longer than ``MAX_PATH_BYTES`` at its new
place (an empty folder or a dot-file too, which no listing names).
"""

from __future__ import annotations

import os
import unicodedata

from indexer.vault import fsops
from indexer.vault.names import printable
from indexer.vault.sandbox import Place, Target
from shared.errors import ForbiddenPathError
from shared.path_names import MAX_DEPTH, MAX_PATH_BYTES


def check_reach(src: Place, source: Target, dest: Target) -> None:
    """Refuse a folder move that would put anything below the folder (an empty folder
    or a dot-file too, which no listing names) deeper or longer than a path may be: it
    would be out of every tool's reach until moved back. What is already out of reach
    may move where it stays so (a move up or to a shorter name is never refused). Paths
    are measured as the vault names them (NFC); one folder is open per level, and a
    folder that cannot be opened is passed over (as every listing passes it over)."""
    grows = len(dest.rel.split("/")) - len(source.rel.split("/"))
    if grows <= 0 and _size(dest.rel) <= _size(source.rel):
        return
    max_below = MAX_DEPTH - len(dest.rel.split("/"))  # levels a path may have below it
    max_bytes = MAX_PATH_BYTES - _size(dest.rel) - 1  # bytes after "<new_path>/"
    assert src.dir_fd is not None
    top = fsops.open_dir(src.name, src.dir_fd)
    levels = [(top, "", 1, os.scandir(top))]  # each: folder, its path below, level, entries
    try:
        while levels:
            fd, below, level, entries = levels[-1]
            entry = next(entries, None)
            if entry is None:
                levels.pop()
                entries.close()
                os.close(fd)
                continue
            rel = below + entry.name
            if level > max_below or _size(rel) > max_bytes:
                raise ForbiddenPathError(
                    f"{dest.rel}/{printable(rel)} would be deeper than {MAX_DEPTH} names or"
                    f" longer than {MAX_PATH_BYTES} bytes (out of every tool's reach);"
                    " nothing was moved"
                )
            if not entry.is_dir(follow_symlinks=False):
                continue
            try:
                child = fsops.open_dir(entry.name, fd)
            except (OSError, ForbiddenPathError):
                continue  # may not be opened (or gone): no listing reaches below it
            try:
                levels.append((child, rel + "/", level + 1, os.scandir(child)))
            except OSError:
                os.close(child)
    finally:
        for fd, _, _, entries in levels:
            entries.close()
            os.close(fd)


def _size(path: str) -> int:
    """The bytes of a path as the vault names it (NFC), whatever the disk spells."""
    return len(os.fsencode(unicodedata.normalize("NFC", path)))
