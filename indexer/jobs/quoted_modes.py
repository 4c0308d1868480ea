"""The mode of a file a job distils from notes (USER.md, PROJECT.md): no more open to
other users than the notes it quotes.

Maintenance quotes the event log's day files (without a model, their lines; with one,
whatever it makes of them and of the notes its read-only tools returned). Written 0644
(less the umask) as any new file, a USER.md distilled from a 0600 day file, or from day
files in a 0700 folder, told every local user what the person had kept to themselves.
A folder summary has the same rule for its folder (``summary_modes``).

A quoted file of another group than the output's counts by its bits for others
(``group_bits``).
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterable
from typing import TYPE_CHECKING

from indexer.jobs.group_bits import seen_by, written_group
from indexer.jobs.maintenance_input import event_files

if TYPE_CHECKING:
    from indexer.vault.vault import Vault

OPEN = 0o644  # a new file's mode (less the umask) when nothing it quotes is narrower


def quoted_mode(root_fd: int, quoted: Iterable[str], output: str) -> int | None:
    """The mode to write ``output`` with (paths relative to the vault root ``root_fd``):
    ``OPEN`` narrowed by each quoted file's permissions and its folders' below the root,
    and by the output's own; None where that is the output's mode already, or nothing
    narrows it (the write keeps the file's mode and owner, or a new file's umask). A
    quoted file of another group than the output's narrows it by its bits for others
    (``group_bits``)."""
    group = written_group(root_fd, output)
    allowed = OPEN
    folders: dict[str, int] = {}
    for rel in quoted:
        allowed &= _bits(root_fd, rel, group)
        parts = rel.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            folder = "/".join(parts[:depth])
            if folder not in folders:
                folders[folder] = _bits(root_fd, folder, group)
            allowed &= folders[folder]
    if allowed == OPEN:
        return None
    allowed |= stat.S_IRUSR | stat.S_IWUSR
    try:
        info = os.stat(output, dir_fd=root_fd, follow_symlinks=False)
    except OSError:
        return allowed
    current = stat.S_IMODE(info.st_mode) & 0o777
    return None if current & ~allowed == 0 else current & allowed


def distilled_mode(vault: Vault, lang: str, output: str, read: Iterable[str]) -> int | None:
    """``quoted_mode`` of a maintenance output: the whole event log (the lines it adds
    stay after their day files go) and the notes the model's tools ``read``."""
    quoted = [*event_files(vault, lang), *read]
    with contextlib.ExitStack() as stack:
        root = vault.sandbox.open_root(lang, stack)
        return None if root is None else quoted_mode(root, quoted, output)


def _bits(root_fd: int, rel: str, group: int) -> int:
    """A file's or folder's permission bits as the output's ``group`` sees them: its
    bits for others in place of its group bits when it is another group's (all bits
    where it is gone meanwhile)."""
    try:
        info = os.stat(rel, dir_fd=root_fd, follow_symlinks=False)
    except OSError:
        return 0o777
    return seen_by(info, group)
