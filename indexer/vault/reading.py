"""The read-only vault tools: ``read``, ``stat``, ``find`` and ``grep`` (and the
note counts by walking the vaults).

None of them takes a file lock or changes anything; each opens its target through
``Sandbox.open`` (by folder descriptors) and reads within ``max_file_bytes`` (but
``stat``, which hashes a file in chunks whatever its size: a file over the limit, made
by another program, can still be seen, moved and deleted). ``grep``
skips the files the index proves cannot match (``GrepPlan``; a file whose size or
mtime differ from what the index saw, or that the watcher saw change, is read anyway)
and stops, ``truncated``, past its
time or byte budget. Split from ``vault`` (the facade the tools call, which also holds
the writes) so that the read side is read in one place.
"""

from __future__ import annotations

import base64
import contextlib
import os
import stat as stat_mode
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from indexer.vault import canonical_lines, cursor, fsops, no_wait, timeline
from indexer.vault.body_sizes import BodySizes
from indexer.vault.contents import open_file, open_file_stat, read_bytes, text_lines
from indexer.vault.cursor_counts import Passed
from indexer.vault.digests import etag_of_file
from indexer.vault.globs import compile_glob, glob_depth
from indexer.vault.sandbox import FOLDER_ENDINGS, Place, Sandbox, Target
from indexer.vault.scan import (
    FileEntry,
    LineMatcher,
    Signature,
    SkipFile,
    TimeUp,
    read_text_at,
    signature,
    walk_files,
)
from indexer.vault.tempfiles import is_temp_name
from indexer.vault.unreachable import Unreachable
from shared.errors import ForbiddenPathError, InvalidArgumentError, VaultError
from shared.filetypes import NOTE_SUFFIX, is_text_name
from shared.memory_view import shown_size

if TYPE_CHECKING:
    from indexer.vault.vault import Vault

MAX_LIMIT = 10_000
GREP_MAX_SECONDS = 10.0
GREP_MAX_BYTES = 256 << 20
HEAD_MAX_BYTES = 64 * 1024  # the beginning of a file ``head`` gives at most
FIND_SIZES_MAX_SECONDS = 2.0  # measuring notes' bodies; the caller measures the rest
UNSEARCHED_SAMPLE = 5  # the files grep could not read named in its answer


class GrepPlan(Protocol):
    """What the index knows for ``grep``: files that may match, what it indexed, and
    (when the watcher knows) which indexed files may have changed since."""

    candidates: set[str]
    indexed: dict[str, Signature]
    changed: frozenset[str] | None


# (lang, pattern, fixed, ignore_case, deadline): the plan's optional narrowing stops at it
GrepPlanner = Callable[[str, str, bool, bool, float], GrepPlan | None]


def read(
    vault: Vault,
    lang: str,
    path: str,
    offset: int = 0,
    limit: int | None = None,
    version: int | None = None,
) -> dict:
    """A file's content (a slice of lines with offset/limit); ``version``: an older
    text from history (read-only; ``version`` is then in the result). A folder's summary
    (``.overview.md``) is read too: its versions, a hand edit among them, are history's."""
    target = vault._file_target(lang, path, summary=True)
    if not _is_count(offset) or (limit is not None and not _is_count(limit)):
        raise InvalidArgumentError("offset and limit must be whole numbers ≥ 0")
    result: dict[str, Any] = {"path": target.rel}
    if version is not None:
        no_wait.may_wait()  # (history's database, not one small file)
        data, row = timeline.version_bytes(vault, target, version)
        result.update(etag=row.etag, size=len(data), mtime=row.at_ms / 1000)
        result["version"] = row.version
    else:
        with vault.sandbox.open(target) as place:
            data, info = read_bytes(place, vault.max_file_bytes)
        result.update(etag=fsops.etag_of(data), size=info.st_size, mtime=info.st_mtime)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        if offset or limit is not None:
            raise InvalidArgumentError("offset/limit apply to text files only") from None
        result.update(content=base64.b64encode(data).decode("ascii"), encoding="base64")
        return result
    if offset or limit is not None:
        lines = text_lines(text)
        end = None if limit is None else offset + limit
        text = "".join(lines[offset:end])
    result.update(content=text, encoding="utf-8")
    return result


