"""The watchdog observer the index runs: bounded, and kept alive.

watchdog's inotify observer walks a folder tree recursively (``os.walk``, recursive on
Python 3.11) when it adds watches and when a folder is created or moved in: a tree of a
thousand nested folders raises ``RecursionError`` in the thread that hands inotify's
events to the watch groups (watchdog stops then: no edit is seen again), or in
``start()`` (the server fails to start). When the kernel's event queue overflows, it
rebuilds its watches and queues an ``EventsLostEvent``, which the index's event filter
leaves out. Here:

- watches are added by an iterative walk, only where notes can be: ``<lang>/vault/``
  and up to ``MAX_DEPTH`` folders below (deeper folders and dot-folders are skipped with
  a warning), into watchdog's tree of watched folders; a failure while handling an
  event is caught;
- every way events can be lost (queue overflow, the watch limit, an error while
  handling an event) calls ``on_lost(reason)``: the index then reconciles with disk;
- ``watch_supervisor.Supervisor`` restarts an observer that died, and falls back to
  polling (the index reconciles periodically) while none can start.

"The reader thread" below: watchdog's ``InotifyFD`` reads on one thread and hands what
it read to the watch groups (and the barrier) from another, in the kernel's order; the
watch groups' code runs on the second. If that one fails, watchdog stops the reader too.
"""

from __future__ import annotations

import errno
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
)
from watchdog.observers.api import BaseObserver

from indexer.vault.names import MAX_DEPTH, skipped
from indexer.vault.tempfiles import TEMP_NAME_RE
from shared.langs import is_lang

log = logging.getLogger("indexer.index.watcher")

OnLost = Callable[[str], None]
# (kind as watchdog names it: "created", "modified", "closed", "deleted", "moved"; the
# path; whether it is a folder)
OnPath = Callable[[str, str, bool], None]
# Folder levels below the languages folder that may hold notes: <lang>/vault/... .
WATCH_DEPTH = 2 + MAX_DEPTH - 1

try:
    from watchdog.observers.inotify import InotifyEmitter, InotifyWatchGroup
    from watchdog.observers.inotify_c import InotifyConstants, InotifyEvent, InotifyFD, Mask

    from indexer.index.barrier import Barrier
except (ImportError, OSError):  # not Linux: watchdog's own observer, unbounded
    InotifyEmitter = None  # type: ignore[assignment,misc]


def _folder(entry: os.DirEntry[bytes], linked_ok: bool) -> bool:
    """A folder to watch; a link to one only where the sandbox follows it (``linked_ok``:
    a lang folder or its vault folder, which an operator may link elsewhere)."""
    if entry.is_dir(follow_symlinks=False):
        return True
    return linked_ok and entry.is_symlink() and entry.is_dir()


def _wanted(parts: list[bytes]) -> bool:
    """Whether a folder (its parts below the languages folder) may hold notes."""
    depth = len(parts)
    if depth == 0:
        return True
    if depth == 1:
        return is_lang(os.fsdecode(parts[0]))
    if depth == 2:
        return parts[1] == b"vault"
    return not parts[-1].startswith(b".")


def _own_temp_file(event: InotifyEvent) -> bool:
    """An event of a write's temp file other than its rename: nothing the index hears
    of (the watcher ignores dot-files), and 3 of the 5 events every write makes."""
    return not (event.is_moved_from or event.is_moved_to or event.is_directory) and bool(
        TEMP_NAME_RE.fullmatch(event.name)
    )


def _plain_file_event(event: InotifyEvent) -> bool:
    """A file created, written, closed after writing, changed in its attributes, deleted,
    or moved (each half of a move names its path, as each half of a write's exchange
    does): all the watcher needs is its path (no watches to add or move, and so no
    pairing: watchdog pairs the halves of a folder's move, which keep going its way)."""
    return not event.is_directory and (
        event.is_create
        or event.is_modify
        or event.is_close_write
        or event.is_attrib
        or event.is_delete
        or event.is_moved_from
        or event.is_moved_to
    )


