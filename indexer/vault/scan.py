"""Walking a vault for ``find`` and ``grep``: glob matching and linear-time line search.

The walk goes by folder descriptors (``O_NOFOLLOW`` relative to the parent), so a folder
swapped for a symbolic link while it runs is skipped, never followed; files are read
relative to their folder's descriptor. Globs and grep patterns go through RE2
(``google-re2``), whose matching time is linear in the input whatever the pattern, so
neither ``*a*a*a*b`` nor ``(a+)+$`` can stall the server.
"""

from __future__ import annotations

import bisect
import os
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass

import re2

from indexer.canonical import composed
from indexer.vault import fsops, no_wait
from indexer.vault.cursor import WalkKey, step_in
from indexer.vault.dotted_i import dotted_i_matcher, fold_dotted_i, folds_case
from indexer.vault.names import (
    MAX_DEPTH,
    MAX_PATH_BYTES,
    MAX_SEGMENT_BYTES,
    is_plain,
    printable,
    reachable_names,
    shown_apart,
    skipped,
)
from shared.errors import ConflictError, ForbiddenPathError, InvalidArgumentError
from shared.graphemes import character_end, character_start
from shared.utf8 import check_text
from shared.workspace import FOLDER_OWN_FILES

MAX_PATTERN_CHARS = 2000
MAX_LINE_CHARS = 500
MATCH_LEAD = 100  # characters a long line shows before a match past its first ones
# RE2 stays linear, but once a pattern's DFA no longer fits its memory it falls back to
# an NFA costing ~program size per byte: ``.{1000}.{1000}x`` or ``[\\p{L}]{200}`` scan
# ~50 KB/s. Measured: below 10k instructions with a 32 MiB budget every probe ran at
# DFA speed (< 0.1 s per MB), so bigger programs are refused.
MAX_PROGRAM_SIZE = 10_000
RE2_MAX_MEM = 32 << 20
# ``skip_file(vault path, entry)``: whether a walk leaves a file out (see walk_files).
SkipFile = Callable[[str, os.DirEntry[str]], bool]
# ``left_out(printable vault path)``: hears each entry a walk cannot list (see walk_files).
LeftOut = Callable[[str], None]
# ``passed(folder path and "/", its file names)``: hears what a walk ``after`` a cursor
# passes over; the names None: the whole folder, not opened.
Passed = Callable[[str, list[str] | None], None]
Step = tuple[int, str] | None


Signature = tuple[int, int, int]


def signature(info: os.stat_result) -> Signature:
    """(size, mtime_ns, ctime_ns): what the index keeps of a file to tell it changed
    without reading it. The ctime is there for a write that keeps size and mtime (``cp
    -p``, ``rsync -a``, ``touch -r``): no program can set it, and any write or rename
    moves it."""
    return info.st_size, stored_ns(info.st_mtime_ns), stored_ns(info.st_ctime_ns)


def stored_ns(ns: int) -> int:
    """A time in nanoseconds as SQLite can keep it: a file dated after 2262 (``touch -d
    2400-01-01``) has a value past 64 bits, and its row stopped the whole index."""
    return max(-(2**63), min(ns, 2**63 - 1))


@dataclass(frozen=True, slots=True)
class FileEntry:
    """A regular file found by a walk (or, when asked for, a folder: ``is_folder``, no
    ``entry``). ``dir_fd`` is valid only until the walk moves on."""

    rel: str
    dir_fd: int
    entry: os.DirEntry[str] | None
    is_folder: bool = False

    @property
    def name(self) -> str:
        """The name as spelled on disk."""
        return self.entry.name if self.entry is not None else self.rel.rsplit("/", 1)[-1]

    def signature(self) -> Signature:
        """What the index compares (``signature``); one ``fstatat``, cached by DirEntry."""
        assert self.entry is not None, "a folder has no signature"
        return signature(self.entry.stat(follow_symlinks=False))

    def hard_linked(self) -> bool:
        """Whether the file has other names (edits through them make no event here)."""
        assert self.entry is not None, "a folder has no links"
        return self.entry.stat(follow_symlinks=False).st_nlink > 1

    def read_text(self, max_bytes: int, *, lossy: bool = False) -> str | None:
        """The file's UTF-8 text, or None (gone, now a link or FIFO, too big, not text;
        ``lossy``: bytes that are not UTF-8 read as U+FFFD, as the index reads them)."""
        return read_text_at(self.dir_fd, self.name, max_bytes, lossy=lossy)


