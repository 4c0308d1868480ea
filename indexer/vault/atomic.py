"""Writes a reader sees whole or not at all: a temp file put in place of the note.

``replace_at`` is the one atomic replace (the tools, the indexer's own files and the
history use it), with its conditional swap under leases; ``create_no_replace`` and
``link_no_replace`` make a name that must not exist yet (a move never overwrites a
file that appears at its destination). Built on the descriptor primitives of
``fsops``: no path string below the vault root reaches the kernel here either.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import logging
import os
import secrets
import stat
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress

from indexer.vault import renames
from indexer.vault.fsops import (
    CHANGED,
    READ_FLAGS,
    close_later,
    lstat_at,
    open_regular_stat,
    opened,
    refuse,
    refuse_read_only,
    sized_chunks,
    write_all,
)
from shared.errors import ConflictError

log = logging.getLogger("indexer.vault")
_NO_LINKS = (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.ENOSYS)
TEMP_STEM_BYTES = 200


# The temp files this process's writes have in flight (by name: a random token each): the
# start-up sweep of a crash's leftovers spares these only. (It spared every file younger
# than a second before the start: a crash's leftovers from its last second stayed.)
_IN_FLIGHT: set[str] = set()
_IN_FLIGHT_LOCK = threading.Lock()


def in_flight(temp: str) -> bool:
    """Whether ``temp`` names a temp file one of this process's writes is using."""
    with _IN_FLIGHT_LOCK:
        return temp in _IN_FLIGHT


def temp_prefix(name: str) -> str:
    """What the names of ``name``'s temp files start with (``.<stem>.tmp.``; 16 hex
    digits follow): the sweep of the workspace's own files looks for these."""
    stem = name.encode("utf-8")[:TEMP_STEM_BYTES].decode("utf-8", "ignore")
    return f".{stem}.tmp."


@contextmanager
def _temp_for(name: str) -> Iterator[str]:
    """A dot-name for a write's temp file that fits any legal ``name`` (stem cut on a
    char), in flight for the block."""
    temp = temp_prefix(name) + secrets.token_hex(8)
    with _IN_FLIGHT_LOCK:
        _IN_FLIGHT.add(temp)
    try:
        yield temp
    finally:
        with _IN_FLIGHT_LOCK:
            _IN_FLIGHT.discard(temp)


def replace_at(
    dir_fd: int,
    name: str,
    data: bytes,
    *,
    mode: int | None = None,
    keep_owner: bool = False,
    if_match: str | None = None,
    durable: bool = True,
    sync_folder: bool = True,
) -> None:
    """Atomically replace ``name`` in ``dir_fd``: temp file, fsync, rename, fsync of the folder.

    The only atomic write: the tools, the indexer's own files and the history use it.
    ``mode`` None keeps the permissions (and the owner, where the process may) of the
    file being replaced, or 0644 less the umask for a new one; a given ``mode`` is
    applied as it is (the token file's 0600); ``keep_owner`` keeps the owner with it (a
    person's note narrowed by a job run as root stays theirs, not root's 0600 file they
    can no longer read), never by default: the token file is the indexer's own.

    ``if_match`` makes the replace conditional, with the tools' meaning: "" = only if
    ``name`` does not exist (``renameat2(RENAME_NOREPLACE)``), an etag = only if ``name``
    still holds that content; otherwise ``ConflictError`` and nothing changes. The file
    is opened and compared once more after the temp file is written and fsync'd, under
    a read lease (refused while another program has the file open for writing: an
    editor between its truncate and its write; new writers wait while it is held); the
    swap is ``renameat2(RENAME_EXCHANGE)``, after which the file swapped out must be
    that one, with no writer waiting on the lease, else it is swapped back.

    An editor that opens the note while our file is in place, before it is swapped
    back, waits on a write lease on our file and then reads what is in place again (it
    used to read our content and save on top of it, losing its edit just before: seen
    in 1 of 376 rename saves every 2 ms on a loaded machine).

    What remains (the kernel offers no compare-and-swap of contents): a writer that
    resolved the name before the swap and reaches the lease check in its ``open`` only
    after the lease is released (microseconds) writes into the replaced file, and that
    edit is lost. Without leases (a file not owned by this user, some network file
    systems) the content is hashed again after the swap instead: a writer that already
    had the file open and writes after that hash loses its edit, and a reader in the
    moment our file is in place reads it. Without ``RENAME_EXCHANGE`` a plain rename
    follows the last comparison.

    ``durable=False`` skips the fsyncs, for derived files that are made again when lost
    (folder summaries): still atomic for readers, not promised to survive a power cut.
    ``sync_folder=False`` leaves the folder's fsync to the caller, who syncs it once for
    many files before it answers (an undo of 10,000 appends: one fsync per file, not two).
    """
    old = lstat_at(name, dir_fd)
    if old is not None and mode is None:
        refuse_read_only(old)
    with _temp_for(name) as temp:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(temp, flags, _first_mode(old, mode), dir_fd=dir_fd)
        try:
            try:
                _set_owner_and_mode(fd, old, mode, keep_owner=keep_owner)
                write_all(fd, data)
                if durable:
                    os.fsync(fd)
            finally:
                os.close(fd)
            _swap_in(dir_fd, temp, name, if_match)
        except BaseException:
            _remove_temp(dir_fd, temp)
            raise
    if durable and sync_folder:
        os.fsync(dir_fd)


