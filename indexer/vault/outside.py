"""Changes made outside the tools, and what a crash left half done, in history.

The index tells (lang, path) after it synced a note it saw change on disk (watcher,
or a reconcile); the file is read under its lock and recorded
(actor ``external``) if it differs from the latest version. The lock makes a tool's own
change, seen by the watcher before the tool recorded it, wait for that record; then it
matches and adds nothing. A note history has never seen is recorded when the watcher
(or a reconcile while serving) reports it, not when the start-up reconcile does: a first
start over an existing vault of 100k notes would otherwise copy the whole vault into
history at once, while nothing is lost by waiting (the first change through a tool
records the text it replaces).

After a crash, the index may have taken in changes history never heard of (it hears of
them after the index's commit): ``indexer.vault.recheck`` compares history with disk.
``recover`` settles the versions a crash left pending,
and finishes a folder move cut short between its rename and its link rewrites. A vault
folder that is missing (a drive not mounted yet, a folder moved aside) or that this user
may not enter (its permissions taken away) is no deletion of its notes.
"""

from __future__ import annotations

import functools
import logging
import os
import stat
from contextlib import ExitStack
from typing import TYPE_CHECKING

from indexer.vault import fsops
from indexer.vault.history.rows import Seen, mode_bits, permissions
from indexer.vault.history.store import Version
from indexer.vault.refused_files import Identity, identity_of
from indexer.vault.sandbox import Target
from indexer.vault.timeline import file_kind
from shared.errors import (
    ForbiddenPathError,
    HistoryStoreError,
    StorageError,
    TooBigForHistoryError,
    VaultError,
)

if TYPE_CHECKING:
    from indexer.vault.vault import Vault

log = logging.getLogger("indexer.vault")
Outside = tuple[str, str, bool]  # (lang, path, unknown): a change the index told
Item = tuple[str, str, bool, str | None, str | None]  # and moved_from, moved_to
BATCH_FILES = 256  # files one transaction records at most (their locks held meanwhile)
BATCH_BYTES = 8 * 1024 * 1024  # and their bytes read, held in memory meanwhile


def observe_external(
    vault: Vault,
    lang: str,
    path: str,
    *,
    unknown: bool,
    moved_from: str | None = None,
    moved_to: str | None = None,
) -> None:
    """Record the file as it is now when it differs from its latest version (``moved_from``,
    ``moved_to``: the path a pass found it renamed from, or to, ``indexer.vault.recheck``)."""
    if not vault.recorder.enabled:
        return
    target = _to_record(vault, lang, path, unknown)
    if target is None:
        return
    refused = vault.recorder.refused
    with vault._lock(target):
        if refused.refused(lang, path, lambda: _identity_now(vault, target)):
            raise _refused_again(lang, path)  # (not read: 5 s a try for 1 GB)
        said, data, identity = _read_now(vault, target, identify=True)
        if not said:
            return
        try:
            vault.recorder.observe_many([_seen(vault, target, data, unknown, moved_from, moved_to)])
        except TooBigForHistoryError:
            if identity is not None and data is not None and len(data) == identity[2]:
                refused.remember(lang, path, identity)  # (as read: unchanged meanwhile)
            raise
        if refused:
            refused.forget(lang, path)


def observe_many(vault: Vault, changes: list[Outside]) -> tuple[list[Outside], StorageError | None]:
    """``observe_external`` of many changes (a checkout, a folder copied in: thousands of
    notes, a transaction each made history half of the watcher's time): up to
    ``BATCH_FILES`` files (``BATCH_BYTES`` read) at a time recorded in one transaction,
    each read and recorded under its lock, taken without waiting; a file a tool holds
    is recorded on its own after, waiting for the tool as ``observe_external`` does
    (a batch holding many locks never waits for one: no order to keep, no deadlock).
    Returns the changes left when history refuses them (a full disk), with its error:
    those of the batch it refused and all after (each file is read again then)."""
    if not vault.recorder.enabled:
        return [], None
    merged: dict[tuple[str, str], bool] = {}
    for lang, path, unknown in changes:
        merged[(lang, path)] = merged.get((lang, path), False) or unknown
    left, err = _observe_items(
        vault, [(*key, unknown, None, None) for key, unknown in merged.items()]
    )
    return [(lang, path, unknown) for lang, path, unknown, _, _ in left], err


