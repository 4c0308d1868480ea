"""``delete``: a file (a note with its images) or an empty folder.

A note or text file goes with its ``<name>.assets/`` folder, the images locked with it
as a move locks them (a write of one of them meanwhile made two versions of one number,
or outlived the delete that history says removed it). History gets the file's last
bytes and each image's in one batch, recorded under the locks; a file that changes
between being read and being deleted is read and recorded again. ``if_match`` (REST's
``If-Match``) deletes only the file as the caller read it.
"""

from __future__ import annotations

import logging
import os
import stat
from contextlib import closing, suppress
from typing import TYPE_CHECKING

from indexer.vault import asset_folders, fsops, lone_summaries, moves, reading, timeline
from indexer.vault.contents import WRITABLE
from indexer.vault.history.rows import permissions
from indexer.vault.history.store import Change
from indexer.vault.names import MAX_DEPTH, refuse_twin
from indexer.vault.recording import check_actor, check_reason
from indexer.vault.sandbox import FOLDER_ENDINGS, Place, Target
from indexer.vault.scan import walk_files
from indexer.vault.timeline import read_at, read_with_mode
from shared.errors import (
    ConflictError,
    ForbiddenPathError,
    NotFoundError,
    SystemRefusedError,
    TooLargeError,
    VaultError,
)
from shared.filetypes import is_text_name
from shared.workspace import FOLDER_OWN_FILES, OVERVIEW_FILE

if TYPE_CHECKING:
    from indexer.vault.vault import Vault

log = logging.getLogger("indexer.vault")


class _ChangedMeanwhile(ConflictError):
    """A file changed between being read (and recorded) and being deleted: read again."""


def delete(
    vault: Vault, lang: str, path: str, reason: str | None, actor: str, if_match: str | None
) -> dict:
    """See ``Vault.delete``."""
    target = vault.sandbox.resolve(lang, path)
    reason = check_reason(reason)
    check_actor(actor)
    for _ in range(moves.ATTEMPTS):
        images = _image_targets(vault, target)
        with vault.locked([target, *images]):
            if _image_targets(vault, target) == images:
                try:
                    return _delete_locked(vault, target, reason, actor, if_match)
                except _ChangedMeanwhile:
                    continue  # read and recorded again: nothing is lost from history
    raise ConflictError(f"{target.rel} or its images keep changing; try the delete again")


def _image_targets(vault: Vault, target: Target) -> list[Target]:
    if target.dir_only or not (target.is_note or target.is_text):
        return []
    return [vault.sandbox.resolve(target.lang, p) for p in moves.asset_paths(vault, target)]


def _delete_locked(
    vault: Vault, target: Target, reason: str | None, actor: str, if_match: str | None
) -> dict:
    with vault.sandbox.open(target) as place:
        info = place.lstat()
        if info is None or place.dir_fd is None:
            fsops.check_missing_match(if_match)  # 404 whatever it says, as a move
            raise NotFoundError(f"{target.rel} does not exist")
        refuse_twin(place.dir_fd, place.name, target.rel, "its delete")
        if stat.S_ISDIR(info.st_mode):
            fsops.check_folder_match(if_match, target.rel)
            if _delete_folder(vault, place, reason, actor):  # its summary went with it
                vault._notify(target, f"{target.rel}/{OVERVIEW_FILE}")
        elif target.dir_only:
            raise ForbiddenPathError(
                f"{target.rel!r} is a file; a path ending in {FOLDER_ENDINGS} names a folder"
            )
        elif timeline.file_kind(target) is not None:
            _delete_file(
                vault, place, place.dir_fd, info, reason=reason, actor=actor, if_match=if_match
            )
            if target.is_asset:  # its *.assets/ folder goes when it was the last image
                asset_folders.remove_emptied_folder(vault.sandbox, target)
        else:
            raise ForbiddenPathError(f"only {WRITABLE} can be deleted")
        vault._notify(target)
    return {"path": target.rel, "deleted": True}


def _delete_folder(vault: Vault, place: Place, reason: str | None, actor: str) -> bool:
    """Remove the folder at ``place``, empty but for its own files (see
    ``remove_empty_folder``), its ``.overview.md`` recorded as deleted when there is one:
    a summary a person wrote went with the folder, and history had nothing of it.
    Whether a summary went."""
    target = place.target
    rel = f"{target.rel}/{OVERVIEW_FILE}" if target.rel else OVERVIEW_FILE
    try:
        summary = vault.sandbox.resolve(target.lang, rel, summary=True)
    except VaultError:  # (a path too long for history to name: none could have been read)
        return place.remove_empty_folder(FOLDER_OWN_FILES)
    if not place.holds_only(FOLDER_OWN_FILES):  # (refused with nothing recorded)
        return place.remove_empty_folder(FOLDER_OWN_FILES)
    with vault._lock(summary):
        fd = place.folder_fd()
        limit = lone_summaries.MAX_SUMMARY_BYTES
        found = None if fd is None else read_with_mode(fd, OVERVIEW_FILE, limit)
        changes = []
        if found is not None:  # (its mode: restore makes it again so)
            data, mode = found
            changes.append(Change(target.lang, summary.rel, "delete", data, None, mode=mode))
        with vault.recorder.changing(changes, actor=actor, reason=reason):
            return place.remove_empty_folder(FOLDER_OWN_FILES)


