"""The one place that turns a tool's ``(lang, path)`` into a real path inside a vault.

Policy (see the SPEC's "Sandbox"): the path string is checked first (no ``..``, no
absolute or ``~`` paths, no control characters, no hidden segments, byte limits), then
every existing component is ``lstat``-ed from the real vault root down: a symbolic link
anywhere, or a non-regular file at the end, is refused. The result is checked once more
for containment with a separator boundary (``Path.is_relative_to``), never a bare prefix.
Reads open with ``O_NOFOLLOW`` so a link swapped in after the check is not followed.
"""

from __future__ import annotations

import os
import stat
import unicodedata
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from indexer.layout import Workspace
from shared.errors import ForbiddenPathError, InvalidLangError
from shared.models import LANG_RE

MAX_PATH_BYTES = 1024
MAX_SEGMENT_BYTES = 255
MAX_DEPTH = 32
IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".avif"})
_FORBIDDEN_CHARS = frozenset('\\:<>"|?*')
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f")


@dataclass(frozen=True)
class Target:
    """A checked location: ``rel`` is the clean vault-relative path, ``abs`` the real one."""

    lang: str
    rel: str
    abs: Path
    vault_root: Path

    @property
    def is_note(self) -> bool:
        return self.rel.endswith(".md")

    @property
    def is_asset(self) -> bool:
        """An image inside a ``*.assets/`` folder: the only writable non-note file."""
        parts = PurePosixPath(self.rel).parts
        return (
            len(parts) >= 2
            and parts[-2].endswith(".assets")
            and PurePosixPath(self.rel).suffix.lower() in IMAGE_SUFFIXES
        )


def check_lang(lang: object) -> str:
    """Return ``lang`` if it is a vault id, else refuse with ``invalid_lang``."""
    if not isinstance(lang, str) or not LANG_RE.fullmatch(lang):
        raise InvalidLangError(
            f"{str(lang)[:40]!r} is not a vault id (expected e.g. 'en', 'ja', 'zh-Hans')"
        )
    return lang


def clean_relpath(path: object, *, allow_root: bool = False) -> str:
    """Check a vault-relative path string; return it NFC-normalized with no trailing slash."""
    if not isinstance(path, str):
        raise ForbiddenPathError("the path must be a string")
    if path in ("", ".", "./"):
        if allow_root:
            return ""
        raise ForbiddenPathError("a file path is required here, not the vault root")
    try:
        raw = path.encode("utf-8")
    except UnicodeEncodeError:
        raise ForbiddenPathError("the path is not valid UTF-8") from None
    if len(raw) > MAX_PATH_BYTES:
        raise ForbiddenPathError(f"the path is longer than {MAX_PATH_BYTES} bytes")
    for char in path:
        code = ord(char)
        if code < 32 or 0x7F <= code <= 0x9F or char in _BIDI:
            raise ForbiddenPathError("the path contains a control character")
        if char in _FORBIDDEN_CHARS:
            raise ForbiddenPathError(f"the path contains the character {char!r}")
    if path.startswith(("/", "~")):
        raise ForbiddenPathError("the path must be relative to the vault root")
    path = unicodedata.normalize("NFC", path)
    trimmed = path[:-1] if path.endswith("/") else path
    segments = trimmed.split("/")
    if len(segments) > MAX_DEPTH:
        raise ForbiddenPathError(f"the path is deeper than {MAX_DEPTH} folders")
    for segment in segments:
        if segment == "":
            raise ForbiddenPathError("the path contains an empty segment ('//')")
        if segment in (".", ".."):
            raise ForbiddenPathError("the path must not contain '.' or '..' segments")
        if segment.startswith("."):
            raise ForbiddenPathError(
                "hidden files and folders (names starting with '.') are off limits"
            )
        if segment != segment.rstrip(" ."):
            raise ForbiddenPathError("a path segment must not end with a dot or a space")
        if len(segment.encode("utf-8")) > MAX_SEGMENT_BYTES:
            raise ForbiddenPathError(f"a path segment is longer than {MAX_SEGMENT_BYTES} bytes")
    return trimmed


class Sandbox:
    """Resolves paths inside ``W/memory/languages/<lang>/vault/`` and nowhere else."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace

    def vault_root(self, lang: str, *, create: bool = False) -> Path | None:
        """Real path of the lang's vault folder; created on demand for writes."""
        folder = self.workspace.vault_dir(check_lang(lang))
        if create:
            folder.mkdir(parents=True, exist_ok=True)
        elif not folder.is_dir():
            return None
        real = Path(os.path.realpath(folder))
        if not real.is_dir():
            raise ForbiddenPathError(f"the vault of {lang!r} is not a folder")
        return real

    def resolve(
        self, lang: str, path: object, *, create_vault: bool = False, allow_root: bool = False
    ) -> Target:
        """Check ``(lang, path)`` and return the target; refuse with a VaultError."""
        check_lang(lang)
        rel = clean_relpath(path, allow_root=allow_root)
        root = self.vault_root(lang, create=create_vault)
        if root is None:
            root = Path(os.path.realpath(self.workspace.vault_dir(lang)))
            return Target(lang, rel, root / rel if rel else root, root)
        current = root
        for segment in rel.split("/") if rel else []:
            parent_is_dir = True
            try:
                info = os.lstat(current)
                parent_is_dir = stat.S_ISDIR(info.st_mode)
            except FileNotFoundError:
                pass
            if not parent_is_dir:
                raise ForbiddenPathError(f"{rel!r} goes through a file as if it were a folder")
            current = current / segment
            try:
                info = os.lstat(current)
            except FileNotFoundError:
                continue
            except OSError as err:
                raise ForbiddenPathError(f"{rel!r} cannot be resolved ({err.strerror})") from None
            if stat.S_ISLNK(info.st_mode):
                raise ForbiddenPathError(f"{rel!r} goes through a symbolic link")
            if not (stat.S_ISDIR(info.st_mode) or stat.S_ISREG(info.st_mode)):
                raise ForbiddenPathError(f"{rel!r} is not a regular file or folder")
        if not current.is_relative_to(root):
            raise ForbiddenPathError(f"{rel!r} leaves the vault")
        return Target(lang, rel, current, root)


def open_nofollow(path: Path, flags: int = os.O_RDONLY) -> int:
    """Open without following a final symlink and refuse anything but a regular file."""
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError as err:
        if err.errno in (40, 20):  # ELOOP (a symlink), ENOTDIR
            raise ForbiddenPathError("the path goes through a symbolic link") from None
        raise
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(path)
        raise ForbiddenPathError("the path is not a regular file")
    return fd
