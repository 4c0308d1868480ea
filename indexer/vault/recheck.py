"""History compared with disk after a crash: the index may have taken in changes history
never heard of (it hears of them after the index's commit), so every file history knows
is looked at again, deletions too, in the background after the start: read again where
its latest version is not the text the index holds (the start-up reconcile has just made
the index equal to disk), no file of the others (``_as_indexed``).

Renames first. A folder renamed by another program just before a crash left its notes at
paths history never heard of, their old paths alive in history. Looked at path by path
(30,000 paths: 80 s), the old paths were recorded as deleted long before the new ones
were met, so history said ``delete`` of notes that exist meanwhile, and the two halves
of each rename were recorded too far apart to be paired (``pairing.PAIR_WINDOW_MS``):
275 of 720 moved notes lost ``moved_from``. Now the pass first finds, from the index,
the notes history does not know whose bytes a path history knows had and the index no
longer holds, pairs them (``pairing.match``: by bytes, then by name) and records each
pair, the deletion then the new file naming it, before anything else.

Any pass that finds both halves of renames does so: the changes a catch-up tells (a
renamed note's new path among the notes changed, its old one at the end) are paired
first (``renames_told``), whatever time the telling takes. A pair's deletion names its
new path as it is recorded (``moved_to``): a kill before the new file's row leaves a
deletion naming a path history lacks, which the next start's pass pairs. (A deletion
recorded unnamed is paired by no later pass: the watcher's, followed much later by a
file of its bytes, is a copy a person made back, which nothing at a start tells apart.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from indexer.vault.fsops import etag_of
from indexer.vault.history.pairing import match
from indexer.vault.history.store import HistoryStore
from indexer.vault.outside import BATCH_FILES, observe_external, observe_renames

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
    latest = store.latest_etags()
    current = {(lang, path): etag for lang, path, etag in notes}
    for count, key in enumerate(known):
        if count % STOP_EVERY == 0 and stop():
            return False
        if key not in done and not _as_indexed(latest.get(key), current.get(key)):
            observe_external(vault, *key, unknown=False)
    held = store.etags()
    seen = set(known)
    for count, (lang, path, etag) in enumerate(notes):
        if count % STOP_EVERY == 0 and stop():
            return False
        if etag in held and (lang, path) not in seen and (lang, path) not in done:
            observe_external(vault, lang, path, unknown=True)
    return True


def _as_indexed(latest: str | None, indexed: str | None) -> bool:
    """Whether history's latest version of a path is the text the index holds for it:
    the start-up reconcile just made the index equal to disk (and the watcher, on
    before it, hears any change since), so the file need not be read again (100,000
    paths read one by one: 80 s of a start after a kill)."""
    return latest is not None and latest == indexed


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
    recorded as it is, and its new namesake then pairs with nothing. A deletion a pass
    recorded naming its new path (``moved_to``), killed before that path's row, is
    paired now: the pass had found the pair."""
    indexed = {(lang, path) for lang, path, _ in notes}
    known_set = set(known)
    new = _by_bytes(
        (lang, path, etag) for lang, path, etag in notes if (lang, path) not in known_set
    )
    if not new:
        return set()
    gone = _gone(store, [key for key in known if key not in indexed], new, stop)
    if gone is None:
        return None
    return _record(vault, *gone, stop)


def renames_told(vault: Vault, told: list[tuple[str, str, str | None]]) -> None:
    """Record first the renames among a pass's changes, (lang, path, the index's etag:
    None when the index dropped the path): each deletion paired with the new file of
    its bytes (``match``) and named with it, however long the pass takes to tell the
    rest (a start's catch-up of 30,000 renames made while no indexer ran met the
    deletions after every new file: 80 s apart, past ``pairing.PAIR_WINDOW_MS``)."""
    store = vault.recorder.store
    if store is None:
        return
    gone_keys = list(dict.fromkeys((lang, path) for lang, path, etag in told if etag is None))
    if not gone_keys or len(gone_keys) == len(told):
        return
    new = _by_bytes(
        (lang, path, etag)
        for lang, path, etag in told
        if etag is not None and store.latest(lang, path) is None
    )
    gone = _gone(store, gone_keys, new, _never) if new else None
    if gone is not None:
        _record(vault, *gone, _never)


def _never() -> bool:
    return False


def _by_bytes(notes: Iterable[tuple[str, str, str]]) -> dict[tuple[str, str], list[str]]:
    """The paths of ``notes`` by (lang, etag), but empty files (alike without being one
    another)."""
    empty = etag_of(b"")
    new: dict[tuple[str, str], list[str]] = {}
    for lang, path, etag in notes:
        if etag != empty:
            new.setdefault((lang, etag), []).append(path)
    return new


Gone = tuple[dict[tuple[str, str], list[str]], dict[tuple[str, str], list[str]], list[Key]]


def _gone(
    store: HistoryStore,
    keys: list[Key],
    new: dict[tuple[str, str], list[str]],
    stop: Callable[[], bool],
) -> Gone | None:
    """(the gone paths of ``keys`` history holds alive with the bytes of a new file, by
    (lang, etag); ``new``; the (lang, new path) of each deletion a killed pass named)."""
    lacking = {(lang, path) for (lang, _), paths in new.items() for path in paths}
    gone: dict[tuple[str, str], list[str]] = {}
    named: list[Key] = []
    for count, (lang, path) in enumerate(keys):
        if count % STOP_EVERY == 0 and stop():
            return None
        latest = store.latest(lang, path)
        if latest is None:
            continue
        if latest.etag is not None and (lang, latest.etag) in new:
            gone.setdefault((lang, latest.etag), []).append(path)
        elif latest.op == "delete" and (lang, latest.other_path) in lacking:
            named.append((lang, path))
    return gone, new, named


def _record(
    vault: Vault,
    gone: dict[tuple[str, str], list[str]],
    new: dict[tuple[str, str], list[str]],
    named: list[Key],
    stop: Callable[[], bool],
) -> set[Key] | None:
    """Record each pair: the deletion naming its new path, then the new file naming it
    (a kill between leaves the deletion named, paired at the next start), a batch of
    pairs at a time (``observe_renames``)."""
    store = vault.recorder.need()
    done: set[Key] = set()
    for lang, old in named:
        latest = store.latest(lang, old)
        moved = latest.other_path if latest is not None else None
        if moved is not None:
            observe_external(vault, lang, moved, unknown=True, moved_from=old)
            done |= {(lang, old), (lang, moved)}
    pairs: list[tuple[str, str, str]] = []
    for (lang, etag), old_paths in sorted(gone.items()):
        arrived = [path for path in new[(lang, etag)] if (lang, path) not in done]
        pairs += [(lang, old, moved) for old, moved in match(old_paths, arrived)]
    for start in range(0, len(pairs), BATCH_FILES):  # (not those named by a deletion)
        if stop():
            return None
        chunk = pairs[start : start + BATCH_FILES]
        observe_renames(vault, chunk)
        done |= {(lang, path) for lang, old, moved in chunk for path in (old, moved)}
    return done
