"""What a system error means for a tool call, in plain words (never a host path).

A full disk, a file size limit, a permission the system refuses, a read-only file
system: each becomes the coded error a client can act on, instead of a masked
``internal``. The calls that met them changed nothing (the writes clean up after
themselves), and the message says so. Both frontends' error boundaries use this.
"""

from __future__ import annotations

import errno

from shared.errors import StorageError, SystemRefusedError, TooLargeError, VaultError

NOTHING_CHANGED = "nothing was changed"


def describe(err: OSError) -> VaultError | None:
    """The coded error for ``err``, or None when it has no plainer meaning."""
    code = err.errno
    if code in (errno.ENOSPC, errno.EDQUOT):
        return StorageError(
            f"no space is left on the disk that holds the vault; {NOTHING_CHANGED}"
            " (free some space and try again)",
            http_status=507,
        )
    if code == errno.EFBIG:
        return TooLargeError(
            f"the file would grow past the largest size this system allows; {NOTHING_CHANGED}"
        )
    if code in (errno.EACCES, errno.EPERM):
        return SystemRefusedError(
            "the system does not let the indexer change or read this file or folder"
            f" (permission denied); {NOTHING_CHANGED}"
        )
    if code == errno.EROFS:
        return SystemRefusedError(f"the vault is on a read-only file system; {NOTHING_CHANGED}")
    if code in (errno.EMFILE, errno.ENFILE):
        return StorageError(
            "the indexer has too many files open right now; try again in a moment",
            http_status=503,
        )
    if code == errno.EIO:
        return StorageError(f"the disk reported an input/output error; {NOTHING_CHANGED}")
    return None
