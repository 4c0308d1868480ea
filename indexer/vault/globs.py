"""Globs for ``find`` and ``grep``: compiled once, matched in linear time (RE2), and how
deep a walk must go for one.

A name may hold ``[``, ``]``, ``{``, ``}`` and ``,`` (``notes [draft]/a.md``), which a
glob reads as a class or alternatives; never ``\\``, ``*`` or ``?``, which the vault
refuses in names. So a glob's ``\\`` escapes the next character, as in ``rg --glob``
(``notes \\[draft\\]/*.md``), and a glob that spells a path letter for letter matches
that path too (``notes [draft]/a.md``, as an agent passes a path it was given): neither
takes a match from any other glob.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

import re2

from indexer.vault.scan import re2_options
from shared.errors import ForbiddenPathError, InvalidArgumentError
from shared.path_names import unseen
from shared.utf8 import check_text

MAX_GLOB_CHARS = 500
_GLOB_SPECIAL = frozenset("\\.+()|{}^$#&~- \t\n\r\v\f")


def _alternatives(pattern: str, start: int) -> tuple[list[str], int] | None:
    """The alternatives of the ``{a,b}`` opening at ``start`` and the index of its
    ``}``, or None when that ``{`` opens none (no closing brace, or no comma at its own
    level: ``{1}`` is the text it spells, as in a shell)."""
    depth, last, parts = 0, start + 1, []
    escaped = False
    for i in range(start + 1, len(pattern)):
        char = pattern[i]
        if escaped or char == "\\":
            escaped = not escaped
        elif char == "{":
            depth += 1
        elif char == "}" and depth:
            depth -= 1
        elif char == "}":
            parts.append(pattern[last:i])
            return (parts, i) if len(parts) > 1 else None
        elif char == "," and not depth:
            parts.append(pattern[last:i])
            last = i + 1
    return None


def has_alternatives(pattern: str) -> bool:
    """Whether ``pattern`` holds a ``{a,b}`` alternation."""
    return any(
        c == "{" and not _escaped(pattern, i) and _alternatives(pattern, i)
        for i, c in enumerate(pattern)
    )


def _escaped(pattern: str, at: int) -> bool:
    """Whether the character at ``at`` follows an odd run of ``\\``."""
    run = len(pattern[:at]) - len(pattern[:at].rstrip("\\"))
    return run % 2 == 1


def _glob_regex(pattern: str) -> str:
    """Translate a glob: ``**/`` spans folders, ``**`` anything, ``*``/``?`` one segment,
    ``{a,b}`` either (as ``rg --glob`` and agents' glob tools read it: ``**/*.{md,txt}``),
    ``\\x`` the character ``x``."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            out.append(_literal(pattern[i + 1]))
            i += 2
            continue
        if char == "{" and (found := _alternatives(pattern, i)) is not None:
            parts, i = found
            out.append("(?:" + "|".join(_glob_regex(part) for part in parts) + ")")
            i += 1
            continue
        if char == "*":
            run = len(pattern) - i - len(pattern[i:].lstrip("*"))
            i += run
            if run >= 2 and pattern.startswith("/", i):
                token, i = "(?:[^/]+/)*", i + 1
            else:
                token = ".*" if run >= 2 else "[^/]*"
            # ``**/**/`` is ``**/``, and ``*`` right after ``**`` adds nothing.
            last = out[-1] if out else ""
            if last != token and not (token == "[^/]*" and last == ".*"):
                out.append(token)
            continue
        if char == "?":
            out.append("[^/]")
        elif char == "[" and (end := pattern.find("]", i + 2)) != -1:
            body = pattern[i + 1 : end].replace("\\", "\\\\")
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append(f"[{body}]")
            i = end
        else:
            out.append(_literal(char))
        i += 1
    return "".join(out)


def _literal(char: str) -> str:
    """``char`` as RE2 reads it as itself."""
    return "\\" + char if char in _GLOB_SPECIAL or char in "[]*?" else char


class SuffixGlob:
    """``**/*<suffix>`` or ``*<suffix>`` (the usual ``**/*.md``) as a plain string test.

    Calling RE2 from Python costs ~13 µs a path, most of a 100k-file grep's time; this
    shape needs only ``endswith`` (the suffix has no wildcard and no ``/``).
    """

    def __init__(self, suffix: str, any_folder: bool) -> None:
        self.suffix = suffix
        self.any_folder = any_folder

    def fullmatch(self, path: str) -> bool:
        return path.endswith(self.suffix) and (self.any_folder or "/" not in path)


class SpelledGlob:
    """A glob holding ``[`` or ``{`` that may also spell a path: its matches (``glob``;
    None when it is no valid glob), and the path it spells."""

    def __init__(self, glob: re2._Regexp | None, spelled: str) -> None:
        self.glob = glob
        self.spelled = spelled

    def fullmatch(self, path: str) -> bool:
        if path == self.spelled:
            return True
        return self.glob is not None and self.glob.fullmatch(path) is not None


@lru_cache(maxsize=256)
def compile_glob(pattern: str) -> re2._Regexp | SuffixGlob | SpelledGlob:
    """A compiled glob; use ``.fullmatch(path)`` (RE2: linear whatever the pattern)."""
    if not isinstance(pattern, str) or not pattern or len(pattern) > MAX_GLOB_CHARS:
        raise InvalidArgumentError(
            f"the glob pattern must be a non-empty string of ≤ {MAX_GLOB_CHARS} chars"
        )
    # (RE2 reads UTF-8: a lone surrogate raised UnicodeEncodeError, or matched nothing)
    check_text("the glob pattern", pattern)
    # The paths it is matched against are NFC (as the tools name them): a pattern typed
    # or copied in NFD (macOS) found nothing.
    pattern = unicodedata.normalize("NFC", tidy(pattern))
    if not pattern:
        raise InvalidArgumentError("the glob pattern names no file (give e.g. '**/*.md')")
    for prefix, any_folder in (("**/*", True), ("*", False)):
        suffix = pattern[len(prefix) :]
        if pattern.startswith(prefix) and not any(c in suffix for c in "*?[/{\\"):
            return SuffixGlob(suffix, any_folder)
    # (no name holds ``* ? \\``: a pattern with one spells no path)
    spells_a_name = ("[" in pattern or "{" in pattern) and not any(c in pattern for c in "*?\\")
    try:
        glob = re2.compile(_glob_regex(pattern), re2_options())
    except re2.error:
        if spells_a_name:  # (``notes [z-a].md``: no glob, but a name)
            return SpelledGlob(None, pattern)
        raise InvalidArgumentError(f"the glob pattern {pattern!r} is not valid") from None
    return SpelledGlob(glob, pattern) if spells_a_name else glob


@lru_cache(maxsize=256)
def tidy(pattern: str) -> str:
    """``pattern`` without a leading ``./``, with ``//`` as ``/`` and ``name/..`` as
    nothing: harmless spellings in a glob as in a path (SPEC: ``./a.md`` is ``a.md``,
    ``a//b.md`` is ``a/b.md``). The walk's paths never start so nor hold ``//``:
    ``./items/*.md`` found nothing. A glob that would leave the folder searched is
    refused (``forbidden_path``), as such a path is: ``../*`` and ``/etc/*`` answered an
    empty list, which a caller could not tell from "nothing there"."""
    while "//" in pattern:  # (first: ``.//a`` is ``./a``, not ``/a``)
        pattern = pattern.replace("//", "/")
    while pattern.startswith("./"):
        pattern = pattern[2:]
    return _steps_back(pattern)


def _spelled(segment: str) -> str:
    """``segment`` with each ``\\x`` read as ``x`` (``\\.\\.`` spells ``..``)."""
    out, escaped = [], False
    for char in segment:
        if char == "\\" and not escaped:
            escaped = True
            continue
        out.append(char)
        escaped = False
    return "".join(out)


def _steps_back(pattern: str) -> str:
    """``pattern`` with each ``.`` and ``name/..`` taken out, as a path reads them
    (``a/./b.md`` is ``a/b.md``); ``ForbiddenPathError`` for a glob that starts above
    the folder searched (``/``, ``~``, a ``..`` past its top), and
    ``InvalidArgumentError`` for a ``..`` after a wildcard (``*/..``, ``{a/b,c}/..``: no
    one folder)."""
    for char in pattern:
        _check_char(char)
    _check_alternatives(pattern)
    spelled = _spelled(pattern)
    if spelled.startswith("/"):
        raise ForbiddenPathError(
            "the glob pattern must be relative to the folder searched, not start with '/'"
            " (give the folder as path)"
        )
    if spelled.startswith("~"):
        raise ForbiddenPathError(
            "the glob pattern must be relative to the folder searched, not start with '~'"
            " (a shell reads a home folder)"
        )
    segments = pattern.split("/")
    if not any(_spelled(segment) in (".", "..") for segment in segments):
        return pattern
    wild = _wild_spans(pattern)
    kept: list[tuple[int, str]] = []  # (where in ``pattern`` it starts, the segment)

    def after_wildcard() -> bool:
        where, name = kept[-1]
        return any(first < where + len(name) and last >= where for first, last in wild)

    start = 0
    for index, segment in enumerate(segments):
        at, start = start, start + len(segment) + 1
        step = _spelled(segment)
        if step == "." and (index < len(segments) - 1 or not kept or not after_wildcard()):
            continue  # (a last ``*/.`` names folders alone: kept, as it was, for no file)
        if step != "..":
            kept.append((at, segment))
        elif not kept:
            raise ForbiddenPathError(
                "the glob pattern leaves the folder searched (a '..' above it);"
                " give the folder as path instead"
            )
        elif after_wildcard():
            raise InvalidArgumentError(
                "a '..' in the glob pattern may follow only a folder's name spelled"
                f" out, not {_spelled(kept[-1][1])!r}"
            )
        else:
            kept.pop()
    return "/".join(segment for _, segment in kept)


def _wild_spans(pattern: str) -> list[tuple[int, int]]:
    """Where ``pattern`` matches more than the text it spells, as ``_glob_regex`` reads
    it: each ``*`` and ``?``, each ``[...]`` class and ``{a,b}`` alternatives (first
    and last index). A ``{`` or ``[`` that opens none is a name's letter (``notes {x}``)."""
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        end = i
        if char == "\\":
            i += 2
            continue
        if char in "*?":
            spans.append((i, i))
        elif char == "{" and (found := _alternatives(pattern, i)) is not None:
            end = found[1]
            spans.append((i, end))
        elif char == "[" and (close := pattern.find("]", i + 2)) != -1:
            end = close
            spans.append((i, end))
        i = end + 1
    return spans


def glob_depth(pattern: str) -> int | None:
    """How many folder levels deep every path ``pattern`` matches lies (``*.md``: 1,
    ``*/*``: 2), or None when it may match at any depth (``**``, a bracket that may
    hold ``/``, alternatives of other depths)."""
    pattern = tidy(pattern)
    if "**" in pattern or "[" in pattern or has_alternatives(pattern):
        return None
    return pattern.count("/") + 1


def _check_char(char: str) -> None:
    """``ForbiddenPathError`` for a character no name the tools reach holds, as a path
    holding it is refused (``a\\x00b``, ``\\u202e*.md`` answered an empty list)."""
    kind = unseen(char)
    if kind is not None:
        raise ForbiddenPathError(
            f"the glob pattern contains the {kind} character U+{ord(char):04X}, which no name holds"
        )


def _check_alternatives(pattern: str) -> None:
    """Refuse ``{a,b}`` alternatives that would reach out (``{/etc/*,x}``: forbidden) or
    step back (``{../*,x}``: a ``..`` is read only as a folder of its own, not inside
    alternatives); both answered an empty list."""
    for i, char in enumerate(pattern):
        if char != "{" or _escaped(pattern, i):
            continue
        found = _alternatives(pattern, i)
        if found is None:
            continue
        for part in found[0]:
            spelled = _spelled(part)
            if not pattern[:i].strip("{") and spelled.startswith(("/", "~")):
                raise ForbiddenPathError(
                    "the glob pattern must be relative to the folder searched: an"
                    f" alternative starts with {spelled[0]!r} (give the folder as path)"
                )
            if any(_spelled(segment) == ".." for segment in part.split("/")):
                raise ForbiddenPathError(
                    "the glob pattern holds a '..' inside {…} alternatives, which may leave the"
                    " folder searched: spell each path out, or give the folder as path"
                )