def observe_renames(vault: Vault, pairs: list[tuple[str, str, str]]) -> None:
    """Record the renames a pass found, (lang, old path, new path), ``BATCH_FILES`` at a
    time: the deletions naming their new paths in one transaction, then the new files
    naming them (``moved_from``) in another; a kill between leaves deletions named, which
    the next start pairs (``recheck``). A folder of 3,000 notes renamed was 6,000
    transactions. ``StorageError`` when history refuses."""
    for start in range(0, len(pairs), BATCH_FILES):
        chunk = pairs[start : start + BATCH_FILES]
        gone: list[Item] = [(lang, old, False, None, new) for lang, old, new in chunk]
        arrived: list[Item] = [(lang, new, True, old, None) for lang, old, new in chunk]
        for items in (gone, arrived):
            _, err = _observe_items(vault, items)
            if err is not None:
                raise err


def _observe_items(vault: Vault, todo: list[Item]) -> tuple[list[Item], StorageError | None]:
    """``observe_many`` of distinct files (``Item``s); the ones left when history refuses.
    A batch history refuses is recorded again a file at a time: one file SQLite cannot
    take (a blob past its length limit) held back its whole batch, at every retry; when
    the first files alone are refused too, history refuses all (a full disk): the rest
    is left as it was."""
    todo, again = _refused_before(vault, todo)
    busy: list[Item] = []
    refused: list[Item] = again
    first: StorageError | None = _refused_again(*again[0][:2]) if again else None
    start = 0
    while start < len(todo):
        end, failed = _record_batch(vault, todo, start, busy)
        if failed is not None:
            items = [item for item in todo[start:end] if item not in busy]
            left, err = _one_by_one(vault, items)
            if err is not None and len(left) == len(items) > 1:
                return todo[start:] + busy + refused, err
            refused += left
            first = first or err
        start = end
    for count, (lang, path, unknown, moved_from, moved_to) in enumerate(busy):
        try:
            observe_external(
                vault, lang, path, unknown=unknown, moved_from=moved_from, moved_to=moved_to
            )
        except StorageError as err:
            return busy[count:] + refused, err
    return refused, first


def _refused_before(vault: Vault, todo: list[Item]) -> tuple[list[Item], list[Item]]:
    """(the changes of ``todo`` to read, those of files history refused for good as they
    still are: left waiting unread, ``RefusedFiles``)."""
    refused = vault.recorder.refused
    if not refused:
        return todo, []
    again: list[Item] = []
    rest: list[Item] = []
    for item in todo:
        lang, path = item[:2]
        same = refused.refused(lang, path, functools.partial(_identity_at, vault, lang, path))
        (again if same else rest).append(item)
    return rest, again


def still_refused(vault: Vault, lang: str, path: str) -> Identity | None:
    """The identity history refused the file at (lang, path) with for good, when it is
    still so (a stat); None otherwise (``Unrecorded.close``: such a file is not lost)."""
    kept = vault.recorder.refused.kept(lang, path)
    return kept if kept is not None and _identity_at(vault, lang, path) == kept else None


def _refused_again(lang: str, path: str) -> TooBigForHistoryError:
    return TooBigForHistoryError(
        f"the history could not record the change of {lang}/{path} (the file is larger"
        " than history can store; it is read again once it changes); nothing was changed"
    )


def _identity_at(vault: Vault, lang: str, path: str) -> Identity | None:
    try:
        target = vault.sandbox.resolve(lang, path, summary=True)
    except (VaultError, OSError):
        return None
    return _identity_now(vault, target)


