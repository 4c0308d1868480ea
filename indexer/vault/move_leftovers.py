"""What an undone move leaves at its new place: dot-files, and the folders it made.

A move carries a note's ``.assets/`` folder whole, dot-files too (a Finder
``.DS_Store``), and makes the folders on the way to its new place. History keeps no
dot-file (no tool may name one), so an undo, which works file by file from history,
put every file back and left those: a ``.DS_Store`` in an ``.assets/`` folder whose
note was gone then refused the note's move back there. So once the files are back, the
dot-files left in an ``.assets/`` folder (or one below it) go back to the one its files
came back to, if that is there; then each folder a file left goes if it is empty, and
its parents while they are. Only inside ``.assets/`` is a dot-file known to be the
move's: elsewhere they stay, and so does their folder, but for a folder's summary the
summaries job wrote (``lone_summaries``: a folder moved whole took its summary along,
and the job writes one into a folder an entry's note made): a folder holding only that
is empty. An empty folder the move did not make goes too: nothing tells them apart.
The same holds for the folders a note the entry wrote (not moved) was the only file in.
"""

from __future__ import annotations

import logging
import os
import posixpath
import stat
from collections.abc import Callable, Iterable
from contextlib import suppress

from indexer.vault import fsops, renames
from indexer.vault.history.store import Version
from indexer.vault.sandbox import Sandbox
from shared.errors import VaultError
from shared.workspace import OVERVIEW_FILE

log = logging.getLogger("indexer.vault")
# (folder, its descriptor) -> whether its summary, the one entry left in it, was taken
DropSummary = Callable[[str, int], bool]


def after_undo(
    sandbox: Sandbox,
    lang: str,
    undone: Iterable[tuple[str, Version, Version | None, Version]],
    drop_summary: DropSummary | None = None,
) -> None:
    """After an undo of (path, the entry's newest version, the one gone back to, the
    entry's oldest) each: the files the entry had put there and the undo took away left
    their folders. A file the entry moved there and then rewrote (a link that followed
    its image's move) is one it moved; one it wrote there leaves its folder to go up to
    the vault's (while they are empty): an undone entry leaves no empty folder behind."""
    left = [_left(*file) for file in undone if file[2] is None]
    bring_back(sandbox, lang, left, drop_summary)


def _left(rel: str, latest: Version, before: Version | None, first: Version) -> tuple[str, str]:
    """(the folder the file the undo took away left, the one it is back in: "" when
    the entry made it)."""
    came = latest if latest.op == "move" else first
    if came.op == "move" and came.other_path is not None:
        return posixpath.dirname(rel), posixpath.dirname(came.other_path)
    return posixpath.dirname(rel), ""


def bring_back(
    sandbox: Sandbox,
    lang: str,
    folders: Iterable[tuple[str, str]],
    drop_summary: DropSummary | None = None,
) -> None:
    """For each (folder a file left by the undo, folder it came back to), and their
    parents side by side while both are in ``.assets/`` folders, deepest first: the
    dot-files left there go back, and the folders emptied go (emptied but for a
    summary ``drop_summary`` takes away, too)."""
    paired: dict[str, str | None] = {}
    for left, back in folders:
        while _in_assets(left) and _in_assets(back) and left != back:
            paired[left] = back
            left, back = posixpath.dirname(left), posixpath.dirname(back)
        while left and left != back:
            paired.setdefault(left, None)
            left = posixpath.dirname(left)
    for left in sorted(paired, key=lambda folder: -folder.count("/")):
        home = paired[left]
        with suppress(VaultError, OSError):
            if home is not None:
                _bring_back(sandbox, lang, left, home)
            _remove_if_empty(sandbox, lang, left, drop_summary)


def _in_assets(folder: str) -> bool:
    """Whether ``folder`` is a note's ``.assets/`` folder or one below it."""
    return any(part.endswith(".assets") for part in folder.split("/"))


def _bring_back(sandbox: Sandbox, lang: str, left: str, back: str) -> None:
    with (
        sandbox.open(sandbox.resolve(lang, left)) as there,
        sandbox.open(sandbox.resolve(lang, back)) as home,
    ):
        left_fd, home_fd = there.folder_fd(), home.folder_fd()
        if left_fd is None or home_fd is None:
            return  # (the folder they came back to is gone: the dot-files stay)
        with os.scandir(left_fd) as entries:
            names = [entry.name for entry in entries]
        if any(not name.startswith(".") for name in names):
            return  # something else is there: not only what the move carried
        for name in names:
            info = fsops.lstat_at(name, left_fd)
            if info is None or not stat.S_ISREG(info.st_mode):
                continue
            try:
                if not renames.move_noreplace(left_fd, name, home_fd, name):
                    os.link(name, name, src_dir_fd=left_fd, dst_dir_fd=home_fd)
                    os.unlink(name, dir_fd=left_fd)
            except FileExistsError:
                log.info("%s/%s stays: %s has its own", left, name, back or "the vault")


def _remove_if_empty(
    sandbox: Sandbox, lang: str, folder: str, drop_summary: DropSummary | None
) -> None:
    """rmdir ``folder`` when nothing at all is in it, or only a summary ``drop_summary``
    takes away."""
    with sandbox.open(sandbox.resolve(lang, folder)) as place:
        fd = place.folder_fd()
        if fd is None or place.dir_fd is None:
            return
        with os.scandir(fd) as entries:
            names = [entry.name for _, entry in zip(range(2), entries, strict=False)]
        if names == [OVERVIEW_FILE] and drop_summary is not None:
            if not drop_summary(folder, fd):
                return
        elif names:
            return
        os.rmdir(place.name, dir_fd=place.dir_fd)
