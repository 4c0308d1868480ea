"""History as the tools see it: ``history``, ``diff``, ``read(version=)``, ``restore``,
and ``undo``. Changes made outside the tools are recorded by ``outside``.

``restore`` writes a version's exact bytes (no re-normalization) and is itself a
version (op ``restore``). Restoring a note that is deleted also brings back the images
deleted with it (the rows of one delete share a ``batch``), unless one was put back
since. A folder's summary file (``.overview.md``) has a history too, read and restored
like a note's: the summaries job rewrites it over a hand edit, which is then only there
(the other tools still refuse that dot-file).

``undo`` puts back everything one memory entry changed. The Memory Writer passes
``reason="entry:<id> <title>"`` on each write for an entry; the files of the entry are
those with a version whose reason's first word is ``entry:<id>``. Each file must hold
exactly the entry's newest version of it (else ``conflict``: someone changed it since,
and nothing at all is changed; a later change that was itself undone is no obstacle);
it then goes back to the version just before the entry's run of versions ending there
(or is deleted when the entry created it). Checks and changes run with every file's
lock held, so the all-or-nothing holds against concurrent writers. An edit by someone
else between two writes of the entry is kept (as the writer's old journal did: their
text wins over our undo). The undo's own versions carry ``reason="undo entry:<id>"``,
which does not match the entry again. A file whose changes by the entry an undo of the
entry already took back is left alone, whatever came since (the writer's rollback of a
failed merge is such an undo, and the entry's later writes may go to other files); an
undo that finds nothing else to do refuses (``conflict``, already undone). If retention
has pruned the version an undo needs, it refuses rather than guess.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Callable, Iterator
from contextlib import ExitStack, suppress
from typing import TYPE_CHECKING, Any

from indexer.vault import fsops, move_leftovers, oserrors
from indexer.vault.asset_folders import remove_emptied_folder
from indexer.vault.contents import text_lines
from indexer.vault.diffs import unified_diff
from indexer.vault.history.rows import first_word
from indexer.vault.history.store import Change, HistoryStore, Version
from indexer.vault.recording import UNDO_REASON, check_actor, check_reason
from indexer.vault.sandbox import Place, Sandbox, Target
from indexer.vault.scan import walk_files
from shared.errors import (
    ConflictError,
    ForbiddenPathError,
    InvalidArgumentError,
    NotFoundError,
    VaultError,
)
from shared.langs import check_lang
from shared.models import ENTRY_ID_RE

if TYPE_CHECKING:
    from indexer.vault.vault import Vault

log = logging.getLogger("indexer.vault")
MAX_HISTORY_LIMIT = 1000
_PAGE = 200
_PUT_BACK = " failed; put back"  # the reason's end on a file a failed undo gave back
# A file of an entry to undo: its target, its bytes as checked, the entry's newest version
# of it, the version to go back to (None: the entry made the file), and the entry's
# oldest version of it (how the file came there: a write, or a move from where).
_Plan = tuple[Target, bytes | None, Version, Version | None, Version]


def file_kind(target: Target) -> str | None:
    """What kind of writable file ``target`` names: ``note`` (.md), ``asset`` (an image
    in ``*.assets/``), ``text`` (plain-text types, when the vault has them) or None.
    Moves keep the kind; restore and history work for every kind."""
    if target.is_note:
        return "note"
    if target.is_asset:
        return "asset"
    if getattr(target, "is_text", False):  # plain-text memory files, once the vault has them
        return "text"
    return None


# -- reading history -------------------------------------------------------------------


def history(vault: Vault, lang: str, path: str, limit: int) -> dict:
    target = vault.sandbox.resolve_file(lang, path, summary=True)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_HISTORY_LIMIT:
        raise InvalidArgumentError(f"limit must be between 1 and {MAX_HISTORY_LIMIT}")
    rows = vault.recorder.need().versions(target.lang, target.rel, limit)
    if not rows:
        check_file(vault.sandbox, target)
    return {"path": target.rel, "versions": [row.public() for row in rows]}


def version_bytes(vault: Vault, target: Target, number: object) -> tuple[bytes, Version]:
    """The bytes of a version of ``target`` (``not_found`` for a deletion)."""
    row = vault.recorder.version(target.lang, target.rel, number)
    data = vault.recorder.content(row)
    if data is None:
        raise NotFoundError(f"at version {row.version}, {target.rel} did not exist ({row.op})")
    return data, row


def diff(
    vault: Vault, lang: str, path: str, from_version: object, to_version: object | None
) -> dict:
    target = vault.sandbox.resolve_file(lang, path, summary=True)
    old_row = vault.recorder.version(target.lang, target.rel, from_version, "from_version")
    old = vault.recorder.content(old_row) or b""
    if to_version is None:
        new = _current_text(vault, target)
        new_name = "current"
    else:
        new_row = vault.recorder.version(target.lang, target.rel, to_version, "to_version")
        new = vault.recorder.content(new_row) or b""
        new_name = str(new_row.version)
    try:
        old_text, new_text = old.decode("utf-8"), new.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidArgumentError(f"{target.rel} is not a text file; it has no diff") from None
    lines = unified_diff(
        text_lines(old_text),
        text_lines(new_text),
        f"{target.rel}@{old_row.version}",
        f"{target.rel}@{new_name}",
    )
    return {"path": target.rel, "diff": "".join(_terminated(lines))}


def _terminated(lines: Any) -> Any:
    """Diff lines, each ending with a newline (git's marker for a last line without)."""
    for line in lines:
        if line.endswith("\n"):
            yield line
        else:
            yield line + "\n\\ No newline at end of file\n"


def check_file(sandbox: Sandbox, target: Target) -> None:
    """Why a path with no history has none: missing, a link or a folder (a file that is
    there simply has no versions yet). Also ``indexer history``'s, without a server."""
    with sandbox.open(target) as place:
        info = place.lstat()
    if info is None:
        raise NotFoundError(f"{target.rel} has no history and does not exist")
    if stat.S_ISLNK(info.st_mode):
        raise ForbiddenPathError(f"{target.rel} is a symbolic link; links are not followed")
    if stat.S_ISDIR(info.st_mode):
        raise InvalidArgumentError(f"history is kept per file; {target.rel} is a folder")
    if not stat.S_ISREG(info.st_mode):
        raise ForbiddenPathError(f"{target.rel} is not a regular file")


def _current_text(vault: Vault, target: Target) -> bytes:
    """The file's bytes now for a diff: b"" when it is gone (the diff then shows it
    deleted); a file too large to read or a folder in its place is refused, not shown
    as every line deleted."""
    try:
        with vault.sandbox.open(target) as place:
            return vault._existing_bytes(place) or b""
    except IsADirectoryError:
        raise InvalidArgumentError(f"{target.rel} is a folder now; diff two versions") from None


# -- restore ---------------------------------------------------------------------------


def restore(
    vault: Vault,
    lang: str,
    path: str,
    number: object,
    if_match: str | None,
    reason: str | None,
    actor: str,
) -> dict:
    target = vault._file_target(lang, path, summary=True)
    if file_kind(target) is None:
        raise ForbiddenPathError("only notes, their images and text files can be restored")
    target.check_text_place()  # (it was moved out: made again there, search never finds it)
    reason = check_reason(reason)
    check_actor(actor)
    row = vault.recorder.version(target.lang, target.rel, number)
    data = vault.recorder.content(row)
    if data is None:
        raise InvalidArgumentError(
            f"version {row.version} of {target.rel} records that it did not exist ({row.op});"
            " restore a version with content"
        )
    vault._check_size(len(data))
    assets = _assets_deleted_with(vault, target, row.version)
    with vault.locked([target, *(t for t, _ in assets)]), ExitStack() as stack:
        place = stack.enter_context(vault.sandbox.open(target))
        existing = vault._existing_bytes(place)
        fsops.check_if_match(if_match, existing)
        if data == existing:  # nothing to write; make sure history holds it, as a restore would
            vault.recorder.observe(target.lang, target.rel, data, unknown=True)
            latest = vault.recorder.need().latest(target.lang, target.rel)
            number_now = latest.version if latest is not None else row.version
            return {
                "path": target.rel,
                "etag": row.etag,
                "version": number_now,
                "restored_from": row.version,
            }
        back = []
        if existing is None:  # a deleted note: its images come back if still absent
            for asset, asset_data in assets:
                asset_place = stack.enter_context(vault.sandbox.open(asset))
                if vault._existing_bytes(asset_place) is None:
                    back.append((asset, asset_place, asset_data))
        changes = [Change(target.lang, target.rel, "restore", existing, data)]
        changes += [Change(a.lang, a.rel, "restore", None, d) for a, _, d in back]
        with vault.recorder.changing(changes, actor=actor, reason=reason) as pending:
            # The images first: one the system refuses leaves no note behind (the
            # refusal says nothing changed). Only over what was read and recorded: an
            # editor's save meanwhile would be lost from disk and from history alike.
            made: list[Place] = []
            try:
                for _, asset_place, asset_data in back:
                    asset_place.commit(asset_data, if_match="")
                    made.append(asset_place)
                place.commit(data, if_match=_etag_or_absent(existing))
            except BaseException:
                for asset_place in made:
                    _take_out(asset_place)
                raise
        vault._notify(target)
    version = pending.versions[(target.lang, target.rel)] if pending else None
    return {"path": target.rel, "etag": row.etag, "version": version, "restored_from": row.version}


def _take_out(place: Place) -> None:
    """Remove a file a failed restore had just made, and the folders made for it."""
    with suppress(OSError):
        if place.dir_fd is not None:
            os.unlink(place.name, dir_fd=place.dir_fd)
    place.rollback()


def _etag_or_absent(data: bytes | None) -> str:
    """The ``if_match`` of a write that must replace exactly ``data`` ("": no file)."""
    return fsops.etag_of(data) if data is not None else ""


def _assets_deleted_with(vault: Vault, target: Target, version: int) -> list[tuple[Target, bytes]]:
    """The images deleted together with note ``target`` by the first delete after its
    ``version`` (the one restored), with their bytes before that delete. (The latest
    delete alone was looked at: a note deleted, made again without images and deleted
    again came back without the images it had at the version restored.)"""
    store = vault.recorder.need()
    deleted = None
    for row in _newest_first(store, target):
        if row.version <= version:
            break
        if row.etag is None:
            deleted = row
    if deleted is None or deleted.batch is None:
        return []
    found = []
    prefix = target.rel + ".assets/"
    for row in store.batch(deleted.batch):
        if not row.path.startswith(prefix) or row.etag is not None:
            continue
        before = store.versions(row.lang, row.path, 1, below=row.version)
        if before and before[0].blob is not None:
            asset = vault.sandbox.resolve(row.lang, row.path)
            found.append((asset, store.content(before[0])))
    return found


def asset_deletions(vault: Vault, place: Place) -> list[Change]:
    """A change for each image in the ``.assets/`` folder of the note at ``place``
    (about to be deleted with it), with its bytes."""
    assert place.dir_fd is not None
    folder = place.assets_name
    if not fsops.is_real_dir(folder, place.dir_fd):
        return []
    target = place.target
    changes = []
    fd = fsops.open_dir(folder, place.dir_fd)
    with fsops.opened(fd):
        for entry in walk_files(fd, target.rel + ".assets"):
            data = read_at(entry.dir_fd, entry.name, vault.max_file_bytes)
            if data is not None:
                changes.append(Change(target.lang, entry.rel, "delete", data, None))
    return changes


def read_at(dir_fd: int, name: str, max_bytes: int) -> bytes | None:
    """The bytes of regular file ``name`` in ``dir_fd``; None if gone, special or too big."""
    try:
        fd = fsops.open_regular(name, dir_fd)
    except (OSError, VaultError):
        return None
    with fsops.opened(fd):
        data = fsops.read_all(fd, max_bytes)
    return data if len(data) <= max_bytes else None


# -- undo ------------------------------------------------------------------------------


def undo(vault: Vault, lang: str, entry_id: str, dry_run: bool) -> dict:
    if not isinstance(entry_id, str) or not ENTRY_ID_RE.fullmatch(entry_id):
        raise InvalidArgumentError("entry_id must be the id of a memory entry (letters, digits)")
    if not isinstance(dry_run, bool):
        raise InvalidArgumentError("dry_run must be true or false")
    store = vault.recorder.need()
    word = f"entry:{entry_id}"
    paths = store.paths_with_reason(check_lang(lang), word)
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

    plans: list[_Plan] = []
    conflicts: list[str] = []
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
            if isinstance(found, str):
                conflicts.append(f"{target.rel} ({found})")
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
        if not plans and not conflicts:
            conflicts = [f"{target.rel} (already undone)" for target in targets]
        if conflicts:
            raise ConflictError(
                f"entry {entry_id} cannot be undone, nothing was changed: "
                + "; ".join(conflicts[:5])
                + (f" and {len(conflicts) - 5} more" if len(conflicts) > 5 else "")
            )
        undone: list[dict] = []
        try:
            for plan in reversed(plans):  # an image before its note (whose folder then goes)
                undone.append(_undo_one(vault, plan, entry_id, dry_run))
        except BaseException as err:  # a disk error midway: put back what was undone
            for plan, result in zip(reversed(plans), undone, strict=False):
                if "version" in result:
                    _put_back(vault, plan, entry_id)
            failed = plans[-1 - len(undone)][0].rel  # (the one it was undoing)
            described = oserrors.describe(err) if isinstance(err, OSError) else None
            if described is not None:  # said of which file (the entry has several)
                described.message = f"{failed}: {described.message}"
                described.args = (described.message,)
                raise described from None
            raise
    if not dry_run:  # an *.assets/ folder the entry's files were all that was in goes too
        for target in {t.rel.rsplit("/", 1)[0]: t for t, *_ in plans if t.in_assets}.values():
            remove_emptied_folder(vault.sandbox, target)
        undone_files = [(t.rel, latest, before, first) for t, _, latest, before, first in plans]
        move_leftovers.after_undo(vault.sandbox, lang, undone_files)
    return {"entry_id": entry_id, "dry_run": dry_run, "files": undone[::-1]}


def _who(row: Version) -> str:
    return f"{row.actor} in version {row.version}" + (f", {row.reason!r}" if row.reason else "")


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
    rows = _newest_first(store, target)
    later: Version | None = None
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
        later = later or row
    else:
        return "history no longer holds the entry's version"
    if undone:
        return None
    if row.etag != etag:
        return f"changed since by {_who(later)}" if later else "edited on disk since"
    newest, oldest = row, row
    for row in rows:
        if not ours(row):
            return newest, row, oldest
        oldest = row
    if oldest.prev_etag is None:
        return newest, None, oldest
    return "history no longer holds its text from before the entry"


def _newest_first(store: HistoryStore, target: Target) -> Iterator[Version]:
    """Every version of a file, newest first, read a page at a time."""
    below = None
    while True:
        rows = store.versions(target.lang, target.rel, _PAGE, below=below)
        yield from rows
        if len(rows) < _PAGE:
            return
        below = rows[-1].version


def _undo_one(vault: Vault, plan: _Plan, entry_id: str, dry_run: bool) -> dict:
    target, current, latest, before, _ = plan
    data = vault.recorder.content(before) if before is not None else None
    result: dict[str, Any] = {
        "path": target.rel,
        "from_version": latest.version,
        "to_version": None if before is None else before.version,
        "deleted": data is None,
        "unchanged": data == current,  # (as before the entry already: nothing to do)
    }
    if dry_run or data == current:
        return result
    change = Change(target.lang, target.rel, "restore" if data else "delete", current, data)
    reason = UNDO_REASON + entry_id
    with (
        vault.sandbox.open(target) as place,
        vault.recorder.changing([change], actor="tool", reason=reason) as pending,
    ):
        if data is not None:  # only over what was checked (see ``restore``)
            place.commit(data, if_match=_etag_or_absent(current))
        elif place.dir_fd is not None:
            if vault._existing_bytes(place) != current:
                raise ConflictError(f"{target.rel} changed while the undo ran; nothing was changed")
            os.unlink(place.name, dir_fd=place.dir_fd)
            if target.is_note:
                _remove_empty_folder(place.assets_name, place.dir_fd)
    vault._notify(target)
    if pending is not None:
        result["version"] = pending.versions[(target.lang, target.rel)]
    return result


def _put_back(vault: Vault, plan: _Plan, entry_id: str) -> None:
    """Best effort: give a file back the bytes it had before a failed undo."""
    target, before, *_ = plan
    try:
        with vault.sandbox.open(target) as place:
            now = vault._existing_bytes(place)
            change = Change(target.lang, target.rel, "restore", now, before)
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