def _identity_now(vault: Vault, target: Target) -> Identity | None:
    """The identity of the plain file at ``target`` (None: none there, or no look)."""
    try:
        with vault.sandbox.open(target) as place:
            info = place.lstat()
    except (VaultError, OSError):
        return None
    return identity_of(info) if info is not None and stat.S_ISREG(info.st_mode) else None


def _record_batch(
    vault: Vault, todo: list[Item], start: int, busy: list[Item]
) -> tuple[int, Exception | None]:
    """Record the changes of ``todo`` from ``start`` in one transaction, up to a batch's
    bound; those whose lock another holds go to ``busy``. Where the next batch starts,
    and why history refused this one (None: recorded). ``HistoryStoreError`` (closed,
    damaged) is raised: no file can be recorded then."""
    end = start
    with ExitStack() as held:
        seen: list[Seen] = []
        size = 0
        while end < len(todo) and len(seen) < BATCH_FILES and size < BATCH_BYTES:
            item = todo[end]
            lang, path, unknown, moved_from, moved_to = item
            end += 1
            target = _to_record(vault, lang, path, unknown)
            if target is None:
                continue
            lock = vault._lock(target)
            if not lock.acquire(blocking=False):  # (a tool's, or this batch's: the same
                busy.append(item)  # file under another spelling)
                continue
            held.callback(lock.release)
            said, data, _ = _read_now(vault, target)
            if said:
                seen.append(_seen(vault, target, data, unknown, moved_from, moved_to))
                size += 0 if data is None else len(data)
        try:
            vault.recorder.observe_many(seen)
        except HistoryStoreError:
            raise
        except Exception as err:  # (StorageError; a blob past 2 GiB: OverflowError)
            return end, err
    return end, None


def _seen(
    vault: Vault,
    target: Target,
    data: bytes | None,
    unknown: bool,
    moved_from: str | None,
    moved_to: str | None,
) -> Seen:
    """The file at ``target`` as read (``data``), a deletion with its mode (``_gone_mode``)."""
    mode, of = _gone_mode(vault, target, moved_to) if data is None else (None, None)
    return Seen(target.lang, target.rel, data, unknown, False, moved_from, moved_to, mode, of)


def _gone_mode(vault: Vault, old: Target, moved_to: str | None) -> tuple[int | None, str | None]:
    """The permissions of a file gone from ``old``, for its deletion's row as a delete's
    (a restore of the old path makes it so again: it was 0644 less the umask), and the
    etag of the text they go with (None: the file's as it went). Renamed to ``moved_to``
    (a pass found it there): the file's there; else (an ``rm``, a rename the watcher
    pairs by time) those the index's row kept, the row the index removed as it tells
    (``Recorder.gone_mode``), with its hash. (None, None) when neither is known."""
    if moved_to is not None:
        return _moved_mode(vault, old, moved_to), None
    gone = vault.recorder.gone_mode(old.lang, old.rel)
    if gone is None:
        return None, None
    digest, mode, gid = gone
    try:
        with vault.sandbox.open(old) as home:
            return mode_bits(mode, gid, home.dir_fd), digest
    except (VaultError, OSError):  # (the folder gone too: the process's group)
        return mode_bits(mode, gid, None), digest


def _moved_mode(vault: Vault, old: Target, moved_to: str) -> int | None:
    """The permissions of a file a pass found renamed away from ``old`` to ``moved_to``,
    as it is there (one stat). None: no plain file there now."""
    try:
        new = vault.sandbox.resolve(old.lang, moved_to, summary=True)
        with vault.sandbox.open(new) as place, vault.sandbox.open(old) as home:
            info = place.lstat()
            plain = info is not None and stat.S_ISREG(info.st_mode)
            return permissions(info, home.dir_fd) if plain and info is not None else None
    except (VaultError, OSError):
        return None


