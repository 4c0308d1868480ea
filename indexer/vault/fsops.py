"""File-descriptor primitives: every vault operation goes through an open folder.

No path string below the vault root ever reaches the kernel. Each folder is opened with
``O_NOFOLLOW`` relative to its parent's descriptor, and the final operation uses that
descriptor and a bare name, so a folder swapped for a symbolic link between two calls is
never followed (the open fails with ``ELOOP``/``ENOTDIR``). A check on path strings
followed by a use of the same strings cannot promise that.
"""

from __future__ import annotations

import errno
import hashlib
import itertools
import logging
import os
import stat
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

from indexer.vault import no_wait
from indexer.vault.names import equivalent_name
from shared.errors import (
    ConflictError,
    ExistenceConflictError,
    ForbiddenPathError,
    InvalidArgumentError,
    SystemRefusedError,
)
from shared.utf8 import check_text

log = logging.getLogger("indexer.vault")
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_REFUSED = (errno.ELOOP, errno.ENOTDIR, errno.ENAMETOOLONG, errno.EMLINK)
MAX_NAME_BYTES = 255
LEASE_WAIT = 2.0  # seconds an open waits for another's lease on the file
# The text searched in a file: what the index reads of it, and grep with it (a file other
# programs grew past the size limit is still found by both; past this, by name only).
MAX_SEARCHED_BYTES = 8 * 1024 * 1024
CHANGED = "the file changed since it was read; read it again and merge"
WEAK = "W/"  # an HTTP weak etag's mark: no etag (a hex digest) starts with it
ANY = "*"  # the ``if_match`` of any content, HTTP's ``If-Match: *``: the file must exist
# Between etags of an ``if_match`` that any of them matches (HTTP's ``If-Match: "a", "b"``):
# no etag (a hex digest) holds it, so one etag is never read as a list.
ETAG_LIST = ","
_CLOSER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fsops-close")


def etag_of(data: bytes) -> str:
    """The content hash of a file's bytes: the etag clients pass back as ``if_match``,
    and what the index compares to tell a real change from a touched mtime."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def check_if_match(if_match: str | None, existing: bytes | None) -> None:
    """``conflict`` unless the file is as the caller last read it: ``if_match`` is its
    etag, ``""`` means "must not exist", ``"*"`` "must exist, as it is now" (HTTP's
    ``If-Match: *``; no etag, a hex digest, is ``*``), etags joined by ``ETAG_LIST`` "is
    as any of them" (HTTP's list), None asks nothing."""
    if if_match is not None:  # (the etag is computed only when asked about)
        check_etag_match(if_match, None if existing is None else etag_of(existing))


def check_etag_match(if_match: str | None, etag: str | None) -> None:
    """``check_if_match`` for a file known by its etag (None: it does not exist), as
    one too large to be read whole is."""
    if if_match is None:
        return
    check_text("if_match", if_match)  # (no etag holds a lone surrogate: it said "changed")
    if if_match == "":
        if etag is not None:
            raise ExistenceConflictError(exists=True)
    elif if_match == ANY:
        if etag is None:
            raise ExistenceConflictError(exists=False)
    elif etag is None:
        raise ConflictError("the file no longer exists; read it again before writing")
    elif if_match.startswith(WEAK):
        raise ConflictError("a weak etag never matches If-Match; send the note's etag")
    elif etag not in if_match.split(ETAG_LIST):
        raise ConflictError(CHANGED)


def check_folder_match(if_match: str | None, rel: str) -> None:
    """A folder has no etag: ``*`` asks only that it exists, and it does (it was
    refused as an etag, 400); an etag or ``""`` is refused, as before."""
    if if_match is None:
        return
    check_text("if_match", if_match)
    if if_match != ANY:
        raise InvalidArgumentError(f"{rel} is a folder: it has no etag (only * applies)")


def check_missing_match(if_match: str | None) -> None:
    """Before ``not_found`` for a delete or move of nothing: only the precondition's
    form is checked. RFC 9110 13.2.1: a request that would fail without it answers
    that failure (404), as it does whatever ``if_match`` says; a write, which would
    create the file, evaluates it (412)."""
    if if_match is not None:
        check_text("if_match", if_match)


