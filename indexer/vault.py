"""The vault tools' behaviour, independent of MCP: read, write, stat, append, find, grep, delete.

Every method checks its whole input before touching the disk, so a refusal (a
``VaultError``) changes nothing. Writes, appends and deletes of one file are serialized
by a per-file lock (the tools run in a thread pool); after each change the listeners
(the index) are told synchronously, so a search right after a write finds it.
"""

from __future__ import annotations

import base64
import binascii
import os
import shutil
import stat
import threading
import weakref
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import PurePosixPath
from typing import Any, Protocol

from indexer.sandbox import Sandbox, Target, open_nofollow
from indexer.scan import LineMatcher, compile_glob, read_text_nofollow, walk_files
from indexer.storage import (
    append_bytes,
    atomic_write,
    etag_of,
    make_parents,
    refuse_hard_links,
)
from shared.errors import (
    ConflictError,
    ForbiddenPathError,
    InvalidArgumentError,
    NotFoundError,
    TooLargeError,
)
from shared.frontmatter import normalize_frontmatter_text

ChangeListener = Callable[[str, str], None]
Clock = Callable[[], datetime]
MAX_LIMIT = 10_000
IMAGE_MAGIC: dict[str, tuple[bytes, ...]] = {
    ".png": (b"\x89PNG\r\n\x1a\n",),
    ".jpg": (b"\xff\xd8\xff",),
    ".jpeg": (b"\xff\xd8\xff",),
    ".gif": (b"GIF87a", b"GIF89a"),
    ".webp": (b"RIFF",),
    ".bmp": (b"BM",),
    ".avif": (b"\x00\x00\x00",),
}


class GrepPlan(Protocol):
    """What the index knows for ``grep``: files that may match, and what it indexed."""

    candidates: set[str]
    indexed: dict[str, tuple[int, int]]


GrepPlanner = Callable[[str, str, bool, bool], GrepPlan | None]


