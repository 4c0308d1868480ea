"""A note's ``*.assets/`` folder goes with its last image.

A tool makes the folder for the first image written there; moving or deleting the last
one left ``x.md.assets/`` behind, empty (undo always cleared it). Anything left in it
(a file history does not track, say) keeps it.
"""

from __future__ import annotations

from contextlib import suppress

from indexer.vault.sandbox import Sandbox, Target
from shared.errors import VaultError


def remove_emptied_folder(sandbox: Sandbox, image: Target) -> None:
    """rmdir the ``*.assets/`` folder of ``image`` (gone from it) when nothing is left."""
    if not image.is_asset:
        return
    folder = sandbox.resolve(image.lang, image.rel.rsplit("/", 1)[0])
    with suppress(VaultError), sandbox.open(folder) as place:
        if place.lstat() is not None:
            place.remove_empty_folder()
