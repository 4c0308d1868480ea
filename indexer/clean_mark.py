"""The clean-shutdown mark (``W/.indexer/clean-shutdown``) and the refusals it carries.

A server that stopped cleanly leaves the mark; the next start takes it away and skips
the checks that read whole files (index, history, and history against every file). A
file history refuses for good (past SQLite's length limit) waits unrecorded for ever:
it kept every stop from leaving the mark, so every start did the full check. The stop
now writes such files into the mark, one JSON line each, ``[lang, path, unknown,
[dev, ino, size, mtime_ns, ctime_ns]]`` after the first line ``stopped cleanly``, and
the start hands them back (``Unrecorded.seed``): the index, whole, tells history nothing
of them, and they are still refused, and said, without being read.

The mark is a workspace file anyone with the workspace may have written: it is read
bounded (``MAX_BYTES``, which a stop's mark never passes: one that could not carry
every refusal within it is not left; no FIFO or link followed), and an entry that does not hold a
vault this workspace has and a path a tool could name is dropped; the start then does
the full check, as after a crash.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from indexer.vault import fsops
from indexer.vault.refused_files import MAX_KEPT, Identity
from indexer.vault.sandbox import clean_relpath
from indexer.vault.unrecorded import Refusal
from shared.errors import VaultError
from shared.langs import is_lang
from shared.workspace import Workspace

log = logging.getLogger("indexer")
FIRST_LINE = "stopped cleanly"
# What a start reads at most. A stop's mark stays within it (``render``): the escaped
# lines of MAX_KEPT paths of MAX_PATH_BYTES may not (a two-byte letter is six escaped,
# and a Mac's decomposed Hangul name of 1 KB is 3 KB on disk, 6 KB escaped).
MAX_BYTES = 8 * 1024 * 1024
MAX_ID = 1 << 64  # (an identity's numbers are a stat's: unsigned 64-bit at most)


@dataclass
class Taken:
    """What the mark said: whether the last stop was clean, and its refusals."""

    clean: bool = False
    refused: list[Refusal] = field(default_factory=list)


def render(refused: list[Refusal]) -> str | None:
    """The mark's text: its first line, then a JSON line a refusal (ASCII only); None
    when it cannot carry them all within ``MAX_BYTES`` (or ``MAX_KEPT``): a mark the
    start reads as damaged, or one that left some out and was read as clean (they
    would be unknown to history's checks), is worse than none (the full check)."""
    if len(refused) > MAX_KEPT:
        return None
    lines = [FIRST_LINE]
    size = len(FIRST_LINE) + 1
    for lang, path, unknown, identity in refused:
        line = json.dumps([lang, path, unknown, list(identity)])
        size += len(line) + 1  # (ASCII: a character a byte)
        if size > MAX_BYTES:
            return None
        lines.append(line)
    return "\n".join(lines) + "\n"


def take(workspace: Workspace) -> Taken:
    """Read the mark and remove it (for good: the folder is fsync'd), so a crash from
    now on is seen at the next start. No mark: not clean. A damaged one: not clean,
    with the refusals that were whole (said in the log)."""
    path = workspace.clean_mark
    try:
        text, why = _read(path), None
    except OSError as err:
        text, why = None, err.strerror or str(err)
    try:
        path.unlink()
    except FileNotFoundError:
        return Taken()
    fd = os.open(workspace.state_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    with fsops.opened(fd):
        os.fsync(fd)
    taken = Taken(clean=True) if text is None else parse(text, set(workspace.langs()))
    if why is not None:
        taken.clean = False
    if not taken.clean:
        log.warning(
            "the clean-shutdown mark %s could not be read whole (%s): this start checks"
            " the index and history whole",
            path,
            why or "not as a stop writes it",
        )
    return taken


def parse(text: str, langs: set[str]) -> Taken:
    """The mark's text read: clean when every line is whole (a vault of ``langs``)."""
    first, _, rest = text.partition("\n")
    taken = Taken(clean=first == FIRST_LINE)
    for line in rest.splitlines():
        refusal = _refusal(line, langs)
        if refusal is None or len(taken.refused) >= MAX_KEPT:
            taken.clean = False
        else:
            taken.refused.append(refusal)
    return taken


def _refusal(line: str, langs: set[str]) -> Refusal | None:
    """One line's refusal; None when it is not one a stop writes for these vaults."""
    try:
        entry = json.loads(line)
    except (ValueError, RecursionError):  # (not JSON, a number too long, nested deep)
        return None
    if not isinstance(entry, list) or len(entry) != 4:
        return None
    lang, path, unknown, identity = entry
    if not (is_lang(lang) and lang in langs and isinstance(unknown, bool)):
        return None
    try:  # (a name the tools may use; spelled as on disk: NFD kept, but no ``..``)
        clean_relpath(path, summary=True)
    except VaultError:
        return None
    if any(name in ("", ".", "..") for name in path.split("/")):
        return None
    numbers = _identity(identity)
    return None if numbers is None else (lang, path, unknown, numbers)


def _identity(value: object) -> Identity | None:
    if not isinstance(value, list) or len(value) != 5:
        return None
    if not all(type(n) is int and 0 <= n < MAX_ID for n in value):
        return None
    dev, ino, size, mtime_ns, ctime_ns = value
    return dev, ino, size, mtime_ns, ctime_ns


def _read(path: Path) -> str | None:
    """The mark's text; None when there is none. A FIFO, a device or a link there, one
    past ``MAX_BYTES`` or not UTF-8 is an ``OSError`` (damaged: the full check)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    with fsops.opened(fd):
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        data = b""
        while chunk := os.read(fd, MAX_BYTES + 1 - len(data)):
            data += chunk
            if len(data) > MAX_BYTES:
                raise OSError(errno.EFBIG, f"larger than {MAX_BYTES} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise OSError(errno.EINVAL, "not UTF-8") from None
