"""The names every tool takes: each character of a path, and each of its segments.

One rule for the server's sandbox (``indexer.vault.names``, ``sandbox.clean_relpath``)
and the client, which checks a folder it is given once, at the start, rather than
meeting the same refusal at every call (Claude's memory tool's folder).
"""

from __future__ import annotations

import unicodedata
from urllib.parse import unquote

from shared.errors import ForbiddenPathError
from shared.filetypes import DEVICE_NAMES as _DEVICE_NAMES
from shared.invisible import (
    INVISIBLE_LETTERS,
    SHOW_NOTHING,
    allowed_anywhere,
    check_in_context,
    is_selector,
)

MAX_PATH_BYTES = 1024
MAX_SEGMENT_BYTES = 255
MAX_DEPTH = 32
_FORBIDDEN_CHARS = frozenset('\\:<>"|?*')
# Zero-width joiners, variation selectors and tags spell something in some places (see
# ``invisible``); other format characters (zero-width space, bidi controls, BOM...) only
# hide what a name says.
# What a name made only of these (and spaces, joiners, selectors) would show: nothing.
_BLANK = SHOW_NOTHING | {"\u200c", "\u200d"}


def unseen(char: str) -> str | None:
    """Why no name holds ``char`` whatever its place (``control``, ``invisible``), None
    when one may: the one rule of a path's characters and of a glob's (``globs``)."""
    code = ord(char)
    if code < 32 or 0x7F <= code <= 0x9F:
        return "control"
    category = unicodedata.category(char)
    if (
        (category == "Cf" and not allowed_anywhere(char))
        or category in ("Zl", "Zp")
        or char in INVISIBLE_LETTERS
    ):
        return "invisible"
    return None


def check_char(char: str) -> None:
    kind = unseen(char)
    if kind == "control":
        raise ForbiddenPathError("the path contains a control character")
    if kind is not None:
        raise ForbiddenPathError(f"the path contains the invisible character U+{ord(char):04X}")
    if char in _FORBIDDEN_CHARS:
        raise ForbiddenPathError(f"the path contains the character {char!r}")


def check_segment(segment: str) -> None:
    if segment == "..":
        raise ForbiddenPathError("the path must not contain '..' segments")
    if segment.startswith("."):
        raise ForbiddenPathError(
            "hidden files and folders (names starting with '.') are off limits"
        )
    if segment.startswith("~"):
        # ``~`` and ``~name`` are a home folder to a shell (and to a path given as
        # ``~/x``): refused in any place, so a name is never usable in one and not another.
        raise ForbiddenPathError("a name must not start with '~' (a shell reads a home folder)")
    if segment != segment.rstrip(" ."):
        raise ForbiddenPathError("a path segment must not end with a dot or a space")
    stem = segment.split(".", 1)[0]
    if all(char.isspace() or char in _BLANK or is_selector(char) for char in stem):
        raise ForbiddenPathError("a name must show something before its extension, not spaces")
    if not segment.isascii():
        if unicodedata.category(segment[0])[0] == "M":
            # No word starts with one: it is drawn on the character before it, the ``/``
            # (``a/\u0338b.md`` reads as ``a/b.md``), or on nothing (a name of marks alone).
            raise ForbiddenPathError(
                f"a name must not start with the combining mark U+{ord(segment[0]):04X}:"
                " it would be drawn on the character before it and read as another name"
            )
        check_in_context(segment)
    size = len(segment.encode("utf-8"))
    if size > MAX_SEGMENT_BYTES:  # (NFC, as names are kept: ``क़`` is 3 bytes typed, 6 so)
        kept = "" if segment.isascii() else " in NFC, the form names are kept in"
        raise ForbiddenPathError(
            f"a path segment is longer than {MAX_SEGMENT_BYTES} bytes ({size:,} bytes{kept})"
        )
    for variant in (unicodedata.normalize("NFKC", segment), unquote(unquote(segment))):
        if variant.startswith(".") or "/" in variant or "\\" in variant:
            raise ForbiddenPathError(
                f"the segment {segment!r} reads as a dot-name or a separator once decoded"
            )
    # Windows folds ``COM¹`` to ``COM1`` (a device too).
    device = unicodedata.normalize("NFKC", segment.split(".", 1)[0]).rstrip(" ").upper()
    if device in _DEVICE_NAMES:
        raise ForbiddenPathError(f"{segment!r} is a reserved device name on Windows")