def _first_mode(old: os.stat_result | None, mode: int | None) -> int:
    """The mode the temp file is made with: already the one it will have (a 0600 note's
    copy made 0644 and narrowed after could be opened by another user in between, and
    read through that descriptor once its text was written)."""
    if mode is not None:
        return mode
    if old is not None and stat.S_ISREG(old.st_mode):
        return stat.S_IMODE(old.st_mode) & 0o777
    return 0o644


def _set_owner_and_mode(
    fd: int, old: os.stat_result | None, mode: int | None, *, keep_owner: bool = False
) -> None:
    """The new file gets ``mode``, or the owner and permissions of the one it replaces
    (and its owner with ``mode`` too, when ``keep_owner``)."""
    replaced = old if old is not None and stat.S_ISREG(old.st_mode) else None
    if replaced is not None and (mode is None or keep_owner):
        _keep_owner(fd, replaced)
    if mode is not None:
        os.fchmod(fd, mode)
        return
    if replaced is None:
        return
    wanted = stat.S_IMODE(replaced.st_mode) & 0o777
    # Mostly the mode it was created with: a chmod then would only wake the file watcher
    # (an attribute event of the temp file, which it drops).
    if stat.S_IMODE(os.fstat(fd).st_mode) != wanted:
        os.fchmod(fd, wanted)


def _keep_owner(fd: int, old: os.stat_result) -> None:
    """The replaced file's owner and group, as far as the process may give them."""
    if (old.st_uid, old.st_gid) != (os.geteuid(), os.getegid()):
        try:  # only root may give the file to another user
            os.fchown(fd, old.st_uid, old.st_gid)
        except PermissionError:  # a member of its group keeps the group (a shared note
            with suppress(PermissionError):  # its other members could no longer read)
                os.fchown(fd, -1, old.st_gid)