def _delete_file(
    vault: Vault,
    place: Place,
    dir_fd: int,
    info: os.stat_result,
    *,
    reason: str | None,
    actor: str,
    if_match: str | None,
) -> None:
    """Delete the note or file at ``place`` (in ``dir_fd``) with its images, recorded."""
    target = place.target
    fsops.refuse_read_only(info)
    changes, readable = _deletion(vault, place, info)
    if if_match is not None:
        fsops.check_etag_match(if_match, reading.file_etag(place)[0])
    owns_images = target.is_note or target.is_text  # (a text file once a note)
    if owns_images:
        changes += timeline.asset_deletions(vault, place)
    images = {c.path: c.before for c in changes if c.path != target.rel}
    _check_removable(place, dir_fd, images)
    with vault.recorder.changing(changes, actor=actor, reason=reason):
        recorded = next((c.before for c in changes if c.path == target.rel), None)
        if readable and recorded is not None and vault._existing_bytes(place) != recorded:
            raise _ChangedMeanwhile(f"{target.rel} changed while it was deleted")
        os.unlink(place.name, dir_fd=dir_fd)
    if owns_images:
        _remove_recorded_images(vault, place, dir_fd, images)
        # (notes another program put in its .assets/ went too: the index hears it now)
        vault._notify_all(vault.sandbox.resolve(target.lang, p) for p in images if is_text_name(p))


def _check_removable(place: Place, dir_fd: int, images: dict[str, bytes | None]) -> None:
    """Refuse, before anything changes, a delete whose images could not be removed (a
    folder of them read-only): the note went, and the refusal said nothing changed."""
    if not images or not fsops.is_real_dir(place.assets_name, dir_fd):
        return
    fd = fsops.open_dir(place.assets_name, dir_fd)
    with fsops.opened(fd), closing(walk_files(fd, place.target.rel + ".assets")) as files:
        for entry in files:
            if entry.rel in images and not os.access(".", os.W_OK | os.X_OK, dir_fd=entry.dir_fd):
                raise SystemRefusedError(
                    f"the images of {place.target.rel} cannot be removed: the system does not"
                    " let the indexer change their folder (permission denied); nothing was"
                    " changed"
                )


def _remove_recorded_images(
    vault: Vault, place: Place, dir_fd: int, recorded: dict[str, bytes | None]
) -> None:
    """Remove the images of the deleted note that history recorded, as it recorded them,
    then its emptied folders. What history could not keep (a file over the size limit, a
    name no tool can use, a dot-file, one past the depth limit, or one rewritten since it
    was recorded) stays where it is, with a warning: the whole folder went, and such a
    file was lost for good. An image the system keeps from being removed after all (its
    folder made read-only since the check) stays, and history hears it is there."""
    name = place.assets_name
    if not fsops.is_real_dir(name, dir_fd):
        return
    fd = fsops.open_dir(name, dir_fd)
    with fsops.opened(fd):
        walk = walk_files(fd, place.target.rel + ".assets")
        with closing(walk) as files:
            for entry in files:
                data = recorded.get(entry.rel)
                if data is None or read_at(entry.dir_fd, entry.name, vault.max_file_bytes) != data:
                    continue
                try:
                    os.unlink(entry.name, dir_fd=entry.dir_fd)
                except FileNotFoundError:
                    pass
                except OSError:
                    vault.recorder.observe(place.target.lang, entry.rel, data, unknown=False)
        kept = _prune(fd, MAX_DEPTH)
    if kept:
        log.warning(
            "kept %d file(s) in %s.assets/ that history could not keep (too large, a name"
            " no tool can use, a dot-file, or changed since it was recorded): remove them"
            " by hand if they are not wanted",
            kept,
            place.target.rel,
        )
        return
    with suppress(OSError):
        os.rmdir(name, dir_fd=dir_fd)


def _prune(fd: int, depth: int) -> int:
    """Remove the empty folders below the folder open at ``fd``, ``depth`` levels down at
    most (deeper, a folder counts as kept); how many entries stay."""
    kept = 0
    for entry in os.scandir(fd):
        if entry.is_dir(follow_symlinks=False) and depth > 0:
            try:
                child = fsops.open_dir(entry.name, fd)
            except OSError:
                kept += 1
                continue
            with fsops.opened(child):
                left = _prune(child, depth - 1)
            if left:
                kept += left
                continue
            try:
                os.rmdir(entry.name, dir_fd=fd)
            except OSError:
                kept += 1
        else:
            kept += 1
    return kept


def _deletion(vault: Vault, place: Place, info: os.stat_result) -> tuple[list[Change], bool]:
    """The history row of a file about to be deleted (``info``: its lstat), with its
    bytes, and whether they could be read. A file over ``max_file_bytes`` (grown by
    another program) has no bytes history could keep: its row says it was deleted
    after the last version history has (restorable), or there is none when history
    never had it; the limit never keeps anyone from removing a file. A hard-linked
    file is refused either way."""
    target, mode = (
        place.target,
        permissions(info, place.dir_fd),
    )  # (restore makes it with them again)
    try:
        existing = vault._existing_bytes(place)
    except TooLargeError:
        if info.st_nlink > 1:
            raise ForbiddenPathError(
                "the file has more than one hard link; it is not modified"
            ) from None
        known = vault.recorder.last_bytes(target.lang, target.rel)
        if known is None:
            return [], False
        return [Change(target.lang, target.rel, "delete", known, None, mode=mode)], False
    return [Change(target.lang, target.rel, "delete", existing, None, mode=mode)], True
