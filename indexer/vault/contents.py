"""The bytes of one file, in and out: reading them within the size limit, and the
checks and normalization of what a write puts in (size, base64 images, a note's
frontmatter).

Every tool that reads a file's content or replaces it goes through these, so the size
limit and the refusals (a folder, a hard-linked file, an image that is not one) are
the same everywhere: the reads (``reading``), the writes (``vault``) and the history
operations (``timeline``, ``moves``, through ``Vault``'s helpers).
"""

from __future__ import annotations

import base64
import binascii
import os
from datetime import datetime
from pathlib import PurePosixPath

from indexer.vault import fsops
from indexer.vault.sandbox import Place, Target
from shared.errors import ForbiddenPathError, InvalidArgumentError, NotFoundError, TooLargeError
from shared.filetypes import TEXT_SUFFIXES
from shared.frontmatter import normalize_frontmatter_text
from shared.images import is_image

__all__ = [
    "check_size",
    "decode_image",
    "existing_bytes",
    "normalized_note",
    "read_bytes",
    "text_lines",
]

TEXT_TYPES = ", ".join(sorted(TEXT_SUFFIXES))
APPENDABLE = f".md notes and text files ({TEXT_TYPES})"
WRITABLE = f"{APPENDABLE} and images in *.assets/"  # (the tools' refusals say so)


def check_size(size: int, max_bytes: int) -> None:
    if size > max_bytes:
        raise TooLargeError(f"{size} bytes is more than the limit of {max_bytes}")


def open_file(place: Place) -> int:
    """The descriptor of the regular file at ``place``; ``not_found`` when missing, and
    ``invalid_argument`` for a folder."""
    return open_file_stat(place)[0]


def open_file_stat(place: Place) -> tuple[int, os.stat_result]:
    """``open_file``, with the file's ``fstat``."""
    rel = place.target.rel
    if place.dir_fd is None:
        raise NotFoundError(f"{rel or '/'} does not exist")
    try:
        return fsops.open_regular_stat(place.name, place.dir_fd)
    except FileNotFoundError:
        raise NotFoundError(f"{rel or '/'} does not exist") from None
    except IsADirectoryError:
        raise InvalidArgumentError(f"{rel} is a folder, not a file") from None


def read_bytes(place: Place, max_bytes: int) -> tuple[bytes, os.stat_result]:
    """A regular file's whole content and stat; refuses a folder or a file too large."""
    rel = place.target.rel
    fd, info = open_file_stat(place)
    with fsops.opened(fd):
        if info.st_size > max_bytes:
            raise TooLargeError(f"{rel} is larger than {max_bytes} bytes")
        data = fsops.read_all(fd, max_bytes, info.st_size)
    if len(data) > max_bytes:
        raise TooLargeError(f"{rel} is larger than {max_bytes} bytes")
    return data, info


def existing_bytes(place: Place, max_bytes: int) -> bytes | None:
    """The current content of a write's target, or None; refuses hard-linked files."""
    try:
        data, info = read_bytes(place, max_bytes)
    except NotFoundError:
        return None
    except TooLargeError:  # grown past the limit by another program
        raise TooLargeError(
            f"{place.target.rel} is larger than {max_bytes} bytes, so history cannot keep "
            "it and it is not replaced; delete it first (its history stays), or make it "
            "smaller"
        ) from None
    if info.st_nlink > 1:
        raise ForbiddenPathError("the file has more than one hard link; it is not modified")
    return data


def normalized_note(
    target: Target, text: str, existing: bytes | None, now: datetime, max_bytes: int
) -> bytes:
    """A note's text with its frontmatter normalized (against the text it replaces)."""
    old_text = existing.decode("utf-8", "replace") if existing is not None else None
    normalized = normalize_frontmatter_text(
        text, existing=old_text, now=now, stem=PurePosixPath(target.rel).stem
    ).encode("utf-8")
    check_size(len(normalized), max_bytes)
    return normalized


def decode_image(target: Target, content: str) -> bytes:
    """The bytes of a base64 write, which must be an image in a ``*.assets/`` folder."""
    if not target.is_asset:
        raise ForbiddenPathError("binary writes are allowed only for images in *.assets/")
    try:
        data = base64.b64decode(content, validate=True)
    except (binascii.Error, ValueError):
        raise InvalidArgumentError("content is not valid base64") from None
    suffix = PurePosixPath(target.rel).suffix.lower()
    if not is_image(suffix, data):
        raise InvalidArgumentError(f"the data is not a {suffix[1:]} image")
    return data


def text_lines(text: str) -> list[str]:
    """The lines of a text as every tool counts them (grep's numbers, read's offset and
    limit, diff's hunks): ended by "\n" alone, each with its end ("\r\n" stays one).
    ``str.splitlines`` also ends a line at a lone "\r", a form feed, U+2028 and more:
    characters that plain text files keep inside their lines."""
    lines = text.split("\n")
    last = lines.pop()
    return [line + "\n" for line in lines] + ([last] if last else [])
