"""``move``: a file to a new path, or a folder with everything below it.

A note or text file moves with its ``<name>.assets/`` folder (``a.md.assets/`` becomes
``a.txt.assets/`` and back: the folder follows the file whatever its text type, as the
links into it do), and its own relative links are rewritten to still resolve
(``links``); a folder moves in one ``rename`` and each note or text file in it gets
the same treatment. Refused: paths that leave the vault or name another
lang (``forbidden_path``, by the sandbox), a file changing kind (a note must stay a
``.md`` note, an image an image in a ``*.assets/`` folder), a ``*.assets/`` folder on
its own, a folder into itself (``invalid_argument``), and any existing ``new_path``,
a folder too (``conflict``; a file is moved with ``link(2)``, which never replaces a
file that appears at the last moment); those said before locking: ``move_checks``. A
file whose name stays (moved to another folder) keeps its spelling on disk (NFD).

History gets, for each file moved, a version with op ``move`` on the old path (the
file is gone from there, ``moved_to``) and one on the new path (its bytes there,
``moved_from``), all in one batch; listeners (the index) hear both paths, every file's
together (the index syncs them in one transaction, a moved note's row re-keyed).

Locks: every file involved (old and new paths) is locked before anything is read, in
the vault's one global order; the files are listed before locking and again after,
and a listing that changed in between is retried.
"""

from __future__ import annotations

import logging
import os
import stat
import unicodedata
from contextlib import ExitStack, closing, suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING

from indexer.vault import atomic, fsops, move_checks, oserrors, renames
from indexer.vault.asset_folders import remove_emptied_folder
from indexer.vault.folder_reach import check_reach
from indexer.vault.history.rows import permissions
from indexer.vault.history.store import Change
from indexer.vault.links import Relocate, relocate_note, relocate_prefix
from indexer.vault.lone_summaries import CARRIED_REASON, carried_summaries
from indexer.vault.move_checks import TEXTS
from indexer.vault.names import refuse_twin
from indexer.vault.new_path import open_new_path, resolve_new_path
from indexer.vault.reading import file_etag
from indexer.vault.recording import check_actor, check_reason
from indexer.vault.relinking import relinked
from indexer.vault.sandbox import NOT_A_FILE, Place, Target
from indexer.vault.scan import FileEntry, walk_files
from indexer.vault.timeline import file_kind, read_at, read_with_mode
from shared.errors import (
    ConflictError,
    ForbiddenPathError,
    InvalidArgumentError,
    NotFoundError,
    SystemRefusedError,
    TooLargeError,
)
from shared.workspace import OVERVIEW_FILE

if TYPE_CHECKING:
    from indexer.vault.vault import Vault

log = logging.getLogger("indexer.vault")
ATTEMPTS = 3
CHANGED_WHILE_MOVED = (
    "the file changed while it was moved (another program saved it); nothing was moved"
)


@dataclass(frozen=True)
class _Moved:
    """One file of a move: where from, where to, bytes before and after."""

    old: Target
    new: Target
    before: bytes
    after: bytes
    mode: int | None = None  # its permissions, kept on the row of its old path (restore)


def move(
    vault: Vault,
    lang: str,
    path: str,
    new_path: str,
    if_match: str | None,
    reason: str | None,
    actor: str,
) -> dict:
    source = vault.sandbox.resolve(lang, path)
    dest = resolve_new_path(vault.sandbox, lang, new_path)
    reason = check_reason(reason)
    check_actor(actor)
    if source.rel == dest.rel:
        raise InvalidArgumentError("new_path is the same as path")
    if dest.rel.startswith(source.rel + "/"):
        raise InvalidArgumentError("new_path lies inside path (nothing can move into itself)")
    if dest.rel.startswith(source.rel + ".assets/"):
        raise InvalidArgumentError("a file cannot move into its own .assets/ folder")
    if source.rel.startswith(dest.rel + "/"):
        raise ConflictError(f"{dest.rel} exists (it holds {source.rel})")
    with vault.sandbox.open(source) as place:
        info = place.lstat()
    if info is None:
        fsops.check_missing_match(if_match)
        raise NotFoundError(f"{source.rel} does not exist")
    if stat.S_ISDIR(info.st_mode):
        fsops.check_folder_match(if_match, source.rel)
        return _move_folder(vault, source, dest, reason, actor)
    if source.dir_only:
        raise ForbiddenPathError(NOT_A_FILE)
    move_checks.check_no_folder(vault, source, dest)
    if dest.dir_only:
        raise ForbiddenPathError(NOT_A_FILE)
    if stat.S_ISREG(info.st_mode) and info.st_size > vault.max_file_bytes:
        return _move_oversized(vault, source, dest, if_match)  # no history rows: see there
    return _move_file(vault, source, dest, if_match, reason, actor)


