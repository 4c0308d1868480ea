"""Which files of a vault the index cannot vouch for yet: grep reads those (and takes
the index's word for the rest) only while the watcher can tell them all."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from indexer.index.keeper import Keeper
from indexer.index.local_fs import LocalFolders

if TYPE_CHECKING:
    from indexer.index.watcher import VaultWatcher


def changed_since(
    watcher: VaultWatcher | None,
    keeper: Keeper | None,
    local: LocalFolders,
    vault: Path,
    lang: str,
    others: Callable[[], set[str]],
) -> frozenset[str] | None:
    """The files of ``lang`` (its vault at ``vault``) that may differ from their rows in
    a snapshot of the index taken after this call: those the watcher saw change and has
    not applied yet, and ``others`` (hard-linked files, appends not flushed). None when
    the watcher cannot vouch for the rest: not caught up with disk (start-up, lost
    events), no inotify, a folder changing, a folder left unwatched, a linked vault (a
    link can change under it), or a vault not on a local file system (``local_fs``:
    another machine's edits make no event).

    The watcher's barrier comes first: every change made before this call is then
    either applied (so a later snapshot holds it) or in the set returned."""
    if watcher is None or keeper is None or keeper.partial:
        return None
    if vault.is_symlink() or vault.parent.is_symlink() or not local.is_local(vault):
        return None
    if not watcher.caught_up():
        return None
    pending = watcher.pending(lang)
    if pending is None or keeper.partial:
        return None
    return frozenset(pending | others())
