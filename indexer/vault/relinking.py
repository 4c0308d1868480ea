"""A moved note's bytes with its links rewritten (``links``), told what is on disk.

A link may name a file from the note's folder or from the vault's root: which one it
names is told by the files that move with the note and by what is there before the
move, which the vault's sandbox answers.
"""

from __future__ import annotations

import os
import unicodedata
from typing import TYPE_CHECKING

from indexer.vault.file_names import name_key, names_in_vault
from indexer.vault.links import Relocate, rewrite_links
from indexer.vault.sandbox import Target
from shared.errors import VaultError

if TYPE_CHECKING:
    from indexer.vault.vault import Vault


def relinked(
    vault: Vault, data: bytes, old: Target, new: Target, relocate: Relocate, moving: set[str]
) -> bytes:
    """A note's bytes with its relative links fixed for its new place; ``moving`` holds
    the vault paths of the files that move (text that is not UTF-8 is left as it is)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data
    listings = Listings(vault, old.lang)
    rewritten = rewrite_links(
        text, old.rel, new.rel, relocate, moving.__contains__, listings.exists, listings.found
    )
    return rewritten.encode("utf-8")


class Listings:
    """Whether a file or folder is at a vault path, told by its folder's listing, each
    folder listed once: a note of 70,000 distinct links naming nothing took 6.8 s to
    move (a walk to each path's folder, twice a link), its files locked meanwhile."""

    def __init__(self, vault: Vault, lang: str) -> None:
        self.vault, self.lang = vault, lang
        self.listed: dict[str, frozenset[str]] = {}
        self.by_name: dict[str, list[str]] | None = None

    def found(self, rel: str) -> bool:
        """Whether a file of the vault is at ``rel`` or at a path ending with
        ``/<rel>`` (how Obsidian resolves a link by name); the vault is walked once,
        only for a link that names no file from its note's folder nor the root."""
        return bool(self.ending(rel))

    def ending(self, rel: str) -> list[str]:
        """The vault's files at ``rel`` or at a path ending with ``/<rel>``."""
        if self.by_name is None:
            self.by_name = names_in_vault(self.vault, self.lang)
        rel = unicodedata.normalize("NFC", rel)
        paths = self.by_name.get(name_key(rel.rpartition("/")[2]), ())
        return [path for path in paths if path == rel or path.endswith("/" + rel)]

    def exists(self, rel: str) -> bool:
        folder, _, name = rel.rpartition("/")
        if folder not in self.listed:
            self.listed[folder] = self._names(folder)
        return unicodedata.normalize("NFC", name) in self.listed[folder]

    def _names(self, folder: str) -> frozenset[str]:
        """The names in ``folder`` (NFC), none when it is not a folder one may list."""
        sandbox = self.vault.sandbox
        try:
            target = sandbox.resolve(self.lang, folder, allow_root=True)
            with sandbox.open(target) as place:
                fd = place.folder_fd()
                if fd is None:
                    return frozenset()
                return frozenset(unicodedata.normalize("NFC", n) for n in os.listdir(fd))
        except (VaultError, OSError):
            return frozenset()