def _one_by_one(vault: Vault, items: list[Item]) -> tuple[list[Item], StorageError | None]:
    """Record each of a refused batch's changes in a transaction of its own; those
    history refuses (``StorageError``), with the first error. A change that fails
    otherwise is logged and dropped, as one told alone was. Stops once the first two are
    refused (none taken): history refuses every file then, and all are left."""
    left: list[Item] = []
    first: StorageError | None = None
    for count, item in enumerate(items):
        lang, path, unknown, moved_from, moved_to = item
        try:
            observe_external(
                vault, lang, path, unknown=unknown, moved_from=moved_from, moved_to=moved_to
            )
        except HistoryStoreError:
            raise
        except StorageError as err:
            left.append(item)
            first = first or err
            if len(left) == count + 1 >= 2:
                return left + items[count + 1 :], first
        except Exception:
            log.exception("history could not record the change of %s/%s", lang, path)
    return left, first


def _to_record(vault: Vault, lang: str, path: str, unknown: bool) -> Target | None:
    """The file of a change to record; None when there is nothing to say of it: no file
    of the vault's kinds, first seen by the start-up scan (recorded at its first change,
    lazily), or in a vault that is not there (an unmounted drive, a folder moved aside:
    no note was deleted)."""
    try:  # (a folder's summary too: a hand edit, or ``indexer summarize`` while served)
        target = vault.sandbox.resolve(lang, path, summary=True)
    except (VaultError, OSError):  # a vault this user may not enter: nothing can be said
        return None
    if file_kind(target) is None:
        return None
    store = vault.recorder.need()
    if not unknown and store.latest(target.lang, target.rel) is None:
        return None
    if not _vault_present(vault, target.lang):
        return None
    return target


def _read_now(
    vault: Vault, target: Target, *, identify: bool = False
) -> tuple[bool, bytes | None, Identity | None]:
    """(whether anything can be said of the file, its bytes: None when it is gone, with
    ``identify`` its identity as it was read: ``RefusedFiles``); call with its lock held."""
    try:
        with vault.sandbox.open(target) as place:
            info = place.lstat() if identify else None
            data = vault._existing_bytes(place)
    except (VaultError, IsADirectoryError):
        # hard links, too big: a file still, bytes no tool may take (nothing said); a
        # folder or a link now, or a folder on the way became a file: gone
        return _no_file_at(vault, target), None, None
    except OSError:  # (permission denied): nothing can be said of it, no change heard
        return False, None, None
    plain = info is not None and stat.S_ISREG(info.st_mode)
    return True, data, identity_of(info) if plain and info is not None else None


def history_lacks(vault: Vault, lang: str, path: str) -> bool:
    """Whether history has no version of the note (the index then keeps the text an
    outside change replaces: ``indexer.index.befores``)."""
    store = vault.recorder.store
    try:
        return store is not None and store.latest(lang, path) is None
    except HistoryStoreError as err:  # (closed at shutdown, damaged): the sync goes on
        log.warning("history: could not look up %s/%s: %s", lang, path, err.message)
        return False


def keep_before(vault: Vault, lang: str, path: str, data: bytes) -> None:
    """Record ``data``, the text the index held before an outside change of a note
    history never saw, as that note's first version (``baseline``), before the change
    itself is recorded: an edit or a deletion by another program can be undone. Not
    when history has met the note meanwhile (a tool's write recorded the text it
    replaced), nor for more bytes than a tool may write."""
    keep_befores(vault, [(lang, path, data)])


