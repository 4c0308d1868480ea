"""Images of an entry: check them up front, copy them into ``<note>.md.assets/``.

Files are checked (exist, small enough, really an image by their first bytes) before
any note is written, so a bad image fails the entry without touching the vault. Asset
names carry a content hash, so attaching the same picture twice writes it once.

On the LLM path the images are copied *first*, next to the suggested note, and the model
gets the exact Markdown link, so it places each picture where it belongs in the text.
The model may put the entry into another note: then ``place_images`` moves the pictures
next to that note and rewrites their links (a link is relative to its note:
``<note file name>.assets/<asset>``). A picture the model did not place is appended at
the end of the note, as the fallback does.
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
from shared.errors import ConflictError, NotFoundError
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


def asset_path(note_path: str, image: ImageFile) -> str:
    """Where ``image`` lives when embedded in ``note_path``."""
    return f"{asset_folder(note_path)}/{image.asset_name}"


def link_target(note_path: str, image: ImageFile) -> str:
    """The link to ``image`` from inside ``note_path`` (relative to the note's folder)."""
    return posixpath.relpath(asset_path(note_path, image), posixpath.dirname(note_path) or ".")


def image_link(note_path: str, image: ImageFile) -> str:
    """The Markdown line that embeds ``image`` in ``note_path``."""
    return f"![{image.source.stem}]({link_target(note_path, image)})"


async def copy_images(journal: WriteJournal, note_path: str, images: list[ImageFile]) -> list[str]:
    """Copy each image next to the note; the Markdown lines that embed them."""
    for image in images:
        target = asset_path(note_path, image)
        stat = await journal.vault.stat(target)
        if not stat["exists"]:
            # A conflict means someone wrote it meanwhile: same name, so the same bytes.
            with contextlib.suppress(ConflictError):
                await journal.write(
                    target,
                    base64.b64encode(image.data).decode("ascii"),
                    if_match="",
                    encoding="base64",
                )
    return [image_link(note_path, image) for image in images]


async def place_images(
    journal: WriteJournal, note_path: str, staged_at: str, images: list[ImageFile]
) -> None:
    """After the model's merge: ``images`` (copied next to ``staged_at`` before it) end up
    next to ``note_path``, the note that received the entry, each linked from it once."""
    if not images:
        return
    links = await copy_images(journal, note_path, images)
    current = await journal.vault.read(note_path)
    text = current["content"]
    if note_path != staged_at:  # the model followed the staged link into another note
        for image in images:
            text = text.replace(
                f"]({link_target(staged_at, image)}", f"]({link_target(note_path, image)}"
            )
    missing = [
        link
        for link, image in zip(links, images, strict=True)
        if f"]({link_target(note_path, image)}" not in text
    ]
    if missing:
        text = text.rstrip("\n") + "\n\n" + "\n".join(missing) + "\n"
    if text != current["content"]:
        await journal.write(note_path, text, if_match=current["etag"])
    if note_path != staged_at:
        await _unstage(journal, staged_at, images)


async def _unstage(journal: WriteJournal, staged_at: str, images: list[ImageFile]) -> None:
    """Remove the copies made next to ``staged_at`` that its note does not link to."""
    try:
        staged_text = (await journal.vault.read(staged_at))["content"]
    except NotFoundError:
        staged_text = ""
    for image in images:
        path = asset_path(staged_at, image)
        if journal.created(path) and f"]({link_target(staged_at, image)}" not in staged_text:
            await journal.discard(path)