def head(vault: Vault, lang: str, path: str, max_bytes: int = HEAD_MAX_BYTES) -> dict:
    """The first ``max_bytes`` (at most ``HEAD_MAX_BYTES``) of a file, whatever its size:
    what a file over ``max_file_bytes`` (made by another program) begins with, which
    ``read`` refuses whole. ``truncated``: the file holds more. Text is cut before a
    character the cut would split; bytes that are not UTF-8 come as base64, as ``read``
    gives them. Read-only, no lock, never more than ``HEAD_MAX_BYTES`` in memory."""
    target = vault._file_target(lang, path, summary=True)
    if not _is_count(max_bytes) or not 1 <= max_bytes <= HEAD_MAX_BYTES:
        raise InvalidArgumentError(f"bytes must be between 1 and {HEAD_MAX_BYTES}")
    with vault.sandbox.open(target) as place:
        fd, info = open_file_stat(place)
        with fsops.opened(fd):
            data = fsops.read_all(fd, max_bytes, info.st_size)
    truncated = len(data) > max_bytes
    data = data[:max_bytes]
    result: dict[str, Any] = {"path": target.rel, "size": info.st_size, "truncated": truncated}
    result["max_file_bytes"] = vault.max_file_bytes
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if not (truncated and exc.reason == "unexpected end of data"):
            result.update(content=base64.b64encode(data).decode("ascii"), encoding="base64")
            return result
        text = data[: exc.start].decode("utf-8")  # (a character the cut split)
    result.update(content=text, encoding="utf-8")
    return result


def stat(vault: Vault, lang: str, path: str) -> dict:
    """What a path is, with a file's size and etag; no size limit: a file over
    ``max_file_bytes`` (made by another program) must be seen to be moved or deleted."""
    target = vault.sandbox.resolve(lang, path, allow_root=True, summary=True)
    with vault.sandbox.open(target) as place:
        info = place.lstat()
        if info is None:
            return _stat_result(target, None, None, None)
        if stat_mode.S_ISDIR(info.st_mode):
            return _stat_result(target, "dir", info, None)
        if target.dir_only:
            raise ForbiddenPathError(
                f"{target.rel!r} is a file; a path ending in {FOLDER_ENDINGS} names a folder"
            )
        if info.st_size > vault.max_file_bytes:
            no_wait.may_wait()  # (hashed whole: seconds for a file of GiB)
        etag, info = file_etag(place)
    return _stat_result(target, "file", info, etag)


def file_etag(place: Place) -> tuple[str, os.stat_result]:
    """A regular file's etag (as ``read`` gives it) and stat, hashed in chunks whatever
    its size; refuses a folder or a missing file as ``read_bytes`` does."""
    fd = open_file(place)
    with fsops.opened(fd):
        return etag_of_file(fd), os.fstat(fd)


