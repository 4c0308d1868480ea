"""``undo``: put back everything one memory entry changed.

The Memory Writer passes ``reason="entry:<id> <title>"`` on each write for an entry;
the files of the entry are those with a version whose reason's first word is
``entry:<id>``. Each file must hold exactly the entry's newest version of it (else
``conflict``: someone changed it since, and nothing at all is changed; a later change
that was itself undone is no obstacle); it then goes back to the version just before
the entry's run of versions ending there (or is deleted when the entry created it).
Checks and changes run with every file's lock held, so the all-or-nothing holds
against concurrent writers. An edit by someone else between two writes of the entry is
kept (as the writer's old journal did: their text wins over our undo). The undo's own
versions carry ``reason="undo entry:<id>"``, which does not match the entry again. A
file whose changes by the entry an undo of the entry already took back is left alone,
whatever came since (the writer's rollback of a failed merge is such an undo, and the
entry's later writes may go to other files); an undo that finds nothing else to do
refuses (``conflict``, already undone). The folders such a file left go once the
undo ends, as those of the files it took back do: an undo killed midway, run again
after the restart, leaves no empty folder either, nor one killed after its last file
(run again, it removes them and says "already undone"). If retention has pruned the
version an undo needs, it refuses rather than guess; so too when it let go an entry's
version of any file (one no undo of the entry took back, ``retention``): the rest of
the entry would be undone alone, said to be done.
"""

from __future__ import annotations

import logging
import os
import posixpath
from collections.abc import Callable
from contextlib import suppress
from typing import TYPE_CHECKING, Any

from indexer.vault import (
    fsops,
    lone_summaries,
    move_leftovers,
    oserrors,
    undo_batches,
    undo_moves,
)
from indexer.vault.asset_folders import remove_emptied_folder
from indexer.vault.history.rows import PUT_BACK, first_word, permissions
from indexer.vault.history.store import Change, HistoryStore, Version
from indexer.vault.recording import UNDO_REASON, Batch
from indexer.vault.sandbox import Target
from indexer.vault.timeline import etag_or_absent, newest_first
from indexer.vault.undo_moves import Plan
from shared.errors import (
    ConflictError,
    ForbiddenPathError,
    InvalidArgumentError,
    NotFoundError,
)
from shared.langs import check_lang
from shared.models import ENTRY_ID_RE

if TYPE_CHECKING:
    from indexer.vault.vault import Vault

log = logging.getLogger("indexer.vault")
_PUT_BACK = PUT_BACK  # the reason's end on a file a failed undo gave back
_LOOKED_AT = 1000  # versions of a path a refusal looks through to follow a moved file