# -- one file --------------------------------------------------------------------------


def _move_oversized(vault: Vault, source: Target, dest: Target, if_match: str | None) -> dict:
    """Move a text file or an image over ``max_file_bytes`` (made by another program)
    as it is, by a new name for the same bytes, so the limit never pins a file where
    it is; relative links in it are not rewritten (that needs its text). A note, or
    a file with an ``.assets/`` folder of its own, is refused (``too_large``): it
    moves with its links rewritten, which needs its whole text. History gets
    no rows: it keeps no text over the limit (the watcher records none either)."""
    move_checks.check_oversized_kinds(vault, source, dest)
    with vault.locked([source, dest]), ExitStack() as stack:
        src = stack.enter_context(vault.sandbox.open(source))
        dst = open_new_path(stack, vault.sandbox, dest)
        etag, info = file_etag(src)
        if info.st_nlink > 1:
            raise ForbiddenPathError("the file has more than one hard link; it is not moved")
        fsops.check_etag_match(if_match, etag)
        if dst.lstat() is not None:
            raise ConflictError(f"{dest.rel} already exists; pick another new_path")
        assert src.dir_fd is not None  # file_etag opened the file in it
        if fsops.is_real_dir(src.assets_name, src.dir_fd):
            raise TooLargeError(
                f"{source.rel} is larger than {vault.max_file_bytes} bytes and has an"
                " .assets/ folder: its links cannot be rewritten; it was not moved"
            )
        dst_fd = dst.make_parent()
        try:
            atomic.link_no_replace(src.dir_fd, src.name, dst_fd, dst.name)
        except BaseException:
            dst.rollback()
            raise
        with suppress(FileNotFoundError):  # renamed where links are not
            os.unlink(src.name, dir_fd=src.dir_fd)
        os.fsync(dst_fd)
        os.fsync(src.dir_fd)
    vault._notify_all([source, dest])
    return {"path": source.rel, "new_path": dest.rel, "etag": etag}


def _move_file(
    vault: Vault,
    source: Target,
    dest: Target,
    if_match: str | None,
    reason: str | None,
    actor: str,
) -> dict:
    kind = move_checks.check_kinds(source, dest)
    relocate = relocate_note(source.rel, dest.rel)
    for _ in range(ATTEMPTS):
        assets = asset_paths(vault, source) if kind in TEXTS else []
        targets = [source, dest]
        targets += [vault.sandbox.resolve(source.lang, a) for a in assets]
        targets += [vault.sandbox.resolve(source.lang, relocate(a)) for a in assets]
        with vault.locked(targets), ExitStack() as stack:
            src = stack.enter_context(vault.sandbox.open(source))
            dst = open_new_path(stack, vault.sandbox, dest)
            if kind in TEXTS and asset_paths(vault, source) != assets:
                continue  # an image came or went meanwhile: list and lock again
            return _move_file_locked(vault, src, dst, relocate, if_match, reason, actor)
    raise ConflictError(f"the images of {source.rel} keep changing; try the move again")


