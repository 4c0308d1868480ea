"""The mode of a file a job distils from notes (USER.md, PROJECT.md): no more open to
other users than the notes it quotes.

Maintenance quotes the event log's day files (without a model, their lines; with one,
whatever it makes of them and of the notes its read-only tools returned). Written 0644
(less the umask) as any new file, a USER.md distilled from a 0600 day file, or from day
files in a 0700 folder, told every local user what the person had kept to themselves.
A folder summary has the same rule for its folder (``summary_modes``).

Group bits grant read to the file's own group: a 0640 day file of group A lets A read
it, and a USER.md left 0640 under its own group B let every member of B read what it
quoted. A quoted file (or folder) of another group than the output's counts, for the
output's group, with its bits for others (what a member of B who is not in A may do
with it): 0640 of A beside a USER.md of B narrows it to 0600, 0644 of A does not. The
output keeps its group rather than being given A's: only root, or a member of A, may
hand it over, and the output quotes several files, of as many groups.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterable
from typing import TYPE_CHECKING

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
    (the module's docstring)."""
    group = _output_group(root_fd, output)
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
    bits = stat.S_IMODE(info.st_mode)
    if info.st_gid == group:
        return bits
    return (bits & ~0o070) | ((bits & 0o007) << 3)


def _output_group(root_fd: int, output: str) -> int:
    """The group ``output`` has after the write: its own where it is there (the vault's
    write keeps it), else a new file's: its folder's where that folder is set-group-ID,
    else the process's."""
    try:
        return os.stat(output, dir_fd=root_fd, follow_symlinks=False).st_gid
    except OSError:
        pass
    try:
        folder = os.stat(os.path.dirname(output) or ".", dir_fd=root_fd)
    except OSError:
        return os.getegid()
    return folder.st_gid if folder.st_mode & stat.S_ISGID else os.getegid()