def undo(vault: Vault, lang: str, entry_id: str, dry_run: bool) -> dict:
    if not isinstance(entry_id, str) or not ENTRY_ID_RE.fullmatch(entry_id):
        raise InvalidArgumentError("entry_id must be the id of a memory entry (letters, digits)")
    if not isinstance(dry_run, bool):
        raise InvalidArgumentError("dry_run must be true or false")
    store = vault.recorder.need()
    word = f"entry:{entry_id}"
    paths = store.paths_with_reason(check_lang(lang), word)
    if store.entry_pruned(lang, word):  # (what is left of it would be undone alone)
        raise ConflictError(
            f"entry {entry_id} cannot be undone, nothing was changed: history no longer"
            " holds all of its changes (retention let the oldest versions of a file it"
            " changed go; see INDEXER_HISTORY_DAYS)"
        )
    if not paths:
        raise NotFoundError(f"no change in this vault was made for entry {entry_id}")
    targets = [vault.sandbox.resolve(lang, p, summary=True) for p in paths]

    def ours(row: Version) -> bool:
        return first_word(row.reason) == word

    def taken_back(row: Version) -> bool | None:
        """True for an undo of the entry; None for the put-back that cancelled one."""
        if row.reason == UNDO_REASON + entry_id:
            return True
        return None if row.reason == UNDO_REASON + entry_id + _PUT_BACK else False

    plans: list[Plan] = []
    modes: dict[str, int] = {}  # a file the undo takes away: its mode (``_undo_all``)
    conflicts: list[str] = []
    gone: list[str] = []  # files an earlier undo of the entry took away (killed midway?)
    with vault.locked(targets):
        # Each file is opened while it is checked, and again while it is changed (the
        # locks keep the tools out; a change is made only over the bytes checked): all
        # held open at once, an entry that moved a folder of thousands of notes ran out
        # of descriptors at every try.
        read_only: list[str] = []
        for target in targets:
            with vault.sandbox.open(target) as place:
                current = vault._existing_bytes(place)
                info = place.lstat()
                etag = None if current is None else fsops.etag_of(current)
                found = _undo_target(store, target, etag, ours, taken_back)
                goes = not isinstance(found, str) and found is not None and found[1] is None
                if goes and info is not None and current is not None:  # (``restore``)
                    modes[target.rel] = permissions(info, place.dir_fd)
            if isinstance(found, str):
                conflicts.append(f"{target.rel} ({found})")
            elif found is None and current is None:
                gone.append(target.rel)
            elif found is not None:
                plans.append((target, current, *found))
                changes = found[1] is None or found[1].etag != etag
                if current is not None and info is not None and changes and fsops.read_only(info):
                    read_only.append(target.rel)  # (a note it made was deleted all the same)
        if read_only and not conflicts:
            raise ForbiddenPathError(
                f"entry {entry_id} cannot be undone, nothing was changed: "
                + ", ".join(read_only[:5])
                + (f" and {len(read_only) - 5} more" if len(read_only) > 5 else "")
                + (" is" if len(read_only) == 1 else " are")
                + " read-only (permissions that do not let the indexer change it)"
            )
        if conflicts:
            raise ConflictError(
                f"entry {entry_id} cannot be undone, nothing was changed: "
                + "; ".join(conflicts[:5])
                + (f" and {len(conflicts) - 5} more" if len(conflicts) > 5 else "")
            )
        results = _undo_all(vault, plans, modes, entry_id, dry_run) if plans else []
    if not plans:  # already undone: but an undo killed after its last file left folders
        if not dry_run:
            _remove_left_folders(vault, lang, entry_id, gone)
        undone = [f"{target.rel} (already undone)" for target in targets]
        raise ConflictError(
            f"entry {entry_id} cannot be undone, nothing was changed: "
            + "; ".join(undone[:5])
            + (f" and {len(undone) - 5} more" if len(undone) > 5 else "")
        )
    if not dry_run:  # an *.assets/ folder the entry's files were all that was in goes too
        for target in {t.rel.rsplit("/", 1)[0]: t for t, *_ in plans if t.in_assets}.values():
            remove_emptied_folder(vault.sandbox, target)
        undone_files = [(t.rel, latest, before, first) for t, _, latest, before, first in plans]
        summaries: list[Target] = []  # (those of the folders emptied: they go too)
        reason = UNDO_REASON + entry_id

        def drop_summary(folder: str, fd: int) -> bool:
            return lone_summaries.drop(vault, lang, folder, fd, reason, summaries)

        move_leftovers.after_undo(vault.sandbox, lang, undone_files, drop_summary)
        vault.recorder.settle()
        vault._notify_all(summaries)
        _remove_left_folders(vault, lang, entry_id, gone)
    return {"entry_id": entry_id, "dry_run": dry_run, "files": results}


