"""Images of an entry: check them up front, copy them into ``<note>.md.assets/``.

Files are checked (exist, small enough, really an image by their first bytes) before
any note is written, so a bad image fails the entry without touching the vault. Asset
names carry a content hash, so attaching the same picture twice writes it once.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import posixpath
import re
from dataclasses import dataclass
from pathlib import Path

from agent_client.merge.journal import WriteJournal
from shared.errors import ConflictError
from shared.images import asset_folder, detect_image


@dataclass(frozen=True)
class ImageFile:
    """A checked local image, ready to copy."""

    source: Path
    data: bytes
    ext: str

    @property
    def asset_name(self) -> str:
        stem = re.sub(r"[^A-Za-z0-9_-]+", "-", self.source.stem).strip("-")[:40] or "image"
        digest = hashlib.sha256(self.data).hexdigest()[:10]
        return f"{stem}-{digest}{self.ext}"


def load_images(paths: list[str], max_bytes: int) -> list[ImageFile]:
    """Read and check every image; ``ValueError`` naming the first bad one."""
    images: list[ImageFile] = []
    for name in paths:
        path = Path(name).expanduser()
        if not path.is_file():
            raise ValueError(f"image {name!r} does not exist or is not a file")
        size = path.stat().st_size
        if size > max_bytes:
            raise ValueError(f"image {name!r} is {size} bytes, more than {max_bytes}")
        data = path.read_bytes()
        ext = detect_image(data)
        if ext is None:
            raise ValueError(f"{name!r} is not a PNG, JPEG, GIF, WebP, BMP or AVIF image")
        if ext == ".jpg" and path.suffix.lower() == ".jpeg":
            ext = ".jpeg"
        images.append(ImageFile(source=path, data=data, ext=ext))
    return images


async def copy_images(journal: WriteJournal, note_path: str, images: list[ImageFile]) -> list[str]:
    """Copy each image next to the note; the Markdown lines that embed them."""
    folder = asset_folder(note_path)
    links: list[str] = []
    for image in images:
        target = f"{folder}/{image.asset_name}"
        stat = await journal.vault.stat(target)
        if not stat["exists"]:
            # A conflict means someone wrote it meanwhile: same name, so the same bytes.
            with contextlib.suppress(ConflictError):
                await journal.write(
                    target,
                    base64.b64encode(image.data).decode("ascii"),
                    before=None,
                    if_match="",
                    encoding="base64",
                )
        relative = posixpath.relpath(target, posixpath.dirname(note_path) or ".")
        links.append(f"![{image.source.stem}]({relative})")
    return links


async def attach_images(journal: WriteJournal, note_path: str, images: list[ImageFile]) -> None:
    """Copy ``images`` next to a note the merge just wrote and embed them at its end."""
    if not images:
        return
    links = await copy_images(journal, note_path, images)
    current = await journal.vault.read(note_path)
    missing = [link for link in links if link not in current["content"]]
    if missing:
        text = current["content"].rstrip("\n") + "\n\n" + "\n".join(missing) + "\n"
        await journal.write(note_path, text, before=current["content"], if_match=current["etag"])
