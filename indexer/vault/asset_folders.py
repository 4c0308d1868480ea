"""A note's ``*.assets/`` folder goes with its last image.

A tool makes the folder for the first image written there; moving or deleting the last
one left ``x.md.assets/`` behind, empty (undo always cleared it). Anything left in it
(a file history does not track, say) keeps it.
"""

from __future__ import annotations

from contextlib import suppress

from indexer.vault.sandbox import Sandbox, Target
from shared.errors import VaultError


def remove_emptied_folder(sandbox: Sandbox, file: Target) -> None:
    """rmdir the folders of ``file`` (gone from them) inside its ``*.assets/`` folder,
    that one included, as far up as nothing is left in them (an attachment may lie in
    a subfolder, ``x.md.assets/scans/p.png``)."""
    if not file.in_assets:
        return
    folders = file.folders
    while not folders[-1].endswith(".assets"):
        if not _removed(sandbox, file.lang, "/".join(folders)):
            return
        folders = folders[:-1]
    _removed(sandbox, file.lang, "/".join(folders))


def _removed(sandbox: Sandbox, lang: str, rel: str) -> bool:
    """Whether the folder ``rel`` was removed (it was there, and empty)."""
    with suppress(VaultError, OSError), sandbox.open(sandbox.resolve(lang, rel)) as place:
        if place.lstat() is not None:
            place.remove_empty_folder()
            return True
    return False
