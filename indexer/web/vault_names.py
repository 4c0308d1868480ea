"""The page's ``NameLookup``: notes by name from the index (kept current by its
watcher), other files (pictures) from a listing of the vault kept for a while
(``FileNames``); without an index, everything from that listing."""

from __future__ import annotations

from collections.abc import Collection

from indexer.core import Core
from indexer.vault.file_names import FileNames
from indexer.web.link_targets import NameLookup
from shared.errors import VaultError
from shared.filetypes import is_text_name


def vault_lookup(core: Core) -> NameLookup:
    """Files by name key for ``link_targets``; a name the vault lacks is left out."""
    files = FileNames(core.vault)

    def lookup(lang: str, keys: Collection[str]) -> dict[str, list[str]]:
        texts = [key for key in keys if is_text_name(key)]
        others = [key for key in keys if not is_text_name(key)]
        found: dict[str, list[str]] = {}
        index = core.index
        if texts and index is not None:
            try:
                found.update(index.paths_named(lang, texts))
                texts = []
            except VaultError:
                pass  # (the index is offline: the listing answers)
        if texts:  # (a note link to nothing is common: it never makes a walk again)
            found.update(files.find(lang, texts, retry=False))
        if others:
            found.update(files.find(lang, others))
        return found

    return lookup