def find(
    vault: Vault,
    lang: str,
    pattern: str = "**/*.md",
    path: str = "",
    limit: int = 200,
    dirs: bool = False,
    sizes: bool = False,
    after: str | None = None,
    paged: bool = False,
) -> dict:
    """Files below ``path`` whose path (relative to it) matches ``pattern``; with
    ``dirs``, matching folders too, each with a trailing ``/`` (empty ones included).

    With ``sizes``, also ``sizes`` (each file's bytes) and ``body_sizes`` (each UTF-8
    note's body as the memory tool shows it, ``shared.memory_view``; not for a note over
    ``max_file_bytes``): a memory listing then needs one call, not a read of every note.
    A body measured is kept (``body_sizes.BodySizes``) until its file changes; the notes
    not measured within ``find_sizes_max_seconds`` have no size, as a file gone (or
    turned into a folder) since the walk saw it: the caller measures them itself.

    With ``dirs``, also ``unlisted``: how many entries below ``path`` no tool can reach
    (dot-names, names the vault refuses, links, folders too deep; whatever the pattern,
    as far as the walk went), and ``unlisted_sample``, the first few of them (printable):
    a folder that lists empty may still hold files another program made.

    Pages (``cursor``): ``after`` lists only what the walk finds after that path. With
    ``paged`` (the REST route), also ``total`` (every match, the ones before ``after``
    too) when the walk reached the end, and ``next_after`` (the last path listed) when
    more remain."""
    check_limit(limit)
    regex = compile_glob(pattern)
    target = vault.sandbox.resolve(lang, path, allow_root=True)
    start = cursor.check_after(after, target.rel)
    past = None if start is None else cursor.after_key(start)
    before = 0  # matches the cursor passed over
    # Without ``dirs``, the walk itself passes over what sorts before the cursor (a later
    # page costs what the first does); their matches are counted only for ``total``, on
    # the last page. (With ``dirs`` every entry is walked: ``unlisted`` counts them all.)
    skipped = Passed()
    paths: list[str] = []
    truncated = False
    measured = _Measured(vault.body_sizes, time.monotonic() + vault.find_sizes_max_seconds)
    # (a write's temp file is there for a moment: a memory folder's delete was refused
    # while a summary was being written into it)
    unlisted = Unreachable(is_temp_name)
    with vault.sandbox.open(target) as place:
        top = place.walk_start()
        if top is not None:
            walk = walk_files(
                top,
                target.rel,
                folders=dirs,
                left_out=unlisted.add if dirs else None,
                max_depth=glob_depth(pattern),
                after=None if dirs else past,
                passed=skipped.add,
            )
            with contextlib.closing(walk) as entries:
                for entry in entries:
                    no_wait.stop_if_abandoned()
                    if regex.fullmatch(below(entry.rel, target.rel)):
                        if dirs and past and cursor.walk_key(entry.rel, entry.is_folder) <= past:
                            before += 1
                            continue
                        if len(paths) == limit:
                            truncated = True
                            break
                        paths.append(entry.rel + "/" if entry.is_folder else entry.rel)
                        if sizes and not entry.is_folder:
                            measured.add(entry, vault.max_file_bytes)
    result: dict[str, Any] = {"paths": paths, "truncated": truncated}
    if paged and truncated:
        result["next_after"] = paths[-1]
    elif paged:
        before += skipped.matches(vault, target, regex, glob_depth(pattern))
        result["total"] = before + len(paths)
    if sizes:
        result.update(sizes=measured.sizes, body_sizes=measured.body_sizes)
    if dirs:
        result.update(unlisted=unlisted.count, unlisted_sample=unlisted.sample)
    return result


class _Measured:
    """``find``'s sizes: each file's bytes, and each note's body as the memory tool
    shows it: read now (right for a note just edited by another program), or known from
    ``known`` when the file is the one measured before. Past ``deadline`` a note not
    known is left out of both (the caller measures it itself): a call's YAML parsing is
    bounded, however many large blocks other programs wrote."""

    def __init__(self, known: BodySizes, deadline: float) -> None:
        self.sizes: dict[str, int] = {}
        self.body_sizes: dict[str, int] = {}
        self._known = known
        self._deadline = deadline

    def add(self, entry: FileEntry, max_bytes: int) -> None:
        try:
            if not entry.rel.endswith(NOTE_SUFFIX):
                assert entry.entry is not None, "a file has its directory entry"
                self.sizes[entry.rel] = entry.entry.stat(follow_symlinks=False).st_size
                return
            fd = fsops.open_regular(entry.name, entry.dir_fd)
        except (OSError, VaultError):  # gone, now a folder, or may not be read (a person's
            return  # chmod): no size, as a plain find lists it (it failed the whole call)
        with fsops.opened(fd):
            try:
                measured = self._note(fd, max_bytes)
            except OSError:  # (a read the disk refused)
                return
        if measured is None:
            return  # no size: the caller measures this note itself
        self.sizes[entry.rel], body = measured
        if body is not None:
            self.body_sizes[entry.rel] = body

    def _note(self, fd: int, max_bytes: int) -> tuple[int, int | None] | None:
        """(bytes, body's bytes or None) of the open note; None past the deadline."""
        before = os.fstat(fd)
        if before.st_size > max_bytes:
            return before.st_size, None  # too large to read: shown by its size on disk
        known, body = self._known.get(before)
        if known:
            return before.st_size, body
        if time.monotonic() >= self._deadline:
            return None
        data = fsops.read_all(fd, max_bytes, before.st_size)
        after = os.fstat(fd)
        if len(data) > max_bytes:  # it grew since
            return after.st_size, None
        body = _body_size(data)
        self._known.keep(before, after, body)
        return len(data), body


