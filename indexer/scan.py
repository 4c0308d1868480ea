"""Walking a vault for ``find`` and ``grep``: glob matching and linear-time line search.

Regular expressions go through RE2 (``google-re2``), whose matching time is linear in
the input whatever the pattern, so a pattern like ``(a+)+$`` cannot stall the server.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import re2

from shared.errors import InvalidArgumentError

MAX_PATTERN_CHARS = 2000
MAX_LINE_CHARS = 500


@dataclass(frozen=True, slots=True)
class FileEntry:
    """A regular file found by a walk: vault-relative path, real path, and a lazy ``lstat``."""

    rel: str
    path: str
    entry: os.DirEntry[str]

    def signature(self) -> tuple[int, int]:
        """(size, mtime_ns), what the index compares; one ``lstat``, cached by DirEntry."""
        info = self.entry.stat(follow_symlinks=False)
        return info.st_size, info.st_mtime_ns


def walk_files(root: Path, start: str) -> Iterator[FileEntry]:
    """Regular files below ``root/start`` in sorted order, skipping dot-names and links.

    Uses the directory entries' types (no ``stat`` per file) and plain strings: a walk of
    100k files costs about what ``os.scandir`` itself costs.
    """
    stack = [(os.path.join(root, start) if start else str(root), start + "/" if start else "")]
    while stack:
        folder, prefix = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted((e for e in it if not e.name.startswith(".")), key=_name)
        except (FileNotFoundError, NotADirectoryError):
            continue
        subfolders = []
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                subfolders.append((entry.path, prefix + entry.name + "/"))
            elif entry.is_file(follow_symlinks=False):
                yield FileEntry(prefix + entry.name, entry.path, entry)
        stack.extend(reversed(subfolders))


def _name(entry: os.DirEntry[str]) -> str:
    return entry.name


def read_text_nofollow(path: str, max_bytes: int) -> str | None:
    """A regular file's UTF-8 text, or None (gone, replaced by a link, too big, not text)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > max_bytes:
            return None
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read(max_bytes + 1).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    finally:
        os.close(fd)


@lru_cache(maxsize=256)
def compile_glob(pattern: str) -> re.Pattern[str]:
    """Translate a glob (``**`` spans folders, ``*``/``?`` stay in one segment) to a regex."""
    if not isinstance(pattern, str) or not pattern or len(pattern) > 500:
        raise InvalidArgumentError("the glob pattern must be a non-empty string of ≤ 500 chars")
    out: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:[^/]+/)*")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = pattern.find("]", i + 2)
            if end == -1:
                out.append(re.escape(char))
            else:
                body = pattern[i + 1 : end].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = end
        else:
            out.append(re.escape(char))
        i += 1
    try:
        return re.compile("".join(out) + r"\Z")
    except re.error:
        raise InvalidArgumentError(f"the glob pattern {pattern!r} is not valid") from None


class LineMatcher:
    """Finds the lines of a text that match a pattern, in linear time."""

    def __init__(self, pattern: str, *, fixed: bool, ignore_case: bool) -> None:
        if not isinstance(pattern, str) or not pattern:
            raise InvalidArgumentError("the grep pattern must be a non-empty string")
        if len(pattern) > MAX_PATTERN_CHARS:
            raise InvalidArgumentError(f"the grep pattern is longer than {MAX_PATTERN_CHARS} chars")
        options = re2.Options()
        options.literal = fixed
        options.case_sensitive = not ignore_case
        options.log_errors = False
        options.max_mem = 32 << 20
        try:
            self._line = re2.compile(pattern, options)
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

    def matching_lines(self, text: str) -> Iterator[tuple[int, str]]:
        """(1-based line number, line text) for every matching line."""
        if self._text is not None and self._text.search(text) is None:
            return
        for number, line in enumerate(text.split("\n"), start=1):
            if self._line.search(line) is not None:
                yield number, line[:MAX_LINE_CHARS]