def keep_befores(vault: Vault, texts: list[tuple[str, str, bytes]]) -> None:
    """``keep_before`` of many notes (a checkout of notes history never saw made a
    transaction of each text) in one transaction, under the files' locks taken without
    waiting; a file a tool holds is done alone after, waiting for the tool. Raises
    ``StorageError`` when history refuses (the index keeps the texts for a later pass)."""
    if not vault.recorder.enabled:
        return
    busy: list[tuple[str, str, bytes]] = []
    with ExitStack() as held:
        seen: list[Seen] = []
        for lang, path, data in texts:
            if len(data) > vault.max_file_bytes:
                continue
            try:
                target = vault.sandbox.resolve(lang, path, summary=True)
            except (VaultError, OSError):
                continue
            lock = vault._lock(target)
            if not lock.acquire(blocking=False):  # (a tool's, or another spelling's here)
                busy.append((lang, path, data))
                continue
            held.callback(lock.release)
            if vault.recorder.need().latest(target.lang, target.rel) is None:
                seen.append(Seen(target.lang, target.rel, data, unknown=True, kept=True))
        vault.recorder.observe_many(seen)
    for lang, path, data in busy:
        try:
            target = vault.sandbox.resolve(lang, path, summary=True)
        except (VaultError, OSError):
            continue
        with vault._lock(target):
            if vault.recorder.need().latest(target.lang, target.rel) is None:
                vault.recorder.observe(target.lang, target.rel, data, unknown=True, kept=True)


def history_durable(vault: Vault) -> None:
    """Make history's last commits survive a power loss (its WAL, ``synchronous=NORMAL``,
    is synced at checkpoints only): the index then lets go of the texts it kept for it
    (``indexer.index.kept_texts``)."""
    store = vault.recorder.store
    if store is None:
        return
    try:
        fd = os.open(f"{store.path}-wal", os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:  # (checkpointed: the file itself was synced)
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _vault_present(vault: Vault, lang: str) -> bool:
    try:
        return vault.sandbox.vault_root(lang) is not None
    except (VaultError, OSError):  # a file, a link to nothing, kept out: not there either
        return False


def _no_file_at(vault: Vault, target: Target) -> bool:
    """Whether no plain file is at ``target``'s path any more, as the sandbox walks it
    (links never followed): a folder, a symbolic link or a special file in its place, or
    one of its folders replaced by a file or a link. The vault serves no note there (the
    index dropped it too): it is gone, as a delete would have it. False when the vault
    or a folder on the way may not be entered (nothing can be told of its notes)."""
    try:
        root = vault.sandbox.vault_root(target.lang)
        if root is None:
            return False
        found = fsops.lstat_under(str(root), target.rel)
    except ForbiddenPathError:  # a folder on the way is a link or a file now
        return True
    except (VaultError, OSError):
        return False
    return found is None or not stat.S_ISREG(found.st_mode)


def history_since_ns(vault: Vault) -> int | None:
    """When history last recorded a change (epoch ns), None without one: an index built
    anew beside it (deleted, an upgrade's newer schema) tells files changed since as made
    while no indexer ran, and has history compared with disk (deletions too)."""
    store = vault.recorder.store
    newest = store.newest_ms() if store is not None else None
    return newest * 1_000_000 if newest is not None else None


def recover(vault: Vault) -> tuple[int, int]:
    store = vault.recorder.store
    if store is None:
        return 0, 0

    def current_etag(lang: str, path: str) -> str | bool | None:
        """The file's etag now (None: no file); False when its vault is missing and
        nothing can be told (a drive not mounted yet: the change is kept)."""
        if not _vault_present(vault, lang):
            return False
        try:
            data = _current(vault, vault.sandbox.resolve(lang, path))
        except VaultError:
            return None
        except OSError:  # (permission denied): nothing can be told, the change is kept
            return False
        return None if data is None else fsops.etag_of(data)

    def finish_move(row: Version, etag: str) -> bool:
        """Rewrite the links of a note a folder move had moved when the crash came."""
        data = vault.recorder.content(row)
        if data is None:
            return False
        try:
            target = vault.sandbox.resolve(row.lang, row.path)
            with vault.sandbox.open(target) as place:
                place.commit(data, if_match=etag)
        except (VaultError, OSError) as err:
            log.warning("could not finish the move of %s/%s: %s", row.lang, row.path, err)
            return False
        return True

    return store.recover(current_etag, finish_move)


def _current(vault: Vault, target: Target) -> bytes | None:
    """The file's bytes now, or None when it does not exist (or is not a plain file)."""
    try:
        with vault.sandbox.open(target) as place:
            return vault._existing_bytes(place)
    except (VaultError, IsADirectoryError):
        return None