def _move_file_locked(
    vault: Vault,
    src: Place,
    dst: Place,
    relocate: Relocate,
    if_match: str | None,
    reason: str | None,
    actor: str,
) -> dict:
    source, dest = src.target, dst.target
    before = vault._existing_bytes(src)
    if before is None or src.dir_fd is None:
        raise NotFoundError(f"{source.rel} does not exist")
    refuse_twin(src.dir_fd, src.name, source.rel, "its move")
    fsops.check_if_match(if_match, before)
    if dst.lstat() is not None:
        raise ConflictError(f"{dest.rel} already exists; pick another new_path")
    assets_name = src.assets_name
    has_assets = file_kind(source) in TEXTS and fsops.is_real_dir(assets_name, src.dir_fd)
    if has_assets and dst.dir_fd is not None and fsops.lstat_at(dst.assets_name, dst.dir_fd):
        raise ConflictError(f"{dest.rel}.assets already exists; pick another new_path")
    assets = _assets_of(vault, src, relocate) if has_assets else []
    moving = {source.rel, *(item.old.rel for item in assets)}
    after = relinked(vault, before, source, dest, relocate, moving)
    vault._check_size(len(after))
    info = src.lstat()
    if after != before and info is not None:  # a new file: refused as a write would be
        fsops.refuse_read_only(info)
    mode = None if info is None else permissions(info, src.dir_fd)
    moved = [_Moved(source, dest, before, after, mode), *assets]
    # A name that stays keeps its spelling on disk (a Mac's NFD), its images' folder too:
    # moved to another folder, nothing is renamed (and undo brings it back so).
    kept = unicodedata.normalize("NFC", src.name) == dst.name
    name, images = (src.name, assets_name) if kept else (dst.name, dst.name + ".assets")
    with vault.recorder.changing(_changes(moved), actor=actor, reason=reason):
        dst_fd = dst.make_parent()
        try:
            place_file(src.dir_fd, src.name, dst_fd, name, before, after)
        except BaseException:
            dst.rollback()
            raise
        if has_assets:
            try:
                os.rename(assets_name, images, src_dir_fd=src.dir_fd, dst_dir_fd=dst_fd)
            except OSError as err:
                place_file(dst_fd, name, src.dir_fd, src.name, after, before)
                dst.rollback()
                fsops.refuse(err)
                plain = oserrors.describe(err)  # (a read-only folder is no conflict to retry)
                if plain is not None:
                    raise plain from None
                raise ConflictError(
                    f"the images of {source.rel} could not move ({os.strerror(err.errno or 0)});"
                    " nothing was moved"
                ) from None
        os.fsync(dst_fd)
        os.fsync(src.dir_fd)
    if file_kind(source) == "asset":
        remove_emptied_folder(vault.sandbox, source)
    texts = [t for m in assets if file_kind(m.old) in TEXTS for t in (m.old, m.new)]
    vault._notify_all([source, dest, *texts])  # (notes another program put in .assets/)
    return {"path": source.rel, "new_path": dest.rel, "etag": fsops.etag_of(after)}


def place_file(
    src_fd: int, src_name: str, dst_fd: int, dst_name: str, before: bytes, after: bytes
) -> None:
    """Move one file, never over an existing one: renamed in one step when its bytes stay
    (a crash between a link and an unlink left two names of one file, which no tool may
    change), else a new file when its links were rewritten; then the old name goes."""
    if after == before:
        try:
            if renames.move_noreplace(src_fd, src_name, dst_fd, dst_name):
                if read_at(dst_fd, dst_name, len(before)) != before:  # saved meanwhile
                    with suppress(OSError):
                        renames.move_noreplace(dst_fd, dst_name, src_fd, src_name)
                    raise ConflictError(CHANGED_WHILE_MOVED)
                return
        except FileExistsError:
            raise ConflictError(f"{dst_name} already exists") from None
        except OSError as err:
            fsops.refuse(err)
            raise
        atomic.link_no_replace(src_fd, src_name, dst_fd, dst_name)  # no renameat2 here
    else:
        atomic.create_no_replace(dst_fd, dst_name, after)
        if read_at(src_fd, src_name, len(before)) != before:  # saved meanwhile: keep it
            os.unlink(dst_name, dir_fd=dst_fd)
            raise ConflictError(CHANGED_WHILE_MOVED)
    with suppress(FileNotFoundError):  # gone already where hard links are not supported
        os.unlink(src_name, dir_fd=src_fd)


def asset_paths(vault: Vault, note: Target) -> list[str]:
    """Vault paths of the files in a note's ``.assets/`` folder, sorted."""
    with vault.sandbox.open(note) as place:
        return [rel for rel, *_ in _files_below(place, place.assets_name, note.rel + ".assets")]


def _assets_of(vault: Vault, src: Place, relocate: Relocate) -> list[_Moved]:
    note = src.target
    moved = []
    below = _files_below(src, src.assets_name, note.rel + ".assets", read=vault.max_file_bytes)
    for rel, data, mode in below:
        old = vault.sandbox.resolve(note.lang, rel)
        new = vault.sandbox.resolve(note.lang, relocate(rel))
        moved.append(_Moved(old, new, data, data, mode))
    return moved