def list_folder(
    fd: int,
    prefix: str,
    hidden_files: bool,
    skip_file: SkipFile | None = None,
    left_out: LeftOut | None = None,
) -> tuple[list[tuple[str, os.DirEntry[str]]], list[tuple[str, str]]]:
    """(files as (name, entry), subfolders as (name, name on disk)) of an open folder,
    sorted by name. Names are what the tools use (NFC); a name no tool could use is
    skipped with a warning (``names.reachable_names``). Dot-names are skipped (dot-files
    kept, as they are, when ``hidden_files``: the temp-file sweep needs them). A file
    ``skip_file`` passes over is left out, but its name still counts when the names of
    the folder are told apart (so it never lets a twin of it through). ``left_out(path)``
    hears every other entry left out (but a regular file of ``FOLDER_OWN_FILES``: a
    folder's delete takes it)."""
    files: list[tuple[str, os.DirEntry[str]]] = []
    folders: list[tuple[str, str]] = []
    odd_files: dict[str, os.DirEntry[str]] = {}
    odd_folders: set[str] = set()
    passed: list[str] = []
    with os.scandir(fd) as it:
        for entry in it:
            raw = entry.name
            if raw[0] == ".":
                if hidden_files and entry.is_file(follow_symlinks=False):
                    files.append((raw, entry))
                elif left_out is not None and not _own_file(raw, entry):
                    left_out(prefix + printable(raw))
            elif entry.is_dir(follow_symlinks=False):
                if is_plain(raw):
                    folders.append((raw, raw))
                else:
                    odd_folders.add(raw)
            elif entry.is_file(follow_symlinks=False):
                if skip_file is not None and skip_file(prefix + raw, entry):
                    passed.append(raw)
                elif is_plain(raw):
                    files.append((raw, entry))
                else:
                    odd_files[raw] = entry
            elif left_out is not None:  # a symbolic link, a FIFO, a socket
                left_out(prefix + printable(raw))
    if odd_files or odd_folders:
        plain = {name for name, _ in files} | {name for name, _ in folders}
        plain.update(raw for raw in passed if is_plain(raw))
        odd_passed = {raw for raw in passed if not is_plain(raw)}
        names = [*odd_files, *odd_folders, *odd_passed]
        reachable = reachable_names(names, plain, prefix)
        for raw, name in reachable.items():
            if raw in odd_folders:
                folders.append((name, raw))
            elif raw not in odd_passed:
                files.append((name, odd_files[raw]))
        if left_out is not None:
            for raw in sorted(set(odd_files).union(odd_folders).difference(reachable)):
                left_out(prefix + shown_apart(raw))
    files.sort(key=_first)
    folders.sort()
    return files, folders