class Vault:
    """The tools' logic over every lang's vault of one workspace."""

    def __init__(self, sandbox: Sandbox, *, max_file_bytes: int, clock: Clock | None = None):
        self.sandbox = sandbox
        self.max_file_bytes = max_file_bytes
        self.clock: Clock = clock or (lambda: datetime.now(UTC))
        self.listeners: list[ChangeListener] = []
        self.grep_planner: GrepPlanner | None = None
        self._locks: weakref.WeakValueDictionary[tuple[str, str], threading.Lock] = (
            weakref.WeakValueDictionary()
        )
        self._locks_guard = threading.Lock()

    # -- reading -------------------------------------------------------------------

    def read(self, lang: str, path: str, offset: int = 0, limit: int | None = None) -> dict:
        target = self.sandbox.resolve(lang, path)
        if offset < 0 or (limit is not None and limit < 0):
            raise InvalidArgumentError("offset and limit must be ≥ 0")
        data, info = self._read_bytes(target)
        result: dict[str, Any] = {
            "path": target.rel,
            "etag": etag_of(data),
            "size": info.st_size,
            "mtime": info.st_mtime,
        }
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            if offset or limit is not None:
                raise InvalidArgumentError("offset/limit apply to text files only") from None
            result.update(content=base64.b64encode(data).decode("ascii"), encoding="base64")
            return result
        if offset or limit is not None:
            lines = text.splitlines(keepends=True)
            end = None if limit is None else offset + limit
            text = "".join(lines[offset:end])
        result.update(content=text, encoding="utf-8")
        return result

    def stat(self, lang: str, path: str) -> dict:
        target = self.sandbox.resolve(lang, path, allow_root=True)
        try:
            info = os.lstat(target.abs)
        except FileNotFoundError:
            return {
                "path": target.rel,
                "exists": False,
                "type": None,
                "size": None,
                "mtime": None,
                "etag": None,
            }
        if stat.S_ISDIR(info.st_mode):
            return {
                "path": target.rel,
                "exists": True,
                "type": "dir",
                "size": None,
                "mtime": info.st_mtime,
                "etag": None,
            }
        data, info = self._read_bytes(target)
        return {
            "path": target.rel,
            "exists": True,
            "type": "file",
            "size": info.st_size,
            "mtime": info.st_mtime,
            "etag": etag_of(data),
        }

    def find(self, lang: str, pattern: str = "**/*.md", path: str = "", limit: int = 200) -> dict:
        _check_limit(limit)
        regex = compile_glob(pattern)
        target = self.sandbox.resolve(lang, path, allow_root=True)
        start = self._existing_dir(target)
        paths: list[str] = []
        truncated = False
        if start is not None:
            for entry in walk_files(target.vault_root, start):
                if regex.match(_below(entry.rel, start)):
                    if len(paths) == limit:
                        truncated = True
                        break
                    paths.append(entry.rel)
        return {"paths": paths, "truncated": truncated}

    def grep(
        self,
        lang: str,
        pattern: str,
        path: str = "",
        glob: str = "**/*.md",
        fixed: bool = False,
        ignore_case: bool = False,
        limit: int = 100,
    ) -> dict:
        _check_limit(limit)
        matcher = LineMatcher(pattern, fixed=fixed, ignore_case=ignore_case)
        regex = compile_glob(glob)
        target = self.sandbox.resolve(lang, path, allow_root=True)
        start = self._existing_dir(target)
        matches: list[dict] = []
        if start is None:
            return {"matches": matches, "truncated": False}
        plan = self.grep_planner(lang, pattern, fixed, ignore_case) if self.grep_planner else None
        for entry in walk_files(target.vault_root, start):
            if not regex.match(_below(entry.rel, start)):
                continue
            if plan is not None and entry.rel not in plan.candidates:
                indexed = plan.indexed.get(entry.rel)
                if indexed is not None and indexed == entry.signature():
                    continue
            text = read_text_nofollow(entry.path, self.max_file_bytes)
            if text is None:
                continue
            for number, line in matcher.matching_lines(text):
                if len(matches) == limit:
                    return {"matches": matches, "truncated": True}
                matches.append({"path": entry.rel, "line": number, "text": line})
        return {"matches": matches, "truncated": False}

    # -- writing -------------------------------------------------------------------

    def write(
        self,
        lang: str,
        path: str,
        content: str,
        encoding: str = "utf-8",
        if_match: str | None = None,
    ) -> dict:
        target = self.sandbox.resolve(lang, path)
        if not isinstance(content, str):
            raise InvalidArgumentError("content must be a string")
        if encoding == "utf-8":
            if not target.is_note:
                raise ForbiddenPathError("only .md notes (and images in *.assets/) are writable")
            data = content.encode("utf-8")
        elif encoding == "base64":
            data = self._decode_image(target, content)
        else:
            raise InvalidArgumentError("encoding must be 'utf-8' or 'base64'")
        self._check_size(len(data))
        with self._lock(target):
            existing = self._existing_bytes(target)
            _check_if_match(if_match, existing)
            if target.is_note:
                old_text = existing.decode("utf-8", "replace") if existing is not None else None
                text = normalize_frontmatter_text(
                    data.decode("utf-8"),
                    existing=old_text,
                    now=self.clock(),
                    stem=PurePosixPath(target.rel).stem,
                )
                data = text.encode("utf-8")
                self._check_size(len(data))
            self._ensure_parent(target)
            atomic_write(target.abs, data)
            self._notify(target)
        return {
            "path": target.rel,
            "etag": etag_of(data),
            "created": existing is None,
            "size": len(data),
        }

    def append(self, lang: str, path: str, content: str, create: bool = True) -> dict:
        target = self.sandbox.resolve(lang, path)
        if not target.is_note:
            raise ForbiddenPathError("only .md notes can be appended to")
        if not isinstance(content, str) or not content:
            raise InvalidArgumentError("content must be a non-empty string")
        data = content.encode("utf-8")
        self._check_size(len(data))
        with self._lock(target):
            existing = self._existing_bytes(target)
            if existing is None and not create:
                raise NotFoundError(f"{target.rel} does not exist (create=false)")
            self._check_size(len(data) + (len(existing) if existing else 0))
            refuse_hard_links(target.abs)
            self._ensure_parent(target)
            append_bytes(target.abs, data, create=create)
            whole, info = self._read_bytes(target)
            self._notify(target)
        return {"path": target.rel, "etag": etag_of(whole), "size": info.st_size}

    def delete(self, lang: str, path: str) -> dict:
        target = self.sandbox.resolve(lang, path)
        with self._lock(target):
            try:
                info = os.lstat(target.abs)
            except FileNotFoundError:
                raise NotFoundError(f"{target.rel} does not exist") from None
            if stat.S_ISDIR(info.st_mode):
                with os.scandir(target.abs) as entries:
                    empty = next(entries, None) is None
                if not empty:
                    raise InvalidArgumentError(f"{target.rel} is a folder that is not empty")
                os.rmdir(target.abs)
            elif target.is_note or target.is_asset:
                assets = target.abs.with_name(target.abs.name + ".assets")
                os.unlink(target.abs)
                if target.is_note and assets.is_dir() and not assets.is_symlink():
                    shutil.rmtree(assets)
            else:
                raise ForbiddenPathError("only .md notes and their image assets can be deleted")
            self._notify(target)
        return {"path": target.rel, "deleted": True}

    def note_counts(self) -> dict[str, int]:
        """Notes per lang by walking the vaults (the index gives this faster)."""
        counts: dict[str, int] = {}
        for lang in self.sandbox.workspace.langs():
            root = self.sandbox.vault_root(lang)
            if root is not None:
                counts[lang] = sum(1 for e in walk_files(root, "") if e.rel.endswith(".md"))
        return counts

    # -- helpers -------------------------------------------------------------------

    def _lock(self, target: Target) -> threading.Lock:
        with self._locks_guard:
            key = (target.lang, target.rel)
            lock = self._locks.get(key)
            if lock is None:
                lock = threading.Lock()
                self._locks[key] = lock
            return lock

    def _notify(self, target: Target) -> None:
        for listener in self.listeners:
            listener(target.lang, target.rel)

    def _check_size(self, size: int) -> None:
        if size > self.max_file_bytes:
            raise TooLargeError(f"{size} bytes is more than the limit of {self.max_file_bytes}")

    def _read_bytes(self, target: Target) -> tuple[bytes, os.stat_result]:
        try:
            fd = open_nofollow(target.abs)
        except FileNotFoundError:
            raise NotFoundError(f"{target.rel or '/'} does not exist") from None
        except IsADirectoryError:
            raise InvalidArgumentError(f"{target.rel} is a folder, not a file") from None
        try:
            info = os.fstat(fd)
            if info.st_size > self.max_file_bytes:
                raise TooLargeError(f"{target.rel} is larger than {self.max_file_bytes} bytes")
            with os.fdopen(fd, "rb", closefd=False) as handle:
                data = handle.read(self.max_file_bytes + 1)
        finally:
            os.close(fd)
        return data, info

    def _existing_bytes(self, target: Target) -> bytes | None:
        """The current content of a write's target, or None; refuses hard-linked files."""
        try:
            data, _ = self._read_bytes(target)
        except NotFoundError:
            return None
        refuse_hard_links(target.abs)
        return data

    def _existing_dir(self, target: Target) -> str | None:
        """The vault-relative start folder of a walk, or None when there is nothing to walk."""
        try:
            info = os.lstat(target.abs)
        except FileNotFoundError:
            if target.rel:
                raise NotFoundError(f"{target.rel} does not exist") from None
            return None
        if not stat.S_ISDIR(info.st_mode):
            raise InvalidArgumentError(f"{target.rel} is a file, not a folder")
        return target.rel

    def _ensure_parent(self, target: Target) -> None:
        root = self.sandbox.vault_root(target.lang, create=True)
        assert root is not None
        make_parents(target.abs.parent, root)

    def _decode_image(self, target: Target, content: str) -> bytes:
        if not target.is_asset:
            raise ForbiddenPathError("binary writes are allowed only for images in *.assets/")
        try:
            data = base64.b64decode(content, validate=True)
        except (binascii.Error, ValueError):
            raise InvalidArgumentError("content is not valid base64") from None
        suffix = PurePosixPath(target.rel).suffix.lower()
        if not data.startswith(IMAGE_MAGIC[suffix]):
            raise InvalidArgumentError(f"the data is not a {suffix[1:]} image")
        return data


def _check_if_match(if_match: str | None, existing: bytes | None) -> None:
    if if_match is None:
        return
    if if_match == "":
        if existing is not None:
            raise ConflictError("the file already exists (if_match='' means it must not)")
    elif existing is None:
        raise ConflictError("the file no longer exists; read it again before writing")
    elif etag_of(existing) != if_match:
        raise ConflictError("the file changed since it was read; read it again and merge")


def _check_limit(limit: int) -> None:
    if not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise InvalidArgumentError(f"limit must be between 1 and {MAX_LIMIT}")


def _below(rel: str, start: str) -> str:
    """``rel`` relative to the walk's start folder (what globs are matched against)."""
    return rel[len(start) + 1 :] if start else rel
