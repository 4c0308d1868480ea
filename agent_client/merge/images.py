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
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from agent_client.merge.journal import WriteJournal
from shared.errors import ConflictError, NotFoundError
from shared.images import asset_folder, detect_image

MAX_ALT_CHARS = 80
# Characters that end or escape an alt text (brackets, backslash) or start a construct
# that outranks a link (code span, autolink, HTML): replaced by a space, as are control,
# format and separator characters (C* and Z*: line breaks), except the joiners that
# Persian and Indic words are spelled with.
_ALT_BREAKERS = frozenset("[]\\`<>")
_JOINERS = frozenset("\u200c\u200d")
# A link destination written bare: no space, bracket, parenthesis, backslash or percent
# sign (a renderer may decode ``%xx``); anything else is written as ``<...>``.
_BARE_DESTINATION = re.compile(r"[^\s()<>\[\]\\%]+")


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
    """Read and check every image; ``ValueError`` naming the first bad one.

    A file given twice (another spelling of its path, or the same bytes under the same
    name: the same asset) is kept once, so the note does not link it twice.
    """
    images: list[ImageFile] = []
    seen: set[Path] = set()
    for name in paths:
        path = Path(name).expanduser()
        if path.resolve() in seen:
            continue
        seen.add(path.resolve())
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
        image = ImageFile(source=path, data=data, ext=ext)
        if all(image.asset_name != other.asset_name for other in images):
            images.append(image)
    return images


def asset_path(note_path: str, image: ImageFile) -> str:
    """Where ``image`` lives when embedded in ``note_path``."""
    return f"{asset_folder(note_path)}/{image.asset_name}"


def link_target(note_path: str, image: ImageFile) -> str:
    """The link to ``image`` from inside ``note_path`` (relative to the note's folder)."""
    return posixpath.relpath(asset_path(note_path, image), posixpath.dirname(note_path) or ".")


def alt_text(image: ImageFile) -> str:
    """The file's stem as a one-line alt text that cannot end the link early.

    A file name may hold ``]``, a newline or ``# heading``: written as is, it would
    break the link and inject Markdown into the note.
    """
    chars = [
        " "
        if c in _ALT_BREAKERS or (unicodedata.category(c)[0] in "CZ" and c not in _JOINERS)
        else c
        for c in image.source.stem
    ]
    alt = " ".join("".join(chars).split())[:MAX_ALT_CHARS].strip()
    return alt or "image"


def link_destination(target: str) -> str:
    """``target`` as a Markdown link destination that any file name survives: bare
    when it is plain, else in angle brackets (spaces and parentheses allowed there;
    ``<``, ``>`` and ``\\`` escaped, line breaks and ``%`` percent-encoded, as a
    renderer decodes ``%xx``)."""
    if _BARE_DESTINATION.fullmatch(target):
        return target
    escaped = "".join(_percent(c) if _must_encode(c) else c for c in target)
    return "<" + re.sub(r"([<>\\])", r"\\\1", escaped) + ">"


def _must_encode(char: str) -> bool:
    """``%`` itself, and what would end the line the link is on."""
    return char == "%" or unicodedata.category(char) in ("Cc", "Zl", "Zp")


def _percent(char: str) -> str:
    return quote(char, safe="")


def link_ref(note_path: str, image: ImageFile) -> str:
    """The start of ``image``'s link as written in ``note_path``: ``](destination``."""
    return f"]({link_destination(link_target(note_path, image))}"


def image_link(note_path: str, image: ImageFile) -> str:
    """The Markdown line that embeds ``image`` in ``note_path``."""
    return f"![{alt_text(image)}{link_ref(note_path, image)})"


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
            text = text.replace(link_ref(staged_at, image), link_ref(note_path, image))
    missing = [
        link
        for link, image in zip(links, images, strict=True)
        if link_ref(note_path, image) not in text
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
        if journal.created(path) and link_ref(staged_at, image) not in staged_text:
            await journal.discard(path)