def walk_files(
    top_fd: int,
    start: str,
    *,
    hidden_files: bool = False,
    skip_folder: Callable[[str], bool] | None = None,
    skip_file: SkipFile | None = None,
    folders: bool = False,
    any_length: Callable[[str], bool] | None = None,
    refused: Callable[[str], None] | None = None,
    left_out: LeftOut | None = None,
    max_depth: int | None = None,
    after: WalkKey | None = None,
    passed: Passed | None = None,
) -> Generator[FileEntry, None, None]:
    """Regular files below the open folder ``top_fd`` (vault path ``start``), sorted.

    The one walker of a vault: ``find``, ``grep``, the index's reconcile and the temp-file
    sweep all use it. ``skip_folder(name)`` prunes folders (the index skips ``*.assets``).
    With ``folders``, each subfolder is yielded too (``is_folder``), before its files.
    It yields only paths every tool accepts (``FileEntry.rel``, NFC; ``name`` is the
    entry as spelled on disk): names the sandbox refuses, folders deeper than
    ``MAX_DEPTH`` and paths longer than ``MAX_PATH_BYTES`` are skipped with a warning,
    but for a file whose name ``any_length`` passes: a write's temp file is up to 22
    bytes longer than its note's name, and the temp-file sweep must see it beside a note
    near the limit (its ``rel`` is then longer than a tool accepts). ``refused(path)``
    hears each subfolder the system does not let this process open or list (its
    permissions): the index keeps what it knew below such a folder. ``left_out(path)``
    hears each entry not yielded for any of these reasons, nor for being a dot-name, a
    symbolic link or a FIFO (not those ``skip_folder``/``skip_file`` pass over): a
    caller can tell a folder that looks empty from one that is. ``max_depth``: the walk
    lists no folder deeper than that many levels below ``start`` (a glob without ``**``
    matches nothing there). ``after`` (a ``cursor`` position): what sorts up to it is not
    yielded, and a folder wholly before it is not opened: ``passed`` hears the names of
    the files so passed over, and each such folder, for a caller's counts.

    Depth first, a folder's files before its subfolders, without recursion. Uses the
    directory entries' types (no ``stat`` per file); one descriptor is open per level
    below ``top_fd`` (closed here, even when the caller stops early), never one per
    sibling, and never more than ``MAX_DEPTH``.
    """
    prefix = start + "/" if start else ""
    frames: list[tuple[int, str, Iterator[tuple[str, str]], Step]] = []
    try:
        files, subfolders = list_folder(top_fd, prefix, hidden_files, skip_file, left_out)
        step = step_in(after, prefix)
        files = _cut(files, prefix, step, passed)
        yield from _usable(files, top_fd, prefix, any_length, left_out)
        frames.append((top_fd, prefix, iter(subfolders), step))
        while frames:
            fd, prefix, pending, step = frames[-1]
            name, raw = next(pending, ("", ""))
            if not name:
                frames.pop()
                if fd != top_fd:
                    os.close(fd)
                continue
            if skip_folder is not None and skip_folder(name):
                continue
            child_prefix = prefix + name + "/"
            if child_prefix.count("/") >= MAX_DEPTH or _size(child_prefix) >= MAX_PATH_BYTES:
                skipped(printable(child_prefix), _TOO_DEEP)
                if left_out is not None:
                    left_out(printable(child_prefix))
                continue
            if max_depth is not None and len(frames) >= max_depth:
                if folders:  # (a folder at the deepest level, not listed)
                    yield FileEntry(prefix + name, fd, None, is_folder=True)
                continue
            if step is not None and (1, name) < step:  # (wholly before the cursor)
                if passed is not None:
                    passed(child_prefix, None)
                continue
            try:
                child = fsops.open_dir(raw, fd)
            except (OSError, ForbiddenPathError) as err:
                if _kept_out(err):
                    _tell(refused, left_out, prefix + name)
                continue  # gone, or swapped for a link since the listing: skipped
            try:
                files, subfolders = list_folder(
                    child, child_prefix, hidden_files, skip_file, left_out
                )
            except OSError as err:
                os.close(child)
                if _kept_out(err):
                    _tell(refused, left_out, prefix + name)
                continue
            child_step = None if step is None else step_in(after, child_prefix)
            frames.append((child, child_prefix, iter(subfolders), child_step))
            if folders:
                yield FileEntry(prefix + name, fd, None, is_folder=True)
            files = _cut(files, child_prefix, child_step, passed)
            yield from _usable(files, child, child_prefix, any_length, left_out)
    finally:
        for fd, *_ in frames:
            if fd != top_fd:
                os.close(fd)


def _cut(
    files: list[tuple[str, os.DirEntry[str]]], prefix: str, step: Step, passed: Passed | None
) -> list[tuple[str, os.DirEntry[str]]]:
    """A folder's files (sorted by name) but those up to the cursor's ``step`` in it,
    found by bisection: no entry is made for them (``passed`` hears their names)."""
    if step is None:
        return files
    cut = len(files) if step[0] else bisect.bisect_right(files, step[1], key=_first)
    if passed is not None and cut:
        passed(prefix, [name for name, _ in files[:cut]])
    return files[cut:]


def _own_file(raw: str, entry: os.DirEntry[str]) -> bool:
    """A folder's own file, which its delete takes with it (``Place.remove_empty_folder``):
    only a regular file so named (a folder, a link or a FIFO so named stays)."""
    return raw in FOLDER_OWN_FILES and entry.is_file(follow_symlinks=False)


