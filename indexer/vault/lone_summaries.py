"""A folder's summary (``.overview.md``) told apart from a person's file of that name,
and taken away with the folder an undo emptied.

The summaries job writes a summary into every folder that holds notes, a few seconds
after a change. An undo that took away the only note of a folder (an event's day file,
a folder an entry moved away) then found the folder not empty, kept it, and the next
summary pass took the summary and left the folder: ``events/2026/12/`` stayed, empty,
after the entry that made it was undone. So a folder that holds nothing but a summary
this job wrote is empty to an undo: the summary goes (a version in history, the index
told) and the folder with it. A ``.overview.md`` a person wrote is theirs: it stays,
and so does its folder. The summaries a folder move carries are told to the index and
recorded as the summaries job's moves (``carried_summaries``).
"""

from __future__ import annotations

import itertools
import os
import stat
from collections.abc import Callable
from typing import TYPE_CHECKING

from indexer.vault import fsops
from indexer.vault.history.rows import permissions
from indexer.vault.history.store import Change
from indexer.vault.sandbox import Target
from indexer.vault.timeline import read_at, read_with_mode
from shared.errors import VaultError
from shared.workspace import OVERVIEW_FILE

# The reason of a carried summary's rows (the actor: the summaries job, as its writes)
CARRIED_REASON = "folder summary moved with its folder"

if TYPE_CHECKING:
    from indexer.vault.vault import Vault

HEAD_BYTES = 256 * 1024  # enough of a summary for its frontmatter
MAX_SUMMARY_BYTES = 4 << 20  # a summary read back for history (500 children ≈ 30 KB)
_OWN_FIELDS = {("type", "summary"), ("generated_by", "llm"), ("generated_by", "fallback")}


def is_summary(data: bytes, folder: str) -> bool:
    """Whether ``folder``'s ``.overview.md`` is a summary (the job's, maybe edited, or
    damaged: cut short, its YAML broken): empty, or a frontmatter block with ``type:
    summary``, ``children_digest`` or ``child_count``, ``generated_by`` of the job, or
    the title the job gives the folder (``<folder>/``)."""
    text = data[:HEAD_BYTES].decode("utf-8", "replace").lstrip("\ufeff \t\r\n")
    if not text:
        return True
    lines = text.splitlines()
    if lines[0].strip() != "---":
        return False
    title = f"{folder}/" if folder else "/"
    for line in itertools.takewhile(lambda line: line.strip() != "---", lines[1:]):
        key, _, value = line.partition(":")
        value = value.strip().strip("'\"")
        if key in ("children_digest", "child_count") or (key, value) in _OWN_FIELDS:
            return True
        if key == "title" and value == title:
            return True
    return False


def drop(vault: Vault, lang: str, folder: str, fd: int, reason: str, told: list[Target]) -> bool:
    """Remove the summary of ``folder`` (open as ``fd``, and holding nothing else) when
    the job wrote it: recorded in history (``reason``), under the file's lock (the job
    writes it under that lock too), its target added to ``told``. Whether it is gone:
    the job may have taken it since the folder was listed (an emptied folder loses its
    summary; at a restart it runs at once, beside an undo run again), leaving the folder
    empty for the undo to remove."""
    rel = f"{folder}/{OVERVIEW_FILE}" if folder else OVERVIEW_FILE
    try:
        target = vault.sandbox.resolve(lang, rel, summary=True)
    except VaultError:
        return False
    with vault._lock(target):
        info = fsops.lstat_at(OVERVIEW_FILE, fd)
        if info is None:
            return True
        if not stat.S_ISREG(info.st_mode) or info.st_nlink > 1:
            return False  # (a link, a folder so named, a second name of a file: not ours)
        data = read_at(fd, OVERVIEW_FILE, MAX_SUMMARY_BYTES)
        if data is None or not is_summary(data, folder):
            return False
        mode = permissions(info, fd)  # (restore makes it again so)
        change = Change(lang, target.rel, "delete", data, None, mode=mode)
        with vault.recorder.changing([change], actor="tool", reason=reason):
            os.unlink(OVERVIEW_FILE, dir_fd=fd)
    told.append(target)
    return True


def carried_summaries(
    vault: Vault, lang: str, paths: list[str], relocate: Callable[[str], str]
) -> tuple[list[Target], list[Change]]:
    """The summaries a folder move carries (their old ``paths``, new by ``relocate``):
    their targets at both paths, for the index to hear of, and history's rows, the
    summaries job's own moves (history said the old path's was still there, and met the
    new one only as an outside baseline at the next start); not the entry's, whose undo
    a later pass's rewrite of one would block. A path no tool takes (too long once
    moved), or a summary that cannot be read, is left to the watcher."""
    targets: list[Target] = []
    changes: list[Change] = []
    for rel in paths:
        old, new = (_summary_target(vault, lang, path) for path in (rel, relocate(rel)))
        targets += [target for target in (old, new) if target is not None]
        if old is None or new is None or (found := _read(vault, old)) is None:
            continue
        data, mode = found
        changes.append(Change(lang, old.rel, "move", data, None, new.rel, mode=mode))
        changes.append(Change(lang, new.rel, "move", None, data, old.rel))
    return targets, changes


def _summary_target(vault: Vault, lang: str, path: str) -> Target | None:
    try:
        return vault.sandbox.resolve(lang, path, summary=True)
    except VaultError:
        return None


def _read(vault: Vault, target: Target) -> tuple[bytes, int] | None:
    """A summary's bytes and mode (``read_with_mode``), None when it cannot be read."""
    try:
        with vault.sandbox.open(target) as place:
            if place.dir_fd is None:
                return None
            return read_with_mode(place.dir_fd, place.name, MAX_SUMMARY_BYTES)
    except (VaultError, OSError):
        return None
