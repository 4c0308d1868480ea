"""The page's ``NameLookup``: notes by name from the index (kept current by its
watcher), other files (pictures) from a listing of the vault kept for a while
(``FileNames``); without an index, or for a text file the index lacks (one in a
note's ``*.assets/`` folder), from that listing. Only a missing name with a file's
suffix (``![[shot.png]]``) makes the listing walked again, and a name without one is
never asked: every ``[[Note]]`` also named a file ``Note`` as is, which a vault seldom
holds, and asking it walked the whole vault every ``NAMES_RETRY_SECONDS`` on a render
whose links all resolved (0.8 s for 100,000 files, every render waiting for it)."""

from __future__ import annotations

from collections.abc import Collection

from indexer.core import Core
from indexer.vault.file_names import FileNames
from indexer.web.link_targets import NameLookup
from indexer.web.wikilinks import is_file_name
from shared.errors import VaultError
from shared.filetypes import is_text_name


def vault_lookup(core: Core) -> NameLookup:
    """Files by name key for ``link_targets``; a name the vault lacks is left out."""
    files = FileNames(core.vault)

    def lookup(lang: str, keys: Collection[str]) -> dict[str, list[str]]:
        texts = [key for key in keys if is_text_name(key)]
        others = [key for key in keys if not is_text_name(key) and is_file_name(key)]
        # (a name without a suffix is not asked: no tool writes such a file, Obsidian
        # lists none, and asking for the ``Note`` of every ``[[Note]]`` walked the vault)
        found: dict[str, list[str]] = {}
        index = core.index
        if texts and index is not None:
            try:
                found.update(index.paths_named(lang, texts))
                texts = [key for key in texts if key not in found]  # (in *.assets/:
                # the index leaves those folders out, the listing holds them)
            except VaultError:
                pass  # (the index is offline: the listing answers)
        if texts:  # (a note link to nothing is common: it never makes a walk again)
            found.update(files.find(lang, texts, retry=False))
        if others:
            found.update(files.find(lang, others))
        return found

    return lookup
