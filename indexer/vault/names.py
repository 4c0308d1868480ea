"""Names: which path segments the tools accept, and which names on disk they can reach.

A tool's path is checked as a string first (``check_char``/``check_segment``, used by
``sandbox.clean_relpath``). Files made by other programs can carry names the sandbox
refuses: bytes that are not UTF-8, ``? : \\``, device names, control, bidi or other
invisible characters, folders deeper than ``MAX_DEPTH``. They can also be spelled in
decomposed Unicode (NFD: macOS, some sync tools), while the tools speak NFC.

Policy: a listing (``find``, ``grep``, the index, the watcher) returns only paths that
every tool accepts, in NFC; any other name is skipped with one warning (``skipped``),
never half-listed. A tool's NFC name finds a file stored under another normalization
form of it (``equivalent_name``: the folder is listed and the NFC forms compared when
the exact name is missing), so a listed NFD note is read, appended to, rewritten and
deleted in place and never gets a composed twin. When two names of one folder read
the same once normalized, the exact NFC one (else the first in byte order) is the one
reached, and the only one listed; a delete or move of it is refused (``refuse_twin``):
it would hand the name to the unlisted twin, whose text history never recorded.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
import unicodedata
from collections.abc import Collection, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache

from shared.control_chars import printable
from shared.errors import ConflictError, ForbiddenPathError
from shared.path_names import (
    MAX_DEPTH,
    MAX_PATH_BYTES,
    MAX_SEGMENT_BYTES,
    check_char,
    check_segment,
)

__all__ = [
    "MAX_DEPTH",
    "MAX_PATH_BYTES",
    "MAX_SEGMENT_BYTES",
    "check_char",
    "check_segment",
    "printable",
]

log = logging.getLogger("indexer.vault")

# An ASCII name that needs the full check: a refused character, a dot or ``~`` at the
# start, a dot or space at the end, only spaces before the extension, a percent sign
# (``%2e%2e`` decodes to ``..``), a device name.
_ASCII_SUSPECT = re.compile(
    r'[\x00-\x1f\x7f\\:<>"|?*%]|[. ]$|^[.~]|^ +\.|^(?:CON|PRN|AUX|NUL|COM\d|LPT\d) *(?:\.|$)',
    re.IGNORECASE,
)


def needs_lookup(name: str) -> bool:
    """Whether another spelling of ``name`` (NFC) could normalize to it: then a missing
    exact name is looked for by listing its folder. ASCII and CJK names never are."""
    return not name.isascii() and unicodedata.normalize("NFD", name) != name


@lru_cache(maxsize=1 << 15)
def name_problem(raw: str) -> str | None:
    """Why a name found on disk cannot be used by the tools (as its NFC form), or None.

    Cached: walks meet the same names again and again (CJK names take the slow path).
    """
    if raw.isascii():
        if _ASCII_SUSPECT.search(raw) is None and len(raw) <= MAX_SEGMENT_BYTES:
            return None
    else:
        try:
            raw.encode("utf-8")
        except UnicodeEncodeError:
            return "the name is not valid UTF-8"
    name = unicodedata.normalize("NFC", raw)
    if name != raw and not needs_lookup(name):
        return "the name reads as another name once normalized"
    try:
        for char in name:
            check_char(char)
        check_segment(name)
    except ForbiddenPathError as err:
        return err.message
    return None


def is_plain(raw: str) -> bool:
    """The common case, cheaply: an ASCII name the tools take as it is."""
    return raw.isascii() and len(raw) <= MAX_SEGMENT_BYTES and _ASCII_SUSPECT.search(raw) is None


def reachable_names(raws: Iterable[str], plain: Collection[str], where: str) -> dict[str, str]:
    """raw name -> the name tools use (NFC), for the names ``raws`` of one folder that are
    not plain (``is_plain``) but that the tools can reach; the others are skipped with a
    warning. ``plain`` holds the folder's plain names (they win a tie); ``where`` is the
    folder's vault path with a trailing ``/`` (for the warning)."""
    chosen: dict[str, str] = {}  # NFC name -> raw name
    for raw in sorted(raws):
        problem = name_problem(raw)
        if problem is not None:
            skipped(where + printable(raw), problem)
            continue
        name = _nfc(raw)
        other = chosen.get(name)
        if name in plain or other == name or (other is not None and raw != name):
            skipped(where + shown_apart(raw), "another name in its folder reads the same")
            continue
        if other is not None:
            skipped(where + shown_apart(other), "another name in its folder reads the same")
        chosen[name] = raw
    return {raw: name for name, raw in chosen.items()}


def shown_apart(raw: str) -> str:
    """A left-out name, printable; one not in NFC (a second spelling of a name the tools
    list, ``café`` as ``e`` and U+0301) with all but ASCII escaped, so that it never
    reads exactly as the name listed beside it (in a listing's sample, in the log)."""
    shown = printable(raw)
    if unicodedata.is_normalized("NFC", shown):
        return shown
    return "".join(c if c.isascii() else f"\\u{ord(c):04x}" for c in shown)


@lru_cache(maxsize=1 << 15)
def _nfc(raw: str) -> str:
    return unicodedata.normalize("NFC", raw)


def equivalent_name(dir_fd: int, name: str) -> str | None:
    """The entry of ``dir_fd`` a tool's (NFC) ``name`` reaches when no entry is spelled
    exactly so: the first, in byte order, whose NFC form is ``name``; None if none."""
    if not needs_lookup(name):
        return None
    kept = _listings.get()
    if kept is None:
        spellings = _other_spellings(dir_fd)
    else:  # (within ``listings_kept``: each folder listed once)
        try:
            info = os.fstat(dir_fd)
        except OSError:
            return None
        spellings = kept.get((info.st_dev, info.st_ino))
        if spellings is None:
            spellings = _other_spellings(dir_fd)
            if spellings is not None:
                kept[(info.st_dev, info.st_ino)] = spellings
    return None if spellings is None else spellings.get(name)


