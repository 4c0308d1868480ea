"""What the kernel offers a conditional replace: ``renameat2(2)`` and file leases.

``renameat2`` swaps two names atomically (``RENAME_EXCHANGE``) or renames only if the
target is free (``RENAME_NOREPLACE``). Python has no wrapper; glibc has had one since
2.28 (called through ctypes). Where the call or a flag is missing (old libc, a file
system without ``RENAME_EXCHANGE``), the functions return False and the caller falls
back to a plainer way. A read lease (``fcntl(F_SETLEASE)``) tells whether another
process has a file open for writing, and holds off new writers for a moment; a write
lease does the same for any open, readers included.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import os
import signal
from functools import cache
from typing import Any

RENAME_NOREPLACE = 1
RENAME_EXCHANGE = 2
_UNSUPPORTED = (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP)


@cache
def _renameat2() -> Any:
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    return fn


def _call(dir_fd: int, old: str, new: str, flags: int, new_dir_fd: int | None = None) -> bool:
    """True when done; False when unsupported here; OSError for anything else."""
    fn = _renameat2()
    if fn is None:
        return False
    to_fd = dir_fd if new_dir_fd is None else new_dir_fd
    if fn(dir_fd, os.fsencode(old), to_fd, os.fsencode(new), flags) == 0:
        return True
    code = ctypes.get_errno()
    if code in _UNSUPPORTED:
        return False
    raise OSError(code, os.strerror(code), new)


def exchange(dir_fd: int, a: str, b: str) -> bool:
    """Swap the entries ``a`` and ``b`` of ``dir_fd`` in one step (both must exist)."""
    return _call(dir_fd, a, b, RENAME_EXCHANGE)


def move_noreplace(old_dir_fd: int, old: str, new_dir_fd: int, new: str) -> bool:
    """Rename ``old`` (in one folder) to ``new`` (in another, or the same) in one step,
    only if ``new`` does not exist (``FileExistsError``); False when unsupported here."""
    return _call(old_dir_fd, old, new, RENAME_NOREPLACE, new_dir_fd)


def rename_noreplace(dir_fd: int, old: str, new: str) -> None:
    """Rename ``old`` to ``new`` only if ``new`` does not exist (``FileExistsError``)."""
    if _call(dir_fd, old, new, RENAME_NOREPLACE):
        return
    # No renameat2 here: link(2) also refuses an existing target, atomically.
    os.link(old, new, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
    os.unlink(old, dir_fd=dir_fd)


def read_lease(fd: int) -> bool | None:
    """Take a read lease on ``fd`` (opened read-only): True when held; False when some
    process has the file open for writing right now (an editor mid-save); None when
    leases are not available here (not the file's owner, a file system without them).

    While the lease is held, another process's open of the file for writing waits (up
    to ``/proc/sys/fs/lease-break-time``) until ``release_lease``, and ``lease_broken``
    tells that one is waiting. The kernel signals the breach with SIGURG, whose default
    action is to be ignored: no handler is needed and none may kill the process.
    """
    return _lease(fd, fcntl.F_RDLCK)


def write_lease(fd: int) -> bool | None:
    """Take a write lease on ``fd``, as ``read_lease`` does: while it is held, any other
    open of the file, for reading too, waits until ``release_lease`` (or fails at once
    with ``O_NONBLOCK``), and ``lease_broken(fd, F_WRLCK)`` tells that one was tried.
    False when the file is open elsewhere (this process's other descriptors too)."""
    return _lease(fd, fcntl.F_WRLCK)


def _lease(fd: int, kind: int) -> bool | None:
    try:
        fcntl.fcntl(fd, fcntl.F_SETSIG, signal.SIGURG)
        fcntl.fcntl(fd, fcntl.F_SETLEASE, kind)
    except OSError as err:
        if err.errno in (errno.EAGAIN, errno.EBUSY):
            return False
        return None
    return True


def lease_broken(fd: int, kind: int = fcntl.F_RDLCK) -> bool:
    """Whether an open the lease of ``kind`` on ``fd`` holds off was tried: for a read
    lease, an open for writing (or a truncate); for a write lease, any open."""
    try:
        return fcntl.fcntl(fd, fcntl.F_GETLEASE) != kind
    except OSError:
        return True


def release_lease(fd: int) -> None:
    with contextlib.suppress(OSError):
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