# -- a folder --------------------------------------------------------------------------


def _move_folder(
    vault: Vault, source: Target, dest: Target, reason: str | None, actor: str
) -> dict:
    for segment in (*source.rel.split("/"), *dest.rel.split("/")):
        if segment.endswith(".assets"):
            raise ForbiddenPathError(
                f"a folder named *.assets holds the images of a note ({segment}: those of "
                f"{segment.removesuffix('.assets')}) and moves only with it: move the note, "
                "or the files in the folder one by one"
            )
    relocate = relocate_prefix(source.rel, dest.rel)
    with vault.locked([], alone=source.lang):  # no tool changes the vault meanwhile
        for _ in range(ATTEMPTS):
            listed = _folder_files(vault, source)
            targets = [vault.sandbox.resolve(source.lang, rel) for rel in listed]
            targets += [vault.sandbox.resolve(source.lang, relocate(rel)) for rel in listed]
            with vault.locked(targets), ExitStack() as stack:
                src = stack.enter_context(vault.sandbox.open(source))
                dst = open_new_path(stack, vault.sandbox, dest)
                if _folder_files(vault, source) != listed:
                    continue  # another program's files came or went
                return _move_folder_locked(vault, src, dst, relocate, reason, actor)
    raise ConflictError(f"the files in {source.rel} keep changing; try the move again")


def _move_folder_locked(
    vault: Vault, src: Place, dst: Place, relocate: Relocate, reason: str | None, actor: str
) -> dict:
    source, dest = src.target, dst.target
    info = src.lstat()
    if info is None or src.dir_fd is None or not stat.S_ISDIR(info.st_mode):
        raise NotFoundError(f"the folder {source.rel} does not exist")
    refuse_twin(src.dir_fd, src.name, source.rel, "its move")
    if dst.lstat() is not None:
        raise ConflictError(f"{dest.rel} already exists; pick another new_path")
    check_reach(src, source, dest)
    moved = []
    summaries: list[str] = []  # (the summaries job's moves in history, told the index)
    below = _files_below(src, src.name, source.rel, read=vault.max_file_bytes, found=summaries)
    moving = {rel for rel, *_ in below}
    for rel, data, mode in below:
        old = vault.sandbox.resolve(source.lang, rel)
        new = vault.sandbox.resolve(source.lang, relocate(rel))
        after = (
            relinked(vault, data, old, new, relocate, moving) if file_kind(old) in TEXTS else data
        )
        moved.append(_Moved(old, new, data, after, mode))
    for item in moved:
        if item.after != item.before:
            _check_rewritable(vault, item.old)
    summary_targets, carried = carried_summaries(vault, source.lang, summaries, relocate)
    with (
        vault.recorder.changing(_changes(moved), actor=actor, reason=reason),
        vault.recorder.changing(carried, actor="job:summaries", reason=CARRIED_REASON),
    ):
        dst_fd = dst.make_parent()
        if fsops.lstat_at(dst.name, dst_fd) is not None:
            raise ConflictError(f"{dest.rel} already exists; pick another new_path")
        try:
            os.rename(src.name, dst.name, src_dir_fd=src.dir_fd, dst_dir_fd=dst_fd)
        except OSError as err:
            dst.rollback()
            fsops.refuse(err)
            raise
        os.fsync(dst_fd)
        os.fsync(src.dir_fd)
        rewritten: list[_Moved] = []
        try:
            for item in moved:
                if item.after != item.before:  # a note whose links point out of the folder
                    with vault.sandbox.open(item.new) as place:
                        place.commit(item.after)
                    rewritten.append(item)
        except BaseException:  # (a read-only folder, a full disk): the move is taken back
            _move_back(vault, src, dst, dst_fd, rewritten)
            raise
    told = [target for item in moved for target in (item.old, item.new)]
    vault._notify_all(told + summary_targets)
    return {"path": source.rel, "new_path": dest.rel, "etag": None, "files": len(moved)}


def _check_rewritable(vault: Vault, target: Target) -> None:
    """A note whose links a folder move rewrites must be one every tool that writes a
    file may write: one name (the rewrite would split a hard link, its other name
    keeping the old text) and not read-only."""
    with vault.sandbox.open(target) as place:
        info = place.lstat()
    if info is None:
        return
    if info.st_nlink > 1:
        raise ForbiddenPathError(
            f"{target.rel} has more than one hard link and its links would be"
            " rewritten; nothing was moved"
        )
    try:
        fsops.refuse_read_only(info)
    except SystemRefusedError:
        raise SystemRefusedError(
            f"{target.rel} is read-only and its links would be rewritten; nothing was moved"
        ) from None


