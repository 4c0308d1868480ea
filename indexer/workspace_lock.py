"""The workspace's single-instance locks, held for a process's life.

``W/.indexer/lock`` is held by every process that works on the workspace (a server, or a
command such as ``reindex``); ``W/.indexer/serving`` by a server alone, which tells
clients that the URL file names a live server. The kernel frees both when the process
dies, so a crash never leaves a workspace locked.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import time
from collections.abc import Iterator

from indexer.vault import fsops
from shared.errors import AlreadyRunningError, StartupError
from shared.workspace import Workspace, lock_pid, older_server, server_serving


@contextlib.contextmanager
def workspace_lock(workspace: Workspace, *, serving: bool = False) -> Iterator[None]:
    """Hold ``W/.indexer/lock`` (flock) for the process's life; the kernel frees it on
    death. ``serving`` (``indexer serve``): its serving lock too, which tells clients a
    server answers at the URL file (a command such as ``reindex`` holds the other alone,
    and a crashed server's URL file may name a port some other program took since)."""
    try:
        fsops.make_folders(workspace.root)  # (0755 less the umask: never open to all)
        workspace.state_dir.mkdir(mode=0o700, exist_ok=True)
        keep_private(workspace)
        fd = os.open(workspace.lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError as err:
        raise StartupError(state_refusal(workspace, err)) from None
    try:
        try:
            _take(fd)
        except BlockingIOError:
            raise AlreadyRunningError(_held_by(workspace)) from None
        with contextlib.suppress(OSError):  # (the pid is for people: a full disk is told
            os.ftruncate(fd, 0)  # by what cannot be written next, in words)
            os.write(fd, f"{os.getpid()}\n".encode())
        if not serving:
            yield
            return
        # A URL file here now is a crashed server's: gone before clients are told a
        # server serves (they trust a URL file while the serving lock is held).
        workspace.url_file.unlink(missing_ok=True)
        with _serving_lock(workspace):
            yield
    finally:
        os.close(fd)


def keep_private(workspace: Workspace) -> None:
    """Refuse a state folder another user owns; make ours 0700 if others may enter it.

    It holds a copy of every note (the index) and every version (history), in files
    SQLite makes 0644: a folder another user owns (a link planted in a shared workspace,
    one made before the first start) let that user read them and swap the databases,
    and one a person made with ``mkdir`` (0755, 0777 under umask 0000) let anyone read
    them. Followed as a link: a state folder linked to one of the user's own is fine."""
    folder = workspace.state_dir
    status = folder.stat()
    if status.st_uid != os.geteuid():
        raise StartupError(
            f"the state folder {folder} belongs to another user (uid {status.st_uid}): it "
            "would hold a copy of every note where that user can read it; remove it (or "
            "the link) and start again, or use another workspace"
        )
    if stat.S_IMODE(status.st_mode) & 0o077:
        os.chmod(folder, 0o700)


def state_refusal(workspace: Workspace, err: OSError) -> str:
    """Why the state folder ``W/.indexer`` (or its lock) cannot be made, in words: what,
    where, what to do (the raw ``[Errno 30] Read-only file system: '...'`` said neither
    what the indexer wanted there nor what to do)."""
    where = f"{err.filename}" if err.filename else str(workspace.state_dir)
    what = f"the indexer cannot make its state (the index, history, locks) in {where}"
    code = err.errno
    if code == errno.EROFS:
        why, todo = "the workspace is on a read-only file system", "use a writable workspace"
    elif code in (errno.EACCES, errno.EPERM):
        why = "the system does not let the indexer's user write there (permission denied)"
        todo = f"give that user the workspace {workspace.root}, or use another workspace"
    elif code in (errno.ENOSPC, errno.EDQUOT):
        why, todo = "no space is left on its disk", "free some space and start again"
    elif code in (errno.ENOENT, errno.ENOTDIR):
        why = "the workspace cannot hold a folder there (a system or virtual folder?)"
        todo = "use a workspace folder of your own"
    else:
        why = err.strerror or str(err)
        todo = "use another workspace, or fix this one"
    return f"{what}: {why}; {todo}"


@contextlib.contextmanager
def _serving_lock(workspace: Workspace) -> Iterator[None]:
    """Hold ``W/.indexer/serving`` (a regular file: a FIFO or a link there is refused)."""
    path = workspace.serving_lock_path
    flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK
    try:
        fd = os.open(path, flags, 0o600)
    except OSError as err:
        raise StartupError(f"cannot open {path}: {err.strerror}; remove it") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise StartupError(f"{path} is not a regular file; remove it")
        try:  # (only a client's probe can hold it for long: the other lock is ours)
            _take(fd)
        except BlockingIOError:
            raise AlreadyRunningError(f"{path} is held by another process") from None
        yield
    finally:
        os.close(fd)


def _held_by(workspace: Workspace) -> str:
    """Who holds the workspace lock, in words: a server, or a command (its pid)."""
    if server_serving(workspace):
        return (
            f"another indexer is already serving the workspace {workspace.root} "
            f"(it holds {workspace.lock_path}); stop it first or use another workspace"
        )
    pid = lock_pid(workspace)
    older = older_server(workspace)
    if older is not None:
        return (
            f"an indexer serve (pid {older}) holds the workspace {workspace.root} (it holds "
            f"{workspace.lock_path}) without a serving lock: one started before an upgrade"
            f" (or whose {workspace.serving_lock_path.name} file was deleted); stop it, then"
            " start it again"
        )
    who = f"an indexer command (pid {pid})" if pid.isdigit() else "an indexer command"
    return (
        f"{who} is working on the workspace {workspace.root} (it holds "
        f"{workspace.lock_path}); try again when it has finished"
    )


LOCK_PATIENCE_SECONDS = 0.5


def _take(fd: int) -> None:
    """The exclusive lock of ``fd``, tried for a moment: a client looking whether a server
    runs holds the serving lock shared for a few microseconds (``shared.workspace.
    lock_held``), and a server starting just then was refused as if another one served;
    a command looking twice (``lock_unless_served``) waits out a server's start."""
    deadline = time.monotonic() + LOCK_PATIENCE_SECONDS
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.005)