def _event_kind(event: InotifyEvent) -> str | None:
    """The name watchdog gives such an event (``FileSystemEvent.event_type``); None for
    what the index never needs. A file's attributes changed count as a change: a note
    the indexer could not read (``chmod 000``) is seen once it is readable again."""
    if event.is_create:
        return "created"
    if event.is_delete or event.is_delete_self:
        return "deleted"
    if event.is_moved_from or event.is_moved_to or event.is_move_self:
        return "moved"
    if event.is_close_write:
        return "closed"
    if event.is_attrib and not event.is_directory:
        return "modified"
    return "modified" if event.is_modify else None


if InotifyEmitter is not None:

    @dataclass
    class _BoundedGroup(InotifyWatchGroup):
        """watchdog's watch group with iterative, bounded walks and no silent death."""

        on_lost: OnLost = field(default=lambda reason: None)
        on_path: OnPath | None = None
        complete: bool = True  # False once a folder could not be watched (the limit)

        def _parts(self, path: bytes) -> list[bytes] | None:
            if path == self.path:
                return []
            prefix = self.path.rstrip(b"/") + b"/"
            return path[len(prefix) :].split(b"/") if path.startswith(prefix) else None

        def _watched(self, path: bytes) -> bool:
            """Whether ``path`` has a watch of this group (a folder of watchdog's tree
            with a watch descriptor; the tree also holds folders only as parents)."""
            node = self._find_node_by_path(path)
            return node is not None and node.wd >= 0

        def _add_all_callbacks(self, path: bytes) -> None:
            """Watch ``path`` and the folders below it that may hold notes (those
            already watched are left as they are: see ``_add_callback``)."""
            parts = self._parts(path)
            if parts is None or not _wanted(parts):
                return
            self._add_callback(path)
            if not self.is_recursive:
                return
            stack = [(path, parts)]
            while stack:
                folder, above = stack.pop()
                try:
                    with os.scandir(folder) as entries:
                        names = [e.name for e in entries if _folder(e, len(above) < 2)]
                except OSError:
                    continue
                for name in names:
                    child, child_parts = os.path.join(folder, name), [*above, name]
                    if not _wanted(child_parts):
                        continue
                    if len(child_parts) > WATCH_DEPTH:
                        rel = os.fsdecode(b"/".join(child_parts[2:]))
                        skipped(rel + "/", f"not watched: deeper than {MAX_DEPTH - 1} folders")
                        continue
                    self._add_callback(child)
                    stack.append((child, child_parts))

        def _move_watches(self, move_src_path: bytes, move_dst_path: bytes) -> bool:
            """watchdog moves the watches of a folder moved within the tree and adds none:
            a folder moved up brings folders that were too deep to watch into range.

            A folder already watched at its new place (see ``_remove_node_and_watches``)
            keeps those nodes, and its old ones go: watchdog removed the new place's, as
            a folder moved over it, and with them the moved folder's one watch."""
            old = self._find_node_by_path(move_src_path)
            new = self._find_node_by_path(move_dst_path)
            if old is not None and new is not None and old is not new and old is not self._root:
                self._remove_node_and_watches(old, move_src_path)
                return True
            moved = bool(super()._move_watches(move_src_path, move_dst_path))
            src, dst = self._parts(move_src_path), self._parts(move_dst_path)
            if moved and self.is_recursive and src and dst and len(dst) < len(src):
                self._add_all_callbacks(move_dst_path)
            return moved

        def _remove_node_and_watches(self, node: Any, path: bytes) -> list[bytes]:
            """watchdog's, except that a kernel watch another node holds stays: a folder
            moved into new folders (``move`` of ``Q/a`` to ``R/x/a``, making ``R/x``) is
            watched at its new place by the walk of the new ``R/`` before its move is read
            (the kernel gives a folder one watch), and the move, unpaired or not, then
            removed the old place's watches: the moved folder went unwatched."""
            if node is self._root:
                return []
            parent = node.parent
            if parent is not None and parent.children.get(node.name) is node:
                parent.children.pop(node.name, None)
            below: list[bytes] = []
            stale = []
            stack: list[tuple[Any, bytes]] = [(node, path)]
            while stack:
                current, current_path = stack.pop()
                if current is not node:
                    below.append(current_path)
                wd = current.wd
                if wd >= 0 and self._nodes_by_wd.get(wd) is current:
                    stale.append(wd)
                    del self._nodes_by_wd[wd]
                stack.extend(
                    (c, os.path.join(current_path, n)) for n, c in current.children.items()
                )
                current.children.clear()
                current.parent = None
            if stale:
                self._remove_callbacks(stale)
                self._move_event_grouper.purge_events_for_wds(set(stale))
            return below

        def _add_callback(self, path: bytes) -> None:
            if self._watched(path):  # (watching it again would only warn)
                return
            mask = self.event_mask
            if os.path.islink(path):  # an operator's linked lang or vault folder: its target
                mask = Mask(mask & ~InotifyConstants.IN_DONT_FOLLOW)
            try:
                wd = self._inotify_fd.add_callback(path, mask, self._callback, self._id)
            except OSError as err:
                if path == self.path:
                    raise
                if err.errno == errno.ENOSPC:
                    self.complete = False
                    self.on_lost(
                        "the inotify watch limit is reached (fs.inotify.max_user_watches):"
                        " some folders are not watched"
                    )
                return
            if wd < 0:  # watchdog passes a folder it may not read over, as a watch of -1
                self._inotify_fd.remove_callbacks([(wd, self._id)])
                if path == self.path:
                    raise PermissionError(errno.EACCES, "the languages folder may not be read")
                return  # (a chmod of it later is heard, and it is watched then)
            if self._insert_node(path, wd) is None:  # (a path outside the root)
                self._inotify_fd.remove_callbacks([(wd, self._id)])

        def _recursive_simulate(self, src_path: bytes) -> list[InotifyEvent]:
            """Created events for what a new folder already holds, from the watched
            folders below it in watchdog's tree (no walk of the disk below, which
            ``os.walk`` does recursively)."""
            top = self._find_node_by_path(src_path)
            stack = [(top, src_path)] if top is not None else []
            events = []
            while stack:
                node, root = stack.pop()
                stack.extend(
                    (child, os.path.join(root, name)) for name, child in node.children.items()
                )
                if node.wd < 0:
                    continue
                try:
                    with os.scandir(root) as entries:
                        found = [(e.name, e.is_dir(follow_symlinks=False)) for e in entries]
                except OSError:
                    continue
                for name, is_dir in found:
                    flags = int(InotifyConstants.IN_CREATE)
                    if is_dir:
                        flags |= InotifyConstants.IN_ISDIR
                    events.append(InotifyEvent(node.wd, Mask(flags), 0, name))
            return events

        def on_event(self, event: InotifyEvent) -> None:
            if _own_temp_file(event):
                return
            try:
                with self._lock:
                    path = self._build_event_source_path(event) if self.is_active else None
                if path is not None:
                    self._tell(event, path)
                    if self._relinked(event, path):
                        self._watch_again(path)
                    elif event.is_attrib and event.is_directory:
                        self._watch_if_readable(path)
                if self.on_path is not None and _plain_file_event(event):
                    return  # watchdog's path would only tell the same, later
                super().on_event(event)
            except Exception as err:  # the reader thread must not die
                log.warning("the file watcher failed on an event (%s); reconciling", err)
                self.on_lost(f"the file watcher failed on an event ({type(err).__name__})")

        def _relinked(self, event: InotifyEvent, path: bytes) -> bool:
            """Whether ``path`` is a lang or vault folder's link that was made, removed or
            moved (not a folder to watchdog, which adds no watch for it)."""
            if event.is_directory or not (
                event.is_create or event.is_delete or event.is_moved_from or event.is_moved_to
            ):
                return False
            parts = self._parts(path)
            return parts is not None and 1 <= len(parts) <= 2 and _wanted(parts)

        def _watch_if_readable(self, path: bytes) -> None:
            """A folder whose permissions changed (``chmod``; rare): one that could not be
            read may be now. Watched where it was not, and looked at again as a folder
            that came (its notes were passed over while it could not be read)."""
            if not self.is_recursive:
                return
            with self._lock:
                self._add_all_callbacks(path)
                watched = self._watched(path)
            if watched and self.on_path is not None:
                self.on_path("created", os.fsdecode(path), True)

        def _watch_again(self, path: bytes) -> None:
            """Drop the watches at and below ``path``, and watch what it leads to now."""
            with self._lock:
                node = self._find_node_by_path(path)
                if node is not None and node is not self._root:
                    self._remove_node_and_watches(node, path)
                if os.path.isdir(path):
                    self._add_all_callbacks(path)

        def _tell(self, event: InotifyEvent, path: bytes) -> None:
            """Straight to the watcher from the reader thread, for every event: so what
            the reader has read is known to the watcher at once (``barrier``), and plain
            file events skip watchdog's path (an event object, a delayed queue, two more
            threads), which cost more than the write itself. Moves and folders still go
            that way too (pairing, new watches)."""
            kind = _event_kind(event)
            if kind is not None and self.on_path is not None:
                self.on_path(kind, os.fsdecode(path), event.is_directory)

        def on_events_lost(self) -> None:
            """After every group rebuilt its watches (``on_queue_overflow``): the
            index's reconcile then sees the folders as they are watched."""
            super().on_events_lost()
            self.on_lost("the kernel's file event queue overflowed (events were lost)")

    class _BoundedEmitter(InotifyEmitter):  # type: ignore[misc]
        def __init__(
            self, *args: Any, on_lost: OnLost, on_path: OnPath | None, **kwargs: Any
        ) -> None:
            super().__init__(*args, **kwargs)
            self._on_lost = on_lost
            self._on_path = on_path

        def on_thread_start(self) -> None:
            self._inotify = _BoundedGroup(
                self._inotify_fd,
                os.fsencode(self.watch.path),
                is_recursive=self.watch.is_recursive,
                event_mask=self.get_event_mask_from_filter(),
                follow_symlink=self.watch.follow_symlink,
                on_lost=self._on_lost,
                on_path=self._on_path,
            )

        def queue_events(self, timeout: float, *, full_events: bool = False) -> None:
            try:
                super().queue_events(timeout, full_events=full_events)
            except Exception as err:  # watchdog's own sub-event walk of a deep tree
                log.warning("the file watcher failed to list a new folder (%s)", err)
                self._on_lost(f"the file watcher failed on a new folder ({type(err).__name__})")

    def _whole(group: object) -> bool:
        """Whether a watch group still watches its root and every folder below."""
        return (
            isinstance(group, _BoundedGroup)
            and group.complete
            and group.is_active
            and group._watched(group.path)
        )

    class _BoundedObserver(BaseObserver):
        def __init__(
            self, on_lost: OnLost, on_path: OnPath | None, barrier_dir: Path | None
        ) -> None:
            self._inotify_fd = InotifyFD()
            self._inotify_fd.start()
            super().__init__(
                _BoundedEmitter, inotify_fd=self._inotify_fd, on_lost=on_lost, on_path=on_path
            )
            self._barrier: Barrier | None = None
            if barrier_dir is not None:
                try:
                    self._barrier = Barrier(self._inotify_fd, barrier_dir)
                except OSError as err:
                    log.warning("no watcher barrier (%s): grep checks every file", err)

        def on_thread_stop(self) -> None:
            super().on_thread_stop()
            self._inotify_fd.stop()
            self._inotify_fd.join()

        def healthy(self) -> bool:
            threads = [self, self._inotify_fd, *self.emitters]
            return all(t.is_alive() for t in threads)

        def unwatched(self) -> bool:
            """Whether a folder could not be watched (the kernel's watch limit)."""
            groups = [getattr(e, "_inotify", None) for e in self.emitters]
            return any(isinstance(g, _BoundedGroup) and not g.complete for g in groups)

        def caught_up(self, timeout: float) -> bool:
            """Whether every event of a change made before this call has been read and
            told (``on_path``), and every folder is watched."""
            if self._barrier is None or not self.healthy():
                return False
            groups = [getattr(e, "_inotify", None) for e in self.emitters]
            if not groups or not all(_whole(g) for g in groups):
                return False
            return self._barrier.wait(timeout)


# What the index needs to hear. Leaving out "opened" and "closed without writing" keeps
# every read of a note (ours included: a write reads the file twice) from waking the
# watcher's threads: that work took more of the interpreter than the writes themselves.
WATCHED_EVENTS: list[type[FileSystemEvent]] = [
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileClosedEvent,
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
]


def new_observer(on_lost: OnLost, on_path: OnPath | None, barrier_dir: Path | None) -> BaseObserver:
    if InotifyEmitter is None:
        from watchdog.observers import Observer

        return Observer()
    return _BoundedObserver(on_lost, on_path, barrier_dir)