def _swap_in(dir_fd: int, temp: str, name: str, if_match: str | None) -> None:
    """Put ``temp`` in place of ``name`` (see ``replace_at``); the caller removes ``temp``
    on failure. On success ``temp`` no longer exists."""
    if if_match is None:
        os.replace(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        return
    if if_match == "":
        try:
            renames.rename_noreplace(dir_fd, temp, name)
        except FileExistsError:
            raise ConflictError("the file was created while the write ran; read it") from None
        return
    try:
        fd, info = open_regular_stat(name, dir_fd)
    except FileNotFoundError:
        raise ConflictError("the file no longer exists; read it again before writing") from None
    try:
        leased = renames.read_lease(fd)
        if leased is False:
            raise ConflictError("another program is writing the file right now; read it again")
        try:
            _swap_if_unchanged(fd, info, dir_fd, temp, name, if_match, leased=leased is True)
        finally:
            if leased:
                renames.release_lease(fd)
    finally:
        close_later(fd)  # the replaced file's blocks are freed by its last close


def _swap_if_unchanged(
    fd: int, info: os.stat_result, dir_fd: int, temp: str, name: str, if_match: str, *, leased: bool
) -> None:
    """Swap ``temp`` in if the file open at ``fd`` (the one named ``name``, ``info`` its
    ``fstat`` when opened: its identity, and the size its hash reads first) still holds
    ``if_match``; after the swap, make sure it is that file that went out, unchanged
    (no writer waiting on the lease, or the same content), else swap back.

    Our file is in place for a moment before a swap back, under a write lease: a program
    that opens it then (an editor reading the note for its next save) waits, and is let
    go only once our file holds what is in place again, so it never saves on top of
    content that was never the note's."""
    if _hash_fd(fd, info.st_size) != if_match:
        raise ConflictError(CHANGED)
    guard = _guard(temp, dir_fd)
    try:
        ours = _identity(os.stat(temp, dir_fd=dir_fd, follow_symlinks=False))
        if not renames.exchange(dir_fd, temp, name):
            os.replace(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            return
        out = os.stat(temp, dir_fd=dir_fd, follow_symlinks=False)
        same = _identity(out) == _identity(info)  # (an open file's inode is its own)
        if same and not (renames.lease_broken(fd) if leased else _hash_fd(fd) != if_match):
            _remove_temp(dir_fd, temp)  # the replaced file (the write is done: never an error)
            return
        renames.exchange(dir_fd, temp, name)  # an edit landed between the check and the swap
        back = os.stat(temp, dir_fd=dir_fd, follow_symlinks=False)
        if _identity(back) != ours:  # and another was saved over ours meanwhile: the newest
            renames.exchange(dir_fd, temp, name)
        if guard is not None and renames.lease_broken(guard, fcntl.F_WRLCK):
            _copy_in_place(name, dir_fd, guard)
        raise ConflictError(CHANGED)
    finally:
        if guard is not None:
            renames.release_lease(guard)
            os.close(guard)


def _remove_temp(dir_fd: int, temp: str) -> None:
    """Remove a write's temp file; one the system keeps (its folder made read-only
    meanwhile) is said in the log and left to the start-up sweep. Its error never stands
    for the write's: a swap that had landed was answered "nothing was changed"."""
    try:
        os.unlink(temp, dir_fd=dir_fd)
    except FileNotFoundError:
        pass
    except OSError as err:
        log.warning(
            "could not remove the temp file %s (%s); the next start removes it",
            temp,
            err.strerror,
        )


def _guard(temp: str, dir_fd: int) -> int | None:
    """Our temp file opened under a write lease, or None where leases are not had."""
    try:
        fd = os.open(temp, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError:
        return None
    if renames.write_lease(fd):
        return fd
    os.close(fd)
    return None


def _copy_in_place(name: str, dir_fd: int, into: int) -> None:
    """Make the file at ``into`` hold what ``name`` holds now (best effort)."""
    try:
        source = os.open(name, READ_FLAGS, dir_fd=dir_fd)
    except OSError:
        return
    with opened(source), suppress(OSError):
        offset = 0
        while chunk := os.pread(source, 1 << 20, offset):
            os.pwrite(into, chunk, offset)
            offset += len(chunk)
        os.ftruncate(into, offset)


def _identity(info: os.stat_result) -> tuple[int, int]:
    return info.st_ino, info.st_dev


def _hash_fd(fd: int, size: int | None = None) -> str:
    """The etag of an open file's whole content, read in chunks from the start; ``size``:
    its ``fstat``'s (``fsops.sized_chunks``: no read of nothing at the end)."""
    digest = hashlib.blake2b(digest_size=16)
    for chunk in sized_chunks(lambda count, offset: os.pread(fd, count, offset), size):
        digest.update(chunk)
    return digest.hexdigest()


def link_no_replace(src_fd: int, src: str, dst_fd: int, dst: str) -> None:
    """Give the file ``src`` the second name ``dst``; ``conflict`` if ``dst`` exists.

    ``link(2)`` never replaces its target, unlike ``rename(2)``: a file that appears at
    ``dst`` at the last moment (an editor) is never overwritten by a move. On a file
    system without hard links the file is renamed instead (the caller's unlink of
    ``src`` then finds nothing).
    """
    try:
        os.link(src, dst, src_dir_fd=src_fd, dst_dir_fd=dst_fd, follow_symlinks=False)
    except FileExistsError:
        raise ConflictError(f"{dst} already exists") from None
    except OSError as err:
        if err.errno not in _NO_LINKS:
            refuse(err)
            raise
        # A file system without hard links: check, then rename (the old name goes too).
        if lstat_at(dst, dst_fd) is not None:
            raise ConflictError(f"{dst} already exists") from None
        os.rename(src, dst, src_dir_fd=src_fd, dst_dir_fd=dst_fd)


def create_no_replace(dir_fd: int, name: str, data: bytes) -> None:
    """Create ``name`` with ``data`` atomically (temp file, fsync, link); ``conflict``
    if it exists. The folder is fsync'd by the caller."""
    with _temp_for(name) as temp:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(temp, flags, 0o644, dir_fd=dir_fd)
        try:
            try:
                write_all(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
            link_no_replace(dir_fd, temp, dir_fd, name)
        finally:
            with suppress(FileNotFoundError):
                os.unlink(temp, dir_fd=dir_fd)
