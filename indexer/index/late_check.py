"""The index's integrity check after an unclean stop, run once serving.

``PRAGMA quick_check`` reads the whole file: 19 s of a 25 s start on a 100,000-note
workspace (an 860 MB index) after ``kill -9``, all before the URL file. The index is
a cache of the vaults, so the check runs after the URL file, on a read-only connection
of its own (searches meanwhile say ``partial``: the start-up reconcile runs too). What
it protects against is unchanged: a damaged file is rebuilt from the vaults. A damaged
one found while serving cannot be swapped under the connections in use, so the server
leaves the mark ``W/.indexer/check-index``, stops, and ``indexer serve`` starts itself
again (``FoundDamaged``; one that cannot exits with an error): that start checks before
serving, which recreates the file, and the mark goes once a check passed. History's own
check stays before serving (a damaged history refuses the start): it reads a far smaller
file.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path

from indexer.index import schema
from indexer.sqlite_errors import called_damaged, disk_trouble
from indexer.sqlite_lib import sqlite3
from indexer.vault import fsops
from shared.errors import StartupError
from shared.workspace import Workspace

log = logging.getLogger("indexer.index")

MARK_NAME = "check-index"
PROGRESS_STEPS = 20_000  # SQLite steps between two looks at ``stop``


class FoundDamaged(StartupError):
    """The server found the index damaged once serving, and stopped: ``indexer serve``
    starts itself again (the same process id), and that start rebuilds the index
    before it serves. Not ``marked`` (the mark could not be written: a full disk), a
    start would check once serving again, find the same damage and start again forever:
    it exits instead, saying what to remove."""

    def __init__(self, damage: str, index: Path, *, marked: bool) -> None:
        then = (
            "start again to rebuild it from the vaults"
            if marked
            else f"the mark that has the next start rebuild it could not be written: remove"
            f" {index} (a cache of the vaults) and start again"
        )
        super().__init__(f"{damage}: {then}")
        self.damage = damage
        self.marked = marked
        self.stop_asked = False  # (a stop signal came meanwhile: stop, the mark rebuilds)


def mark_path(workspace: Workspace) -> Path:
    return workspace.state_dir / MARK_NAME


def check_first(workspace: Workspace, *, clean: bool, up_to_mb: int) -> bool:
    """Whether this start checks the index before serving (and so recreates a damaged
    file before any answer): an earlier server found it damaged, or the last stop was
    unclean and the file is small enough to read whole at once (``up_to_mb``: about
    0.5 s at the default 32; the 10,000-note bench's index is 13 MB); a larger one after
    an unclean stop is checked once serving (``LateCheck``)."""
    if mark_path(workspace).exists():
        return True
    if clean:
        return False
    try:
        return workspace.index_path.stat().st_size <= up_to_mb << 20
    except OSError:  # (none yet: nothing to read)
        return True


def leave_mark(workspace: Workspace) -> None:
    """Have the next start check (and rebuild) the index before it serves; durable (the
    folder is fsync'd: the stop that follows may be a crash)."""
    path = mark_path(workspace)
    path.write_text("the index failed its integrity check\n", encoding="utf-8")
    fd = os.open(workspace.state_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    with fsops.opened(fd):
        os.fsync(fd)


def drop_mark(workspace: Workspace) -> None:
    """The index passed a check before serving (or was recreated)."""
    mark_path(workspace).unlink(missing_ok=True)


def damage(path: Path, stop: Callable[[], bool]) -> str | None:
    """Why the index at ``path`` fails ``PRAGMA quick_check`` (None: whole, gone, or
    ``stop`` said so first: the server is stopping, and the next start checks again)."""
    try:
        conn = schema.connect(path, readonly=True)
    except sqlite3.Error as err:
        return None if disk_trouble(path, err) is not None else f"cannot be opened ({err})"
    try:
        conn.set_progress_handler(lambda: 1 if stop() else 0, PROGRESS_STEPS)
        rows = conn.execute("PRAGMA quick_check").fetchall()
    except sqlite3.OperationalError as err:
        if stop() or disk_trouble(path, err) is not None:
            return None  # (interrupted, or a full disk: no damage found)
        return f"is damaged ({err})"
    except sqlite3.DatabaseError as err:
        return f"is damaged ({err})"
    finally:
        conn.close()
    if rows == [("ok",)]:
        return None
    return f"failed its integrity check ({' '.join(str(rows[0][0]).split())})"  # (one line)


class LateCheck:
    """The check in a daemon thread; ``busy`` is set while it runs (the index says
    ``partial`` meanwhile: what it answers may come from a damaged file); ``found`` says
    why the file is damaged, after ``on_damage`` was called (from the thread).

    ``suspect`` checks again while serving when the index's catch-up failed on a file
    SQLite called damaged: only a start after a crash checked, and a damage met later
    was retried every 15 s while search answered 500, a stop then leaving the clean mark,
    so that no start ever rebuilt it."""

    def __init__(
        self, workspace: Workspace, busy: threading.Event, on_damage: Callable[[], None]
    ) -> None:
        self.workspace = workspace
        self.found: str | None = None
        self.marked = False  # (``found`` and its mark written)
        self._busy = busy
        self._on_damage = on_damage
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="index-check", daemon=True)

    def start(self) -> None:
        self._busy.set()
        self._thread.start()

    def suspect(self, err: Exception) -> None:
        """The index failed on ``err`` while serving: a file SQLite called damaged is
        checked whole (in the thread, one check at a time), as after a crash."""
        if not called_damaged(err):
            return
        with self._lock:
            if self.found is not None or self._thread.is_alive() or self._stopping.is_set():
                return
            log.warning("index: SQLite called the file damaged (%s): checking it whole", err)
            self._thread = threading.Thread(
                target=self._run, args=(False,), name="index-check", daemon=True
            )
            self._thread.start()

    def stop(self, timeout: float = 10) -> None:
        """Cut the check short (its connection is interrupted) and wait for it."""
        with self._lock:
            self._stopping.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _run(self, late: bool = True) -> None:
        path = self.workspace.index_path
        reason = damage(path, self._stopping.is_set)
        if reason is None:
            if not self._stopping.is_set():
                said = "after an unclean stop" if late else "SQLite asked for"
                log.info("index: integrity check %s passed", said)
                self._busy.clear()
            return
        self.found = f"the index {path} {reason}"
        try:
            leave_mark(self.workspace)
            self.marked = True
        except OSError as err:
            log.error("could not write %s: %s", mark_path(self.workspace), err)
        self._on_damage()
