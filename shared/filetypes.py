"""Which files of a vault are text: ``.md`` notes, and plain text files (one table).

Notes carry YAML frontmatter that the server normalizes on every write. Plain text
files (Claude's memory tool keeps ``.txt``, ``.xml``, ``.json``, ``.yaml`` and ``.csv``
files) are written exactly as sent, with no frontmatter. Both kinds are writable and
indexed for search; every other file (but images in ``*.assets/``) is refused.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from shared.images import ASSETS_SUFFIX, IMAGE_SUFFIXES

NOTE_SUFFIX = ".md"
# Names Windows keeps for devices (a vault may be opened there, and synced to it): the
# server refuses them as file and folder names, and the client's slugs avoid them.
DEVICE_NAMES = frozenset(
    {"CON", "PRN", "AUX", "NUL"} | {f"{d}{n}" for d in ("COM", "LPT") for n in range(10)}
)
TEXT_SUFFIXES = frozenset({".txt", ".xml", ".json", ".yaml", ".csv"})


def is_plain_text_name(name: str) -> bool:
    """A plain text file (no frontmatter): its suffix is one of ``TEXT_SUFFIXES``."""
    return PurePosixPath(name).suffix in TEXT_SUFFIXES


def is_text_name(name: str) -> bool:
    """A note or a plain text file: what the tools write as UTF-8 and the index covers."""
    return name.endswith(NOTE_SUFFIX) or is_plain_text_name(name)


def is_asset_image_name(path: str) -> bool:
    """An image inside a ``*.assets/`` folder: the only writable file that is no text."""
    parts = PurePosixPath(path).parts
    return (
        len(parts) >= 2
        and parts[-2].endswith(ASSETS_SUFFIX)
        and PurePosixPath(path).suffix.lower() in IMAGE_SUFFIXES
    )


def is_file_kind_name(path: str) -> bool:
    """A file the tools write, read and delete: a note, a plain text file or an image of
    a note (the server's ``timeline.file_kind``, told from the path alone)."""
    return is_text_name(path) or is_asset_image_name(path)