def _body_size(data: bytes) -> int | None:
    """A note's body's bytes as the memory tool shows it; None when it is not UTF-8 (the
    tool shows its size on disk)."""
    try:
        return shown_size(data.decode("utf-8"))
    except UnicodeDecodeError:
        return None


def grep(
    vault: Vault,
    lang: str,
    pattern: str,
    path: str = "",
    glob: str = "**/*.md",
    fixed: bool = False,
    ignore_case: bool = False,
    limit: int = 100,
    *,
    deadline: float | None = None,
) -> dict:
    """``deadline`` (``time.monotonic``) ends the scan (``truncated``); by default
    ``grep_max_seconds`` from now (a caller that queued the call passes its start).

    A ``path`` naming a file searches it alone, whatever the glob (as ``rg`` does).

    A text file the glob chose but too large to read (past ``MAX_SEARCHED_BYTES``) is
    counted in ``unsearched`` and the first few named in ``unsearched_sample`` (both
    only when there is one): "no match" from a grep that never read a big log was
    trusted."""
    check_limit(limit)
    matcher = LineMatcher(pattern, fixed=fixed, ignore_case=ignore_case)
    regex = compile_glob(glob)
    target = vault.sandbox.resolve(lang, path, allow_root=True)
    matches: list[dict] = []
    unsearched = Unsearched()
    with vault.sandbox.open(target) as place:
        if deadline is None:
            deadline = time.monotonic() + vault.grep_max_seconds
        info = place.lstat() if target.rel else None
        if info is not None and stat_mode.S_ISREG(info.st_mode):
            assert place.dir_fd is not None, "a file found has its folder"
            bound = max(vault.max_file_bytes, fsops.MAX_SEARCHED_BYTES)
            text_name = is_text_name(target.name)
            text = read_text_at(place.dir_fd, place.name, bound, lossy=text_name)
            if text is None:
                if text_name and info.st_size > bound:
                    unsearched.add(target.rel)
                return unsearched.told({"matches": matches, "truncated": False})
            complete = _add_matches(matcher, text, target.rel, matches, limit, deadline)
            return unsearched.told({"matches": matches, "truncated": not complete})
        top = place.walk_start()
        if top is None:
            return unsearched.told({"matches": matches, "truncated": False})
        planner = vault.grep_planner
        plan = planner(lang, pattern, fixed, ignore_case, deadline) if planner else None
        scanned = 0
        skip = _vouched(plan) if plan is not None else None
        walk = walk_files(top, target.rel, skip_file=skip, max_depth=glob_depth(glob))
        with contextlib.closing(walk) as entries:
            for entry in entries:
                if not regex.fullmatch(below(entry.rel, target.rel)):
                    continue
                if plan is not None and entry.rel not in plan.candidates:
                    indexed = plan.indexed.get(entry.rel)
                    if indexed is not None and indexed == _signature(entry):
                        continue
                if scanned > vault.grep_max_bytes or time.monotonic() > deadline:
                    return unsearched.told({"matches": matches, "truncated": True})
                no_wait.stop_if_abandoned()
                # A note or text file with bytes that are not UTF-8 is searched as the
                # index has it (U+FFFD for them), as far as search reads it (past the
                # size limit too: search found what grep said was nowhere); an image never.
                bound = max(vault.max_file_bytes, fsops.MAX_SEARCHED_BYTES)
                text_name = is_text_name(entry.name)
                text = entry.read_text(bound, lossy=text_name)
                if text is None:
                    if text_name and _size(entry) > bound:
                        unsearched.add(entry.rel)
                    continue
                scanned += len(text)
                if not _add_matches(matcher, text, entry.rel, matches, limit, deadline):
                    return unsearched.told({"matches": matches, "truncated": True})
    return unsearched.told({"matches": matches, "truncated": False})