def own_files_only(fd: int, own_files: frozenset[str]) -> list[str] | None:
    """The names in the folder open at ``fd`` when all are regular files of
    ``own_files`` (a folder's own files, which go with it), else None."""
    with os.scandir(fd) as entries:
        found = [
            (entry.name, entry.is_file(follow_symlinks=False))
            for entry in itertools.islice(entries, len(own_files) + 1)
        ]
    if all(is_file and name in own_files for name, is_file in found):
        return [name for name, _ in found]
    return None


def refuse(err: OSError) -> None:
    """Turn a symlink/not-a-folder/too-long error into ``forbidden_path``; others go up."""
    if err.errno in _REFUSED:
        reason = {
            errno.ENAMETOOLONG: "a name in the path is too long for the file system",
        }.get(err.errno or 0, "the path goes through a symbolic link or a file")
        raise ForbiddenPathError(reason) from None


def open_dir(name: str, dir_fd: int) -> int:
    """Open the folder ``name`` inside ``dir_fd``; a link or a file there is refused.

    A folder stored under another normalization form of ``name`` (NFD) is found too.
    """
    try:
        return os.open(name, DIR_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        other = equivalent_name(dir_fd, name)
        if other is None:
            raise
        return open_dir(other, dir_fd)
    except OSError as err:
        refuse(err)
        raise


def lstat_at(name: str, dir_fd: int) -> os.stat_result | None:
    """The entry ``name`` of ``dir_fd`` itself (links not followed), or None if missing."""
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except OSError as err:
        refuse(err)
        raise


def open_regular(name: str, dir_fd: int, flags: int = READ_FLAGS, mode: int = 0o644) -> int:
    """Open a regular file; a link → forbidden, a folder → IsADirectoryError, else forbidden.

    ``O_NONBLOCK`` keeps a FIFO swapped in from blocking the open; ``fstat`` then refuses it.
    """
    return open_regular_stat(name, dir_fd, flags, mode)[0]


def open_regular_stat(
    name: str, dir_fd: int, flags: int = READ_FLAGS, mode: int = 0o644
) -> tuple[int, os.stat_result]:
    """``open_regular``, with the ``fstat`` it checked the file by (a reader needs no
    second one)."""
    try:
        fd = _open_leased(name, dir_fd, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    except FileNotFoundError:
        other = None if flags & os.O_CREAT else equivalent_name(dir_fd, name)
        if other is None:
            raise
        return open_regular_stat(other, dir_fd, flags, mode)
    except OSError as err:
        if err.errno == errno.EISDIR:
            raise IsADirectoryError(name) from None
        if err.errno == errno.ENXIO:  # a FIFO without a reader, opened for writing
            raise ForbiddenPathError("the path is not a regular file") from None
        refuse(err)
        raise
    try:
        info = os.fstat(fd)
    except BaseException:
        os.close(fd)
        raise
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(name)
        raise ForbiddenPathError("the path is not a regular file")
    return fd, info


def _open_leased(name: str, dir_fd: int, flags: int, mode: int) -> int:
    """``os.open``, waiting out a lease that refuses a non-blocking open for a moment
    (a write of ours swapping a file in; a file server's lease being given back); after
    ``LEASE_WAIT`` seconds, ``ConflictError``."""
    deadline = time.monotonic() + LEASE_WAIT
    pause = 0.0005
    while True:
        try:
            return os.open(name, flags, mode, dir_fd=dir_fd)
        except BlockingIOError:
            no_wait.may_wait()  # (on the event loop: the call moves to a thread)
            if time.monotonic() >= deadline:
                raise ConflictError(
                    "another program holds a lease on the file and keeps it; try again"
                ) from None
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


@contextmanager
def opened(fd: int) -> Iterator[int]:
    """Close ``fd`` when the block ends."""
    try:
        yield fd
    finally:
        os.close(fd)


def close_later(fd: int) -> None:
    """Close ``fd`` on a background thread. The last close of a replaced file frees its
    blocks: a few ms on ext4 (measured: 2.7 ms of a 15 ms write) that the answer need
    not wait for. At interpreter shutdown it is closed at once."""
    try:
        _CLOSER.submit(os.close, fd)
    except RuntimeError:  # no new work after shutdown began
        os.close(fd)


CHUNK_BYTES = 1 << 20  # what one read of a file asks for at most


def sized_chunks(
    read: Callable[[int, int], bytes], size: int | None, most: int | None = None
) -> Iterator[bytes]:
    """A file's bytes in chunks from ``read(count, offset)`` (offset from where it
    starts), to its end or ``most`` bytes.

    ``size``: the file's size by its ``fstat``. The first read asks for one byte more
    than that; when exactly ``size`` come, the end is reached, with no read of nothing
    after it, and no 1 MiB buffer allocated for a note of 2 KB (a write read its note
    and the index read it back: two system calls of about 60 a write). A file that grew
    or shrank since is read on to its end as without ``size``."""
    offset = 0
    ask = CHUNK_BYTES if size is None else min(size + 1, CHUNK_BYTES)
    while most is None or offset < most:
        try:
            chunk = read(ask if most is None else min(most - offset, ask), offset)
        except BlockingIOError:
            return
        if not chunk:
            return
        yield chunk
        offset += len(chunk)
        if len(chunk) == size and ask == size + 1:  # (asked one more: the end)
            return
        ask = CHUNK_BYTES


def read_all(fd: int, max_bytes: int, size: int | None = None) -> bytes:
    """Up to ``max_bytes + 1`` bytes of an open file from where it stands (one more shows
    it is too big); ``size``: its ``fstat``'s (``sized_chunks``)."""
    return b"".join(sized_chunks(lambda count, _: os.read(fd, count), size, max_bytes + 1))


def read_under(
    root: str, rel: str, max_bytes: int, *, tail: bool = False
) -> tuple[bytes, os.stat_result] | None:
    """The bytes (at most ``max_bytes + 1``; with ``tail``, the last ``max_bytes`` of a
    larger file) and stat of the regular file ``rel`` below the folder ``root``, walking
    folders by descriptor; None when missing, a link or special.

    The one read by vault path for code that holds no open folder (the index).
    """
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        *folders, name = rel.split("/")
        for segment in folders:
            child = open_dir(segment, fd)
            os.close(fd)
            fd = child
        file_fd, info = open_regular_stat(name, fd)
    except (OSError, ForbiddenPathError):
        return None
    finally:
        os.close(fd)
    with opened(file_fd):
        try:
            if tail and info.st_size > max_bytes:
                os.lseek(file_fd, info.st_size - max_bytes, os.SEEK_SET)
                return read_all(file_fd, max_bytes - 1), info
            return read_all(file_fd, max_bytes, info.st_size), info
        except OSError:
            return None


def lstat_under(root: str, rel: str) -> os.stat_result | None:
    """The entry ``rel`` below the folder ``root`` itself, walking folders by descriptor
    as the sandbox does (links never followed); None when it is missing. A folder on the
    way that is a link or a file: ``forbidden_path``; others (permission denied) go up."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        *folders, name = rel.split("/")
        for segment in folders:
            child = open_dir(segment, fd)
            os.close(fd)
            fd = child
        found = lstat_at(name, fd)
        if found is None:
            other = equivalent_name(fd, name)
            found = None if other is None else lstat_at(other, fd)
        return found
    except FileNotFoundError:
        return None
    finally:
        os.close(fd)


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def refuse_read_only(info: os.stat_result) -> None:
    """A file its permissions keep the indexer from writing (a person's ``chmod a-w``)
    is left as it is by every tool that would change or remove it, as ``append`` left
    it: a write swapped a new file in (and gave it the same mode), root wrote anything.
    Root is held to the write bits as anyone; the system's own refusal still holds.
    The permissions refuse, not the path asked for: ``SystemRefusedError``."""
    if read_only(info):
        raise SystemRefusedError(
            "the file is read-only (its permissions do not let the indexer write it);"
            " nothing was changed"
        )


def read_only(info: os.stat_result) -> bool:
    """A regular file ``refuse_read_only`` refuses."""
    return stat.S_ISREG(info.st_mode) and not _may_write(info)


def _may_write(info: os.stat_result) -> bool:
    uid = os.geteuid()
    if uid == 0:
        return bool(info.st_mode & 0o222)
    if info.st_uid == uid:
        return bool(info.st_mode & stat.S_IWUSR)
    if info.st_gid == os.getegid() or info.st_gid in os.getgroups():
        return bool(info.st_mode & stat.S_IWGRP)
    return bool(info.st_mode & stat.S_IWOTH)


def append_at(
    dir_fd: int, name: str, data: bytes, *, create: bool, sync_dir: bool = False
) -> os.stat_result:
    """Append ``data`` to ``name`` (fsync'd); refuses a file with several hard links.

    The link count is checked on the opened file, not on a path that could change;
    ``sync_dir`` also fsyncs the folder (for a file this call may have created). A
    failed append (full disk, file size limit, I/O error) changes nothing: the file is
    cut back to its length before (and fsync'd), or removed if this call created it,
    before the error goes up, so the next append is never glued onto a fragment.
    """
    flags = os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK
    created = False
    try:
        fd = open_regular(name, dir_fd, flags)
    except FileNotFoundError:
        if not create:
            raise
        try:
            fd = open_regular(name, dir_fd, flags | os.O_CREAT | os.O_EXCL)
            created = True
        except FileExistsError:  # made meanwhile: append to it (a link is refused)
            fd = open_regular(name, dir_fd, flags)
    with opened(fd):
        before = os.fstat(fd)
        if before.st_nlink > 1:
            raise ForbiddenPathError("the file has more than one hard link; it is not modified")
        refuse_read_only(before)
        try:
            write_all(fd, data)
            os.fsync(fd)
        except BaseException:
            _undo_append(fd, dir_fd, name, before.st_size, created)
            raise
        info = os.fstat(fd)
    if sync_dir:
        os.fsync(dir_fd)
    return info


def _undo_append(fd: int, dir_fd: int, name: str, size: int, created: bool) -> None:
    """Take a failed append back (best effort; the append's own error is what goes up)."""
    try:
        if created:
            os.unlink(name, dir_fd=dir_fd)
        else:
            os.ftruncate(fd, size)
            os.fsync(fd)
    except OSError:
        log.error("could not take back a failed append to %s", name, exc_info=True)


def make_dir(name: str, dir_fd: int) -> tuple[int, bool]:
    """Open folder ``name`` in ``dir_fd``, creating it if missing; (fd, created)."""
    created = False
    try:
        os.mkdir(name, 0o755, dir_fd=dir_fd)
        created = True
    except FileExistsError:
        pass
    except OSError as err:
        refuse(err)
        raise
    fd = open_dir(name, dir_fd)
    if created:
        os.fsync(dir_fd)
    return fd, created


def is_real_dir(name: str, dir_fd: int) -> bool:
    """Whether ``name`` in ``dir_fd`` is a folder (not a link to one)."""
    if len(name.encode("utf-8")) > MAX_NAME_BYTES:
        return False
    info = lstat_at(name, dir_fd)
    return info is not None and stat.S_ISDIR(info.st_mode)


def make_folders(path: Path, mode: int = 0o755) -> None:
    """``path`` and its missing parents, each ``mode`` less the umask, as
    ``Path.mkdir(parents=True, exist_ok=True)`` otherwise: that one leaves the parents to
    the umask alone (0777 under umask 0000), and a workspace, ``memory`` or
    ``memory/languages`` any local user may write lets them replace the URL file (the
    client sends its token where it points), plant a vault or a state folder.
    Once the parents are made, ``path`` is tried once more: "no such file" under a
    parent that is there (``/proc/self/x``) is the system's answer, not a missing parent
    (tried again and again, it ended in a RecursionError)."""
    try:
        path.mkdir(mode)
        return
    except FileNotFoundError:
        if path.parent == path:
            raise
    except OSError:
        if path.is_dir():
            return
        raise
    make_folders(path.parent, mode)
    try:
        path.mkdir(mode)
    except OSError:
        if not path.is_dir():
            raise
