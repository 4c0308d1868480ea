"""History as the tools see it: ``history``, ``diff``, ``read(version=)`` and
``restore`` (``undo`` is in ``undo``). Changes made outside the tools are recorded by
``outside``.

``restore`` writes a version's exact bytes (no re-normalization) and is itself a
version (op ``restore``). Restoring a note that is deleted also brings back the images
deleted with it (the rows of one delete share a ``batch``), unless one was put back
since. A folder's summary file (``.overview.md``) has a history too, read and restored
like a note's: the summaries job rewrites it over a hand edit, which is then only there
(the other tools still refuse that dot-file).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import ExitStack, suppress
from typing import TYPE_CHECKING, Any

from indexer.vault import fsops
from indexer.vault.contents import text_lines
from indexer.vault.diffs import unified_diff
from indexer.vault.history.rows import permissions
from indexer.vault.history.store import Change, HistoryStore, Version
from indexer.vault.recording import check_actor, check_reason
from indexer.vault.sandbox import Place, Sandbox, Target
from indexer.vault.scan import walk_files
from shared.errors import (
    ForbiddenPathError,
    InvalidArgumentError,
    NotFoundError,
    VaultError,
)

if TYPE_CHECKING:
    from indexer.vault.vault import Vault

MAX_HISTORY_LIMIT = 1000
_PAGE = 200


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


def version_of(vault: Vault, target: Target, number: object, name: str = "version") -> Version:
    """Version ``number`` of ``target``; ``not_found`` if history has no such version.
    A path with no history at all is looked at on disk first, as ``history`` does: a
    link (out of the vault, maybe) is ``forbidden_path`` and a folder ``invalid_argument``
    to every history tool, not a missing version of a note."""
    try:
        return vault.recorder.version(target.lang, target.rel, number, name)
    except NotFoundError:
        if vault.recorder.need().latest(target.lang, target.rel) is None:
            with suppress(NotFoundError):  # (not there: the missing version says it)
                check_file(vault.sandbox, target)
        raise


def version_bytes(vault: Vault, target: Target, number: object) -> tuple[bytes, Version]:
    """The bytes of a version of ``target`` (``not_found`` for a deletion)."""
    row = version_of(vault, target, number)
    data = vault.recorder.content(row)
    if data is None:
        raise NotFoundError(f"at version {row.version}, {target.rel} did not exist ({row.op})")
    return data, row


def diff(
    vault: Vault, lang: str, path: str, from_version: object, to_version: object | None
) -> dict:
    target = vault.sandbox.resolve_file(lang, path, summary=True)
    old_row = version_of(vault, target, from_version, "from_version")
    old = vault.recorder.content(old_row) or b""
    if to_version is None:
        new = _current_text(vault, target)
        new_name = "current"
    else:
        new_row = version_of(vault, target, to_version, "to_version")
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
    target.check_text_place()  # (the tools make no note there: it was moved out)
    reason = check_reason(reason)
    check_actor(actor)
    row = version_of(vault, target, number)
    data = vault.recorder.content(row)
    if data is None:
        raise InvalidArgumentError(
            f"version {row.version} of {target.rel} records that it did not exist ({row.op});"
            " restore a version with content"
        )
    vault._check_size(len(data))
    gone = _gone_after(vault.recorder.need(), target, row.version)
    assets = _assets_deleted_with(vault, target, gone)
    with vault.locked([target, *(t for t, _, _ in assets)]), ExitStack() as stack:
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
            place.mode = _mode_kept(vault, gone)
            for asset, asset_data, asset_mode in assets:
                asset_place = stack.enter_context(vault.sandbox.open(asset))
                if vault._existing_bytes(asset_place) is None:
                    asset_place.mode = asset_mode
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
                place.commit(data, if_match=etag_or_absent(existing))
            except BaseException:
                for asset_place in made:
                    _take_out(asset_place)
                raise
        vault._notify_all([target, *(a for a, _, _ in back if file_kind(a) != "asset")])
    version = pending.versions[(target.lang, target.rel)] if pending else None
    return {"path": target.rel, "etag": row.etag, "version": version, "restored_from": row.version}


def _take_out(place: Place) -> None:
    """Remove a file a failed restore had just made, and the folders made for it."""
    with suppress(OSError):
        if place.dir_fd is not None:
            os.unlink(place.name, dir_fd=place.dir_fd)
    place.rollback()


def etag_or_absent(data: bytes | None) -> str:
    """The ``if_match`` of a write that must replace exactly ``data`` ("": no file)."""
    return fsops.etag_of(data) if data is not None else ""


def _gone_after(store: HistoryStore, target: Target, version: int) -> Version | None:
    """The first version after ``version`` (the one restored) that took the file away
    (a delete, a move away): the state that incarnation of the file left in."""
    gone = None
    for row in newest_first(store, target):
        if row.version <= version:
            break
        if row.etag is None:
            gone = row
    return gone


def _mode_kept(vault: Vault, gone: Version | None) -> int | None:
    """The permissions a file restored where none is gets: those it had as it went
    (``gone``), exactly, as a replaced file keeps its own (no umask: a note made
    private stays private, a shared one stays shared); None (0644 less the umask, as a
    new file) when history does not know them (another program removed it)."""
    return None if gone is None else vault.recorder.need().mode(gone)


def _assets_deleted_with(
    vault: Vault, target: Target, deleted: Version | None
) -> list[tuple[Target, bytes, int | None]]:
    """The images deleted together with note ``target`` by ``deleted`` (the first delete
    after the version restored), with their bytes before that delete and their mode.
    (The latest delete alone was looked at: a note deleted, made again without images
    and deleted again came back without the images it had at the version restored.)"""
    store = vault.recorder.need()
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
            found.append((asset, store.content(before[0]), store.mode(row)))
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
            found = read_with_mode(entry.dir_fd, entry.name, vault.max_file_bytes)
            if found is not None:  # (its mode: restore makes it again so)
                data, mode = found
                changes.append(Change(target.lang, entry.rel, "delete", data, None, mode=mode))
    return changes


def read_at(dir_fd: int, name: str, max_bytes: int) -> bytes | None:
    """The bytes of regular file ``name`` in ``dir_fd``; None if gone, special or too big."""
    found = _read_stat(dir_fd, name, max_bytes)
    return None if found is None else found[0]


def read_with_mode(dir_fd: int, name: str, max_bytes: int) -> tuple[bytes, int] | None:
    """``read_at``, with the permissions history keeps for the file were it to go now
    (``permissions``), from the ``fstat`` its open checked it by (no second look up):
    a file the indexer deletes or moves away within another operation (an image moved
    with its note, a folder's summary) then comes back with its mode."""
    found = _read_stat(dir_fd, name, max_bytes)
    return None if found is None else (found[0], permissions(found[1], dir_fd))


def _read_stat(dir_fd: int, name: str, max_bytes: int) -> tuple[bytes, os.stat_result] | None:
    try:
        fd, info = fsops.open_regular_stat(name, dir_fd)
    except (OSError, VaultError):
        return None
    with fsops.opened(fd):
        data = fsops.read_all(fd, max_bytes)
    return (data, info) if len(data) <= max_bytes else None


def newest_first(store: HistoryStore, target: Target) -> Iterator[Version]:
    """Every version of a file, newest first, read a page at a time."""
    below = None
    while True:
        rows = store.versions(target.lang, target.rel, _PAGE, below=below)
        yield from rows
        if len(rows) < _PAGE:
            return
        below = rows[-1].version
