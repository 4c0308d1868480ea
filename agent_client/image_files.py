"""The check an entry's images pass before the entry is taken: one rule, one wording, for
``agent-client remember --image`` and for ``remember_turn``.

Why up front: the merge reads the images long after the entry was queued, so a missing
or wrong file failed the entry later, in its notice, once the host had moved on. The
check is cheap (per image one ``open``, one ``fstat`` and a read of 4 KiB, the most an
image type's first bytes need); the merge checks the whole file again when it copies it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable

from shared.images import detect_image

HEAD_BYTES = 4096  # what ``detect_image`` needs at most (an AVIF's ``ftyp`` box)
# Non-blocking: a FIFO (or a device) named as an image must be refused, not waited on.
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)


def check_image_files(paths: Iterable[str], max_bytes: int, name: str = "image") -> None:
    """``ValueError`` naming the first of ``paths`` that is not a readable regular file
    of at most ``max_bytes`` starting like a PNG, JPEG, GIF, WebP, BMP or AVIF image;
    ``name`` is how the message names the field (``--image`` for the command). A leading
    ``~`` is the home folder, as the merge reads it."""
    for path in paths:
        where = f"{name} {path!r:.80}"
        head = _head(os.path.expanduser(path), max_bytes, where)
        if detect_image(head) is None:
            raise ValueError(f"{where}: not a PNG, JPEG, GIF, WebP, BMP or AVIF image")


def _head(path: str, max_bytes: int, where: str) -> bytes:
    """The first bytes of the regular file at ``path``, opened once (what is checked is
    what is read: no race between a look at the name and the open)."""
    unreadable = ValueError(f"{where}: no such readable file")
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except (OSError, ValueError):  # (ValueError: a NUL in the path)
        raise unreadable from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):  # a directory, FIFO, socket or device
            raise unreadable
        if info.st_size > max_bytes:
            raise ValueError(
                f"{where}: {info.st_size:,} bytes, more than the {max_bytes:,} an image"
                " may have (AGENT_CLIENT_MAX_IMAGE_BYTES)"
            )
        return os.read(fd, HEAD_BYTES)
    except OSError:
        raise unreadable from None
    finally:
        os.close(fd)