def _remove_left_folders(vault: Vault, lang: str, entry_id: str, gone: list[str]) -> None:
    """An undo killed after some files went back (or after its last one) never removed
    the folders those left: run again, it removes them, whether it takes the rest back
    or finds nothing else to undo ("already undone"). Only folders empty but for a
    summary the job wrote go (``move_leftovers``): one a person put a file in stays."""
    summaries: list[Target] = []
    reason = UNDO_REASON + entry_id

    def drop_summary(folder: str, fd: int) -> bool:
        return lone_summaries.drop(vault, lang, folder, fd, reason, summaries)

    move_leftovers.bring_back(
        vault.sandbox, lang, [(posixpath.dirname(rel), "") for rel in gone], drop_summary
    )
    vault.recorder.settle()
    vault._notify_all(summaries)


def _undo_all(
    vault: Vault, plans: list[Plan], modes: dict[str, int], entry_id: str, dry_run: bool
) -> list[dict]:
    """Undo each plan (an image before its note, whose folder then goes; a file moved
    by the entry renamed back, ``undo_moves``); their results in the plans' order (the
    ``modes`` of the files it takes away kept on their rows, as a delete's are). A
    disk error midway puts back what was undone, and is said of the file it hit. The
    files changed are told to the index together (``told``), in one transaction; their
    history rows are begun in batches (``undo_batches``), in one transaction each (one per
    file took most of an undo of a 10,000-note folder move: 10,001 transactions)."""
    paired = {} if dry_run else undo_moves.pairs(plans)
    told: list[Target] = []
    results: dict[int, dict] = {}
    done: list[int] = []  # in the order undone
    units = undo_batches.units(plans, paired)
    index = units[0][0] if units else 0
    reason = UNDO_REASON + entry_id
    try:
        with undo_moves.FolderSyncs() as syncs:
            for chunk in undo_batches.batches(plans, units):
                datas = undo_batches.datas(vault, plans, chunk)
                changes = [] if dry_run else undo_batches.changes(plans, chunk, datas, modes)
                batch = vault.recorder.begin_many(changes, actor="tool", reason=reason)
                try:
                    for unit in chunk:
                        index = unit[0]
                        if len(unit) == 1:
                            plan, data = plans[index], datas.get(index)
                            results[index] = _undo_one(
                                vault, plan, data, dry_run, told, batch, syncs
                            )
                            done.append(index)
                        else:
                            _undo_pair(vault, plans, unit, batch, syncs, told, results, done)
                        if syncs.full:  # (once the results are kept: a failure puts them back)
                            syncs.flush()
                finally:
                    batch.drop_rest()
            syncs.flush()
    except BaseException as err:
        vault._notify_all(told)  # (what was undone; each put-back tells its own)
        for undone in done:
            if "version" in results[undone]:
                _put_back(vault, plans[undone], entry_id)
        failed = plans[index][0].rel  # (the one it was undoing)
        described = oserrors.describe(err) if isinstance(err, OSError) else None
        if described is not None:  # said of which file (the entry has several)
            described.message = f"{failed}: {described.message}"
            described.args = (described.message,)
            raise described from None
        raise
    vault._notify_all(told)
    return [results[i] for i in range(len(plans))]


def _undo_pair(
    vault: Vault,
    plans: list[Plan],
    unit: tuple[int, ...],
    batch: Batch,
    syncs: undo_moves.FolderSyncs,
    told: list[Target],
    results: dict[int, dict],
    done: list[int],
) -> None:
    """A file moved by the entry, renamed back (or, across two file systems, written
    back and then deleted: each is ``done`` in history on its own)."""
    home, away = undo_batches.home_away(plans, unit)
    back = undo_moves.move_back(vault, plans[home], plans[away], batch, syncs, told)
    if back is None:
        for index in (home, away):
            plan = plans[index]
            data = plans[away][1] if index == home else None
            results[index] = _undo_one(vault, plan, data, False, told, batch)
            done.append(index)
        return
    results[home], results[away] = back
    done += [away, home]  # (put back in this order: the file is never absent)


def _who(row: Version) -> str:
    return f"{row.actor} in version {row.version}" + (f", {row.reason!r}" if row.reason else "")