def _tell(refused: Callable[[str], None] | None, left_out: LeftOut | None, path: str) -> None:
    """A folder the system keeps this process out of: its caller's hooks hear it."""
    if refused is not None:
        refused(path)
    if left_out is not None:
        left_out(printable(path) + "/")


def _kept_out(err: Exception) -> bool:
    """Whether ``err`` is the system keeping this process out (not a folder gone)."""
    return isinstance(err, PermissionError)


_TOO_DEEP = (
    f"nothing in folders deeper than {MAX_DEPTH - 1} levels (or paths longer than"
    f" {MAX_PATH_BYTES} bytes) is listed"
)


def _usable(
    files: list[tuple[str, os.DirEntry[str]]],
    fd: int,
    prefix: str,
    any_length: Callable[[str], bool] | None,
    left_out: LeftOut | None = None,
) -> Iterator[FileEntry]:
    """The entries of one folder whose vault path a tool accepts (depth, length), and
    those ``any_length`` passes whatever their length (``left_out`` hears the others)."""
    if files and prefix.count("/") >= MAX_DEPTH:
        skipped(printable(prefix), _TOO_DEEP)
        if left_out is not None:
            for name, _ in files:
                left_out(printable(prefix + name))
        return
    used = _size(prefix)
    check = used + MAX_SEGMENT_BYTES > MAX_PATH_BYTES  # else every name fits
    for name, entry in files:
        if (
            check
            and used + _size(name) > MAX_PATH_BYTES
            and (any_length is None or not any_length(name))
        ):
            skipped(printable(prefix + name), f"the path is longer than {MAX_PATH_BYTES} bytes")
            if left_out is not None:
                left_out(printable(prefix + name))
            continue
        yield FileEntry(prefix + name, fd, entry)


