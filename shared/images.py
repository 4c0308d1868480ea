"""Which image files a vault accepts, told by their first bytes: one table for both sides.

The server refuses a base64 write whose bytes do not start like the image type its name
says; the client checks an entry's images before anything is written. Both use this.
"""

from __future__ import annotations

ASSETS_SUFFIX = ".assets"  # a note's images live in ``<note>.md.assets/``
IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".avif"})
_MAGIC: dict[str, tuple[bytes, ...]] = {
    ".png": (b"\x89PNG\r\n\x1a\n",),
    ".jpg": (b"\xff\xd8\xff",),
    ".jpeg": (b"\xff\xd8\xff",),
    ".gif": (b"GIF87a", b"GIF89a"),
    ".bmp": (b"BM",),
}
MIME_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".bmp": "image/bmp",
    ".avif": "image/avif",
}


def asset_folder(note_path: str) -> str:
    """The folder of a note's images: ``items/a.md`` -> ``items/a.md.assets``."""
    return note_path + ASSETS_SUFFIX


def is_image(suffix: str, data: bytes) -> bool:
    """Whether ``data`` starts like an image of type ``suffix`` (magic bytes, not a parse)."""
    suffix = suffix.lower()
    if suffix == ".webp":
        return data[:4] == b"RIFF" and data[8:12] == b"WEBP"
    if suffix == ".avif":  # an ISO-BMFF 'ftyp' box naming an AVIF brand
        size = int.from_bytes(data[:4], "big")
        if data[4:8] != b"ftyp" or not 16 <= size <= min(len(data), 4096):
            return False
        brands = {data[8:12]} | {data[i : i + 4] for i in range(16, size - 3, 4)}
        return bool(brands & {b"avif", b"avis"})
    return suffix in _MAGIC and data.startswith(_MAGIC[suffix])


def detect_image(data: bytes) -> str | None:
    """The suffix of the image type ``data`` is (``.jpg`` for JPEG), or None."""
    for suffix in (".png", ".jpg", ".gif", ".webp", ".bmp", ".avif"):
        if is_image(suffix, data):
            return suffix
    return None