def _changed_since(store: HistoryStore, later: list[Version], etag: str | None) -> str:
    """Why a file no longer holds the entry's version, from the changes since (newest
    first), named as ``history`` shows them: a move away says where to, a delete that
    it is gone ("changed" said nothing of either); a rename by another program is a
    ``delete`` row naming where the file went (``pairing``): a move too, not a loss;
    one moved on from there (renamed again, its folder moved) is followed to where it
    is now, or said to be deleted where it went (the move back asked for was of a path
    with no file). Else the change that blocks is named, the oldest one no undo took
    back (the newest alone named the undo of a later entry, while a person's edit
    before it, which that undo kept, was what blocked), and the newest beside it.
    ``etag`` is the file's on disk (None: absent)."""
    if not later:
        return "deleted on disk since" if etag is None else "edited on disk since"
    newest = later[0]
    if newest.etag is None and newest.other_path is not None:
        moved = f"moved since to {newest.other_path} by {_who(newest)}"
        where, deleted = _moved_on(store, newest.lang, newest.path, newest.other_path)
        if where != newest.other_path:
            moved += f", then on to {where}"
        if deleted is not None:
            return f"{moved}, then deleted there by {_who(deleted)}"
        return f"{moved}: move it back first"
    if newest.etag is None:
        return f"deleted since by {_who(newest)}"
    blocker = _first_kept(later)
    if blocker is None or blocker is newest:
        return f"changed since by {_who(newest)}"
    return f"changed since by {_who(blocker)}; the newest change: {_who(newest)}"


def _moved_on(store: HistoryStore, lang: str, origin: str, path: str) -> tuple[str, Version | None]:
    """Where a file moved from ``origin`` to ``path`` is now, along the moves history
    recorded since: (its path, and the version that deleted it there, if one did). At
    each path, the file's own versions are those from its arrival to its going (a later
    note made there is another file)."""
    came_from = origin
    seen = {origin, path}
    while (gone := _gone_from(store, lang, path, came_from)) is not None:
        if gone.other_path is None:
            return path, gone
        if gone.other_path in seen:  # (history says it went in a circle: stop there)
            break
        seen.add(gone.other_path)
        came_from, path = path, gone.other_path
    return path, None


def _gone_from(store: HistoryStore, lang: str, path: str, came_from: str) -> Version | None:
    """The version that took the file moved in from ``came_from`` away from ``path`` (a
    move away or a deletion), None while it is still there (or its arrival is no longer
    among the versions looked at)."""
    rows = store.versions(lang, path, _LOOKED_AT)
    arrived = next(
        (i for i, row in enumerate(rows) if row.other_path == came_from and row.etag), None
    )
    rows = [] if arrived is None else rows[:arrived]
    return next((row for row in reversed(rows) if row.etag is None), None)


def _first_kept(later: list[Version]) -> Version | None:
    """The oldest of ``later`` (newest first) that is no undo and that no undo took
    back since (an undo a failed undo's put-back cancelled counts for nothing)."""
    undos: dict[str, int] = {}  # entry id -> its undos met, less the put-backs met
    kept: Version | None = None
    for row in later:
        reason = row.reason or ""
        if reason.startswith(UNDO_REASON):
            entry = reason.removeprefix(UNDO_REASON)
            if entry.endswith(_PUT_BACK):
                entry = entry.removesuffix(_PUT_BACK)
                undos[entry] = undos.get(entry, 0) - 1
            else:
                undos[entry] = undos.get(entry, 0) + 1
            continue
        word = first_word(reason) or ""
        if word.startswith("entry:") and undos.get(word.removeprefix("entry:"), 0) > 0:
            continue
        kept = row
    return kept