def _move_back(vault: Vault, src: Place, dst: Place, dst_fd: int, relinked: list[_Moved]) -> None:
    """Undo a folder move whose links could not all be rewritten: the notes rewritten
    get their bytes back, and the folder its name (the refusal says nothing changed)."""
    try:
        for item in relinked:
            with vault.sandbox.open(item.new) as place:
                place.commit(item.before)
        assert src.dir_fd is not None
        os.rename(dst.name, src.name, src_dir_fd=dst_fd, dst_dir_fd=src.dir_fd)
        os.fsync(src.dir_fd)
        os.fsync(dst_fd)
        dst.rollback()
    except Exception:
        log.exception("a folder move failed and could not be taken back fully")


def _folder_files(vault: Vault, folder: Target) -> list[str]:
    with vault.sandbox.open(folder) as place:
        return [rel for rel, *_ in _files_below(place, place.name, folder.rel)]


# -- shared ----------------------------------------------------------------------------


def _files_below(
    place: Place, name: str, rel: str, *, read: int = 0, found: list[str] | None = None
) -> list[tuple[str, bytes, int | None]]:
    """(vault path, bytes, mode) of the files below the folder ``name`` of ``place``'s
    folder, sorted (dot-files left out: they move with their folder, without history but
    the folders' summaries, whose paths are added to ``found`` when given). Bytes and
    mode (``read_with_mode``: kept on the row of the path a file leaves) are read only
    when ``read`` (the size limit) is given; a file over it is refused."""
    if place.dir_fd is None or not fsops.is_real_dir(name, place.dir_fd):
        return []
    files: list[tuple[str, bytes, int | None]] = []
    fd = fsops.open_dir(name, place.dir_fd)
    hidden = found is not None  # (a dot-file past the length limit: no warning, not told)
    walk = walk_files(
        fd, rel, hidden_files=hidden, any_length=_dot_name if hidden else None, refused=_unlisted
    )
    with fsops.opened(fd), closing(walk) as entries:
        for entry in entries:
            if entry.name.startswith("."):
                if found is not None and entry.name == OVERVIEW_FILE:
                    found.append(entry.rel)
                continue
            got = read_with_mode(entry.dir_fd, entry.name, read) if read else (b"", None)
            data, mode = (None, None) if got is None else got
            if data is None and _larger(entry, read):
                raise TooLargeError(f"{entry.rel} is larger than the limit; nothing was moved")
            if data is None and _unreadable(entry):
                raise SystemRefusedError(
                    f"the system does not let the indexer read {entry.rel} (permission"
                    " denied); nothing was moved"
                )
            if data is None:
                raise ConflictError(f"{entry.rel} changed while the move ran; nothing was moved")
            files.append((entry.rel, data, mode))
    return files


def _unlisted(path: str) -> None:
    """A subfolder the system does not let the indexer list: the rename would carry its
    notes along unseen (no version in history, links not rewritten), so nothing moves."""
    raise SystemRefusedError(
        f"the system does not let the indexer list {path} (permission denied); nothing was moved"
    )


def _dot_name(name: str) -> bool:
    return name.startswith(".")


def _larger(entry: FileEntry, limit: int) -> bool:
    try:
        return entry.signature()[0] > limit
    except OSError:
        return False


def _unreadable(entry: FileEntry) -> bool:
    """A file that is there but may not be read (not one that changed meanwhile)."""
    try:
        return not os.access(entry.name, os.R_OK, dir_fd=entry.dir_fd, follow_symlinks=False)
    except OSError:
        return False


def _changes(moved: list[_Moved]) -> list[Change]:
    """History rows of a move: each file leaves its old path and arrives at its new;
    those the tools do not write too (a PDF beside a note's images, an image in a
    subfolder of them), as a delete records them: an undo puts every one back."""
    changes = []
    for item in moved:
        lang = item.old.lang
        away = Change(lang, item.old.rel, "move", item.before, None, item.new.rel, mode=item.mode)
        changes.append(away)
        changes.append(Change(lang, item.new.rel, "move", None, item.after, item.old.rel))
    return changes
