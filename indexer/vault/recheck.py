"""History compared with disk after a crash: the index may have taken in changes history
never heard of (it hears of them after the index's commit), so every file history knows
is looked at again, deletions too, in the background after the start.

Renames first. A folder renamed by another program just before a crash left its notes at
paths history never heard of, their old paths alive in history. Looked at path by path
(30,000 paths: 80 s), the old paths were recorded as deleted long before the new ones
were met, so history said ``delete`` of notes that exist meanwhile, and the two halves
of each rename were recorded too far apart to be paired (``pairing.PAIR_WINDOW_MS``):
275 of 720 moved notes lost ``moved_from``. Now the pass first finds, from the index,
the notes history does not know whose bytes a path history knows had and the index no
longer holds, pairs them (``pairing.match``: by bytes, then by name) and records each
pair, the deletion then the new file naming it, before anything else.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from indexer.vault.fsops import etag_of
from indexer.vault.history.pairing import match
from indexer.vault.history.store import HistoryStore
from indexer.vault.outside import observe_external

if TYPE_CHECKING:
    from indexer.vault.vault import Vault

Key = tuple[str, str]  # (lang, path)
Indexed = Iterable[tuple[str, str, str]]  # (lang, path, etag) of every indexed note
STOP_EVERY = 256  # paths looked at between two looks at ``stop``


def recheck(vault: Vault, stop: Callable[[], bool], indexed: Callable[[], Indexed] | None) -> bool:
    """Compare every file history knows with disk and record what differs (``external``);
    False when ``stop`` said so before the end.

    ``indexed`` gives the index's notes: the renames from outside are recorded first
    (``renames_first``), and a note history does not know by its path but whose bytes
    it holds under another is recorded too (a rename keeps the notes' ctimes: nothing at
    the next start told them apart from notes history had not met yet)."""
    store = vault.recorder.store
    if store is None:
        return True
    known = store.paths()
    notes = list(indexed()) if indexed is not None else []
    done = renames_first(vault, store, known, notes, stop)
    if done is None:
        return False
    for count, key in enumerate(known):
        if count % STOP_EVERY == 0 and stop():
            return False
        if key not in done:
            observe_external(vault, *key, unknown=False)
    held = store.etags()
    seen = set(known)
    for count, (lang, path, etag) in enumerate(notes):
        if count % STOP_EVERY == 0 and stop():
            return False
        if etag in held and (lang, path) not in seen and (lang, path) not in done:
            observe_external(vault, lang, path, unknown=True)
    return True


def renames_first(
    vault: Vault,
    store: HistoryStore,
    known: list[Key],
    notes: list[tuple[str, str, str]],
    stop: Callable[[], bool],
) -> set[Key] | None:
    """Record the renames the index shows and history lacks (both paths of each), and
    return the paths looked at; None when ``stop`` said so. The gone path is read
    again under its lock before its deletion is recorded: a file back there since is
    recorded as it is, and its new namesake then pairs with nothing."""
    indexed = {(lang, path) for lang, path, _ in notes}
    known_set = set(known)
    empty = etag_of(b"")  # (empty files are alike without being one another)
    new: dict[tuple[str, str], list[str]] = {}  # (lang, etag): paths history lacks
    for lang, path, etag in notes:
        if (lang, path) not in known_set and etag != empty:
            new.setdefault((lang, etag), []).append(path)
    gone: dict[tuple[str, str], list[str]] = {}
    if new:
        for count, (lang, path) in enumerate(known):
            if count % STOP_EVERY == 0 and stop():
                return None
            if (lang, path) in indexed:
                continue
            latest = store.latest(lang, path)
            if latest is not None and latest.etag is not None and (lang, latest.etag) in new:
                gone.setdefault((lang, latest.etag), []).append(path)
    done: set[Key] = set()
    for (lang, etag), old_paths in sorted(gone.items()):
        for old, moved in match(old_paths, new[(lang, etag)]):
            if stop():
                return None
            observe_external(vault, lang, old, unknown=False)
            observe_external(vault, lang, moved, unknown=True, moved_from=old)
            done |= {(lang, old), (lang, moved)}
    return done