def _undo_target(
    store: HistoryStore,
    target: Target,
    etag: str | None,
    ours: Callable[[Version], bool],
    undoes: Callable[[Version], bool | None],
) -> tuple[Version, Version | None, Version] | str | None:
    """(the entry's newest version of the file, the version to go back to: the newest
    before the entry's run of versions ending there, None when the entry created the
    file, the oldest of that run), or why the file cannot be undone, or None when an
    undo of the entry already took its changes back (``undoes`` True; an undo that
    failed midway was put back, ``undoes`` None, and counts for nothing). Else the file
    must hold exactly the entry's newest version: changes made since and undone again
    are fine, others are not."""
    rows = newest_first(store, target)
    later: list[Version] = []  # the changes since the entry's, newest first
    undone = False
    put_back = 0  # put-backs met, newest first, each cancelling the next older undo
    for row in rows:
        if ours(row):
            break
        taken = undoes(row)
        if taken is None:
            put_back += 1
        elif taken and put_back:
            put_back -= 1
        elif taken:
            undone = True
        later.append(row)
    else:
        return "history no longer holds the entry's version"
    if undone:
        return None
    if row.etag != etag:
        return _changed_since(store, later, etag)
    newest, oldest = row, row
    for row in rows:
        if not ours(row):
            return newest, row, oldest
        oldest = row
    if oldest.prev_etag is None:
        return newest, None, oldest
    return "history no longer holds its text from before the entry"


def _undo_one(
    vault: Vault,
    plan: Plan,
    data: bytes | None,
    dry_run: bool,
    told: list[Target],
    batch: Batch,
    syncs: undo_moves.FolderSyncs | None = None,
) -> dict:
    """Undo one file by writing ``data`` (or deleting it: None); it is added to ``told``,
    its history row (begun in ``batch``) made final. A file written back leaves its
    folder's fsync to ``syncs`` (once per folder before the undo answers: it was one per
    file, half the fsyncs of an undo of appends to 10,000 notes)."""
    target, current, latest, before, _ = plan
    result: dict[str, Any] = {
        "path": target.rel,
        "from_version": latest.version,
        "to_version": None if before is None else before.version,
        "deleted": data is None,
        "unchanged": data == current,  # (as before the entry already: nothing to do)
    }
    if dry_run or data == current:
        return result
    with vault.sandbox.open(target) as place:
        if data is not None:  # only over what was checked (see ``restore``)
            if current is None and latest.etag is None:  # (the entry took it away)
                place.mode = vault.recorder.need().mode(latest)  # as it went (``restore``)
            place.commit(data, if_match=etag_or_absent(current), sync_folder=syncs is None)
            if syncs is not None and place.dir_fd is not None:
                syncs.add(place.dir_fd)
        elif place.dir_fd is not None:
            if vault._existing_bytes(place) != current:
                raise ConflictError(f"{target.rel} changed while the undo ran; nothing was changed")
            os.unlink(place.name, dir_fd=place.dir_fd)
            if target.is_note:
                _remove_empty_folder(place.assets_name, place.dir_fd)
    version = batch.done(target.lang, target.rel)
    told.append(target)
    if version is not None:
        result["version"] = version
    return result


def _put_back(vault: Vault, plan: Plan, entry_id: str) -> None:
    """Best effort: give a file back the bytes it had before a failed undo."""
    target, before, *_ = plan
    try:
        with vault.sandbox.open(target) as place:
            now = vault._existing_bytes(place)
            info = place.lstat() if before is None and now is not None else None
            mode = None if info is None else permissions(info, place.dir_fd)  # (as undo gave it)
            change = Change(target.lang, target.rel, "restore", now, before, mode=mode)
            reason = f"{UNDO_REASON}{entry_id}{_PUT_BACK}"
            with vault.recorder.changing([change], actor="tool", reason=reason):
                if before is not None:
                    place.commit(before)
                elif now is not None and place.dir_fd is not None:
                    os.unlink(place.name, dir_fd=place.dir_fd)
        vault._notify(target)
    except Exception:
        log.exception("could not put %s back after a failed undo", target.rel)


def _remove_empty_folder(name: str, dir_fd: int) -> None:
    with suppress(OSError):
        os.rmdir(name, dir_fd=dir_fd)