def _add_matches(
    matcher: LineMatcher, text: str, rel: str, matches: list[dict], limit: int, deadline: float
) -> bool:
    """Add ``text``'s matching lines (file ``rel``); False when cut short (truncated)."""
    try:
        for number, line in canonical_lines.matching_lines(matcher, text, deadline):
            if len(matches) == limit:
                return False
            matches.append({"path": rel, "line": number, "text": line})
    except TimeUp:  # within one file of many lines
        return False
    return True


class Unsearched:
    """``grep``'s text files too large to read: how many, and the first few paths."""

    def __init__(self) -> None:
        self.count = 0
        self.sample: list[str] = []

    def add(self, rel: str) -> None:
        self.count += 1
        if len(self.sample) < UNSEARCHED_SAMPLE:
            self.sample.append(rel)

    def told(self, result: dict) -> dict:
        """``result`` with ``unsearched`` and ``unsearched_sample`` when there are any."""
        if self.count:
            result.update(unsearched=self.count, unsearched_sample=self.sample)
        return result


def note_counts(sandbox: Sandbox) -> dict[str, int]:
    """Notes per lang by walking the vaults (the index gives this faster)."""
    counts: dict[str, int] = {}
    for lang in sandbox.workspace.langs():
        with contextlib.ExitStack() as stack:
            fd = sandbox.open_root(lang, stack)
            if fd is not None:
                counts[lang] = sum(1 for e in walk_files(fd, "") if e.rel.endswith(".md"))
    return counts


def _vouched(plan: GrepPlan) -> SkipFile:
    """Whether the index vouches that a file holds no match: not a candidate, and with
    the size, mtime and ctime it had when indexed (a file changed since is read). When the
    watcher knows which files changed (``plan.changed``), the others need no stat: the
    stat of every file was most of a grep's time."""
    candidates, indexed, changed = plan.candidates, plan.indexed, plan.changed
    if changed is not None:

        def unchanged(rel: str, entry: os.DirEntry[str]) -> bool:
            return rel in indexed and rel not in candidates and rel not in changed

        return unchanged

    def skip(rel: str, entry: os.DirEntry[str]) -> bool:
        seen = indexed.get(rel)
        if seen is None or rel in candidates:
            return False
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            return False
        return signature(info) == seen

    return skip


def _size(entry: FileEntry) -> int:
    """The file's size now (0 when gone)."""
    try:
        return entry.signature()[0]
    except OSError:
        return 0


def _signature(entry: Any) -> Signature | None:
    try:
        return entry.signature()  # type: ignore[no-any-return]
    except OSError:
        return None


def _stat_result(
    target: Target, kind: str | None, info: os.stat_result | None, etag: str | None
) -> dict:
    return {
        "path": target.rel,
        "exists": kind is not None,
        "type": kind,
        "size": info.st_size if info is not None and kind == "file" else None,
        "mtime": info.st_mtime if info is not None else None,
        "etag": etag,
    }


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def check_limit(limit: int) -> None:
    """A listing's ``limit`` (find, grep, the page's folder view): 1 to ``MAX_LIMIT``."""
    if not _is_count(limit) or not 1 <= limit <= MAX_LIMIT:
        raise InvalidArgumentError(f"limit must be between 1 and {MAX_LIMIT}")


def below(rel: str, start: str) -> str:
    """``rel`` relative to the walk's start folder (what globs are matched against)."""
    return rel[len(start) + 1 :] if start else rel