def _size(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def _first(item: tuple[str, object]) -> str:
    return item[0]


def read_text_at(dir_fd: int, name: str, max_bytes: int, *, lossy: bool = False) -> str | None:
    """A regular file's UTF-8 text, or None (gone, a link or FIFO, too big, not text)."""
    try:
        fd = fsops.open_regular(name, dir_fd)
    except (OSError, ForbiddenPathError, ConflictError):  # conflict: a lease kept on it
        return None
    try:
        if os.fstat(fd).st_size > max_bytes:
            return None
        data = fsops.read_all(fd, max_bytes)
        if len(data) > max_bytes:
            return None
        return data.decode("utf-8", "replace" if lossy else "strict")
    except (OSError, UnicodeDecodeError):
        return None
    finally:
        os.close(fd)


def re2_options(*, literal: bool = False, case_sensitive: bool = True) -> re2.Options:
    options = re2.Options()
    options.literal = literal
    options.case_sensitive = case_sensitive
    options.log_errors = False
    options.max_mem = RE2_MAX_MEM
    return options


def _lines_holding(text: str, literal: str) -> Iterator[tuple[int, str]]:
    """(1-based line number, line text) of every line of ``text`` (split at "\n") that
    holds ``literal``; a literal spanning lines is in none."""
    if "\n" in literal:
        return
    found = text.find(literal)
    number, counted = 1, 0
    while found >= 0:
        number += text.count("\n", counted, found)
        start = text.rfind("\n", 0, found) + 1
        end = text.find("\n", found)
        if end < 0:
            end = len(text)
        yield number, _trimmed(text[start:end], found - start)
        counted = end
        found = text.find(literal, end + 1)


class LineMatcher:
    """Finds the lines of a text that match a pattern, in linear time."""

    def __init__(self, pattern: str, *, fixed: bool, ignore_case: bool) -> None:
        if not isinstance(pattern, str) or not pattern:
            raise InvalidArgumentError("the grep pattern must be a non-empty string")
        if len(pattern) > MAX_PATTERN_CHARS:
            raise InvalidArgumentError(f"the grep pattern is longer than {MAX_PATTERN_CHARS} chars")
        check_text("the grep pattern", pattern)  # (re2 reads UTF-8: it raised UnicodeEncodeError)
        pattern = composed(pattern)  # (as texts are read: canonical_lines)
        options = re2_options(literal=fixed, case_sensitive=not ignore_case)
        # A literal whose case matters is plain substring search, which str.find does
        # without splitting the text or entering re2 once per line.
        self._literal = pattern if fixed and not ignore_case else None
        try:
            self._line = re2.compile(pattern, options)
            if self._line.programsize > MAX_PROGRAM_SIZE:
                raise InvalidArgumentError(
                    "the grep pattern is too complex (make repeated parts such as"
                    " [\\p{L}]{500} or .{1000} shorter)"
                )
            # Whole-text pre-check, multi-line so ^ and $ hold at line edges; skipped when
            # the pattern could behave differently on a whole text (\A, \z, inline flags).
            prefilter = fixed or not any(tok in pattern for tok in ("\\A", "\\z", "(?"))
            self._text = (
                re2.compile(pattern if fixed else "(?m)" + pattern, options) if prefilter else None
            )
        except re2.error as err:
            reason = err.args[0] if err.args else ""
            if isinstance(reason, bytes):
                reason = reason.decode("utf-8", "replace")
            raise InvalidArgumentError(f"the grep pattern is not valid ({reason})") from None
        self._dotted = (
            dotted_i_matcher(pattern, fixed=fixed, options=options, whole_text=prefilter)
            if ignore_case or (not fixed and folds_case(pattern))
            else None
        )

    def matching_lines(self, text: str, deadline: float | None = None) -> Iterator[tuple[int, str]]:
        """(1-based line number, line text) for every matching line; ``TimeUp`` once
        ``deadline`` (``time.monotonic``) passes (a regex is tried line by line: a 4 MiB
        file of short lines took 10 s)."""
        text = as_lines(text)
        if self._literal is not None:
            yield from _lines_holding(text, self._literal)
            return
        dotted = self._dotted if self._dotted is not None and self._dotted.applies(text) else None
        folded = fold_dotted_i(text) if dotted is not None else text
        if (
            self._text is not None
            and self._text.search(text) is None
            and (dotted is None or dotted.text is None or dotted.text.search(folded) is None)
        ):
            return
        lines = text.split("\n")
        if not lines[-1]:
            lines.pop()  # after a final newline (or in an empty file) there is no line
        folded_lines = folded.split("\n") if dotted is not None else lines
        for number, line in enumerate(lines, start=1):
            if deadline is not None and number % 4096 == 0:
                if time.monotonic() > deadline:
                    raise TimeUp
                no_wait.stop_if_abandoned()
            hit = self._line.search(line)
            if hit is None and dotted is not None:
                hit = dotted.line.search(folded_lines[number - 1])  # (its places: near enough)
            if hit is not None:
                yield number, _trimmed(line, hit.start())


def as_lines(text: str) -> str:
    """A file's text as its lines are read: without a byte order mark, a CRLF line end
    as LF (a Windows file's lines ended in ``\r``, so ``here$`` matched none of them and
    ``^---`` missed a first line after a BOM). Line numbers stay the file's."""
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.replace("\r\n", "\n") if "\r\n" in text else text


class TimeUp(Exception):
    """A scan's deadline passed."""


def _trimmed(line: str, at: int = 0) -> str:
    """A matching line as grep shows it: its first ``MAX_LINE_CHARS`` characters, cut
    where a character as seen ends (not between a flag's halves or a letter's marks);
    a first character longer than that (a letter with 50,000 marks) is cut inside (it
    showed as ``""``). A match at ``at`` past them is shown from ``MATCH_LEAD``
    characters before it, "…" marking the skip (a long line showed its start, not the
    match: a note of one line of 1 MB)."""
    if len(line) <= MAX_LINE_CHARS:
        return line
    at = min(at, len(line))
    if at > MAX_LINE_CHARS - 2 * MATCH_LEAD:
        start = character_start(line, at - MATCH_LEAD)
        if at - start > 2 * MATCH_LEAD:  # (a letter under hundreds of marks: after it)
            start = character_end(line, at - MATCH_LEAD, at)
        line = "…" + line[start:]
        if len(line) <= MAX_LINE_CHARS:
            return line
    return line[: character_start(line, MAX_LINE_CHARS) or MAX_LINE_CHARS]
