"""A moved note's bytes with its links rewritten (``links``), told what is on disk.

A link may name a file from the note's folder or from the vault's root: which one it
names is told by the files that move with the note and by what is there before the
move, which the vault's sandbox answers.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

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
    exists = functools.partial(_exists, vault, old.lang)
    rewritten = rewrite_links(text, old.rel, new.rel, relocate, moving.__contains__, exists)
    return rewritten.encode("utf-8")


def _exists(vault: Vault, lang: str, rel: str) -> bool:
    """Whether a file or folder is at vault path ``rel`` (one no tool can name is not)."""
    try:
        with vault.sandbox.open(vault.sandbox.resolve(lang, rel)) as place:
            return place.lstat() is not None
    except (VaultError, OSError):
        return False
