"""What a move refuses before it locks anything: a file changing kind, and a file moved
onto a folder.

A note must stay a ``.md`` note or become a text file (and back), an image an image in
a ``*.assets/`` folder with its extension (``forbidden_path``). A file moved onto a
folder that exists is refused as onto a file that exists (``conflict``), before its
kind is checked: a folder's name is seldom a note's, and "only notes are writable" did
not say that the place was taken.
"""

from __future__ import annotations

import stat
from contextlib import ExitStack
from typing import TYPE_CHECKING

from indexer.vault.contents import WRITABLE
from indexer.vault.new_path import open_new_path
from indexer.vault.sandbox import Target
from indexer.vault.timeline import file_kind
from shared.errors import ConflictError, ForbiddenPathError, TooLargeError

if TYPE_CHECKING:
    from indexer.vault.vault import Vault

TEXTS = ("note", "text")  # file kinds that hold links and own an .assets/ folder


def check_no_folder(vault: Vault, source: Target, dest: Target) -> None:
    """``conflict`` when a folder is at ``dest`` (``source`` is a file; one no tool may
    move is refused as such by ``check_kinds``)."""
    if file_kind(source) is None or not dest.rel:
        return
    with ExitStack() as stack:
        place = open_new_path(stack, vault.sandbox, dest)
        info = place.lstat()
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise ConflictError(
            f"{dest.rel} already exists (a folder); pick another new_path, such as"
            f" {dest.rel}/{source.name} to move {source.name} into it"
        )


def check_oversized_kinds(vault: Vault, source: Target, dest: Target) -> None:
    """A file over the limit moves only to a path of its own kind, and never as a
    note (``too_large``, naming the file); the kinds are those ``move`` allows."""
    kind, dest_kind = file_kind(source), file_kind(dest)
    if kind is None:
        raise ForbiddenPathError("only notes, their images and text files can be moved")
    limit = vault.max_file_bytes
    if kind == "note":
        raise TooLargeError(
            f"{source.rel} is a note larger than {limit} bytes; a note moves with its"
            " links rewritten, which needs its whole text: it was not moved"
        )
    if dest_kind == "note":
        raise TooLargeError(
            f"{source.rel} is larger than {limit} bytes, too large to become the note"
            f" {dest.rel}; move it to a text file name"
        )
    check_kinds(source, dest)


def check_kinds(source: Target, dest: Target) -> str:
    """The kind of ``source``, which ``dest`` must keep (a note and a plain text file may
    become one another); a destination no file may have (``.yml``, ``.TXT``, no suffix)
    is refused as a write there is, not as a change of kind: the caller learns which
    names work."""
    kind = file_kind(source)
    if kind is None:
        raise ForbiddenPathError("only notes, their images and text files can be moved")
    dest_kind = file_kind(dest)
    if dest_kind is None:
        raise ForbiddenPathError(f"{dest.rel}: only {WRITABLE} are writable")
    same_kind = dest_kind == kind or (kind in TEXTS and dest_kind in TEXTS)
    if not same_kind or (kind == "asset" and _suffix(source.rel) != _suffix(dest.rel)):
        raise ForbiddenPathError(
            f"{source.rel} must keep its kind: a note or text file moves to a note or text"
            " path, an image to a *.assets/ folder with the same extension"
        )
    dest.check_text_place()
    return kind


def _suffix(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[-1].lower() if "." in name else ""