# A folder's entries not spelled in NFC, by their NFC form (the first in byte order),
# by folder (device, inode), while ``listings_kept`` holds: a batch of the index reading
# many gone notes of one large folder of accented names listed it once per note (3,000
# notes moved out of a folder of 6,000 offline: 6.8 s of the start's catch-up, 0.4 s
# with ASCII names).
_listings: ContextVar[dict[tuple[int, int], dict[str, str]] | None] = ContextVar(
    "listings", default=None
)


@contextmanager
def listings_kept() -> Iterator[None]:
    """Within: a folder is listed once for the other spellings of its names. For a batch
    that reads many files under one lock and writes none of them (the index): a name
    spelled anew during it is another program's change, whose event syncs it after."""
    token = _listings.set({})
    try:
        yield
    finally:
        _listings.reset(token)


def _other_spellings(dir_fd: int) -> dict[str, str] | None:
    """The entries of ``dir_fd`` not spelled in NFC, by NFC form; None if unlistable."""
    found: dict[str, str] = {}
    try:
        with os.scandir(dir_fd) as entries:
            for entry in entries:
                raw = entry.name
                if raw.isascii() or raw.startswith("."):
                    continue
                name = unicodedata.normalize("NFC", raw)
                if name != raw and (name not in found or raw < found[name]):
                    found[name] = raw
    except OSError:
        return None
    return found


def refuse_twin(dir_fd: int, reached: str, rel: str, doing: str) -> None:
    """``conflict`` when the folder ``dir_fd`` holds, beside the entry ``reached`` (its
    name on disk) that the tool's path ``rel`` reaches, another entry whose name reads
    the same once normalized (a composed and a decomposed ``café.md``): ``doing`` (a
    delete, a move away) would take the name from the file the tools read and hand it to
    the other, unlisted and unrecorded until then: the answer said the note was deleted
    or moved, and ``stat`` found it there still, with another text and no version of it
    in history. Writes, appends and reads act on the reached file and are let through."""
    name = rel.rsplit("/", 1)[-1]
    other = equivalent_name(dir_fd, name)
    if other is not None and other != reached:
        raise ConflictError(
            f"two entries in the folder of {rel} are named so, in two Unicode spellings"
            " (composed and decomposed: one is left out of listings); the tools reach one,"
            f" and {doing} would give the name to the other; rename one of them outside"
            " the tools first"
        )


class _WarnOnce:
    """One warning per key, with a bounded memory. Once full, one line says the rest go
    unlogged for an hour, then it starts over: a full set started over at once, and a
    vault of more names than it holds logged every one again at each walk (the status's
    and the folder view's: thousands of lines a click). ``indexer status`` and REST
    ``/status`` count and name them still."""

    def __init__(self, limit: int = 4096, quiet_seconds: float = 3600.0) -> None:
        self._seen: set[str] = set()
        self._limit = limit
        self._quiet_seconds = quiet_seconds
        self._full_until: float | None = None  # (monotonic) while full: nothing logged
        self._lock = threading.Lock()

    def __call__(self, key: str, message: str, *args: object) -> None:
        with self._lock:
            if self._full_until is not None:
                if time.monotonic() < self._full_until:
                    return
                self._seen.clear()
                self._full_until = None
            if key in self._seen:
                return
            if len(self._seen) >= self._limit:
                self._full_until = time.monotonic() + self._quiet_seconds
                log.warning(
                    "more than %d paths no tool can use were logged: the others are not for"
                    " an hour (indexer status counts them and names a few)",
                    self._limit,
                )
                return
            self._seen.add(key)
        # Limited per key (``logs.RepeatLimiter``): a thousand bad names are a thousand
        # lines, each once; the limiter would have kept the first five only, for good.
        log.warning(message, *args, extra={"limit_key": key})


_warn_once = _WarnOnce()


_unsaid = 0  # >0: inside ``skips_unsaid`` (the process's command reports them itself)


@contextmanager
def skips_unsaid() -> Iterator[None]:
    """No ``skipped`` warnings while inside: ``indexer status`` names these paths in its
    report (a count and five names), and ``indexer search`` is no report on the vault;
    each run of either warned of every such name on stderr again (once a process is
    once a run), ten searches ten times. The server, ``reindex`` and ``summarize`` still
    warn, once a process; the server's warning is its log's, once a start."""
    global _unsaid
    _unsaid += 1
    try:
        yield
    finally:
        _unsaid -= 1


def skipped(path: str, reason: str) -> None:
    """Warn once that ``path`` (printable) is left out of listings, and why."""
    if _unsaid:
        return
    _warn_once(
        path, "skipped %s: %s (no tool could use this path; rename it)", path, reason.rstrip(".")
    )


def tool_path(segments: Iterable[str]) -> str | None:
    """The vault path (NFC) tools use for a path found on disk (e.g. by the watcher), or
    None when no tool could use it (a refused name, too deep, too long)."""
    names: list[str] = []
    for raw in segments:
        if raw.startswith("."):
            names.append(raw)  # a dot-name: the caller's filters decide
            continue
        if name_problem(raw) is not None:
            return None
        names.append(raw if raw.isascii() else unicodedata.normalize("NFC", raw))
    path = "/".join(names)
    if len(names) > MAX_DEPTH or len(path.encode("utf-8", "surrogateescape")) > MAX_PATH_BYTES:
        return None
    return path
