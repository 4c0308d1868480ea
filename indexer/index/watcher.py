"""Watching the languages folder for edits made outside the tools (editors, git, sync).

A watchdog observer (inotify on Linux) reports file and folder events; they are mapped
to (lang, vault-relative path), filtered (notes and text files only; dot-files but folder
summaries (``.overview.md``), dot-folders and our own ``.<name>.tmp.<random>`` temp
files are ignored) and debounced: a batch is applied once events stop for
``debounce`` seconds, or at the latest ``max_delay`` seconds after its first event. An
editor's temp-file-and-rename save arrives as a move whose destination is the note; a
folder that appears, moves or vanishes (``git checkout``, ``mv``) is re-synced as a
whole.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable

from watchdog.events import FileSystemEvent, FileSystemEventHandler

from indexer.index.observer import OnLost
from indexer.index.reconcile import is_indexed_folder, is_note_path
from indexer.index.watch_supervisor import Supervisor
from indexer.vault import fsops
from indexer.vault.names import tool_path
from shared.langs import is_lang
from shared.workspace import Workspace

log = logging.getLogger("indexer.index.watcher")

Changes = set[tuple[str, str]]
Apply = Callable[[Changes, Changes], None]
_FILE_EVENTS = {"created", "modified", "deleted", "moved", "closed"}
_FOLDER_EVENTS = {"created", "deleted", "moved"}
CHECK_SECONDS = 1.0  # how often the watcher checks that its observer is alive (busy or not)
BULK_FILES = 50  # a batch this large is a checkout or a copy: the index is catching up
TOOLS_SECONDS = 5.0  # how long the paths of a tool's write are taken as the tools' own
STOP_SECONDS = 10.0  # how long a stop waits for the batch being applied to end
# A batch that took long (a big note edited outside: 1 s for 4 MiB, under the index's
# write lock) is followed by a rest of this many times its cost, so that a program saving
# it every half second holds a quarter of a core, not all of it and every tool's write;
# searches say they are partial while it rests with changes held back.
COST_SHARE = 3
SLOW_BATCH_SECONDS = 0.1  # quicker batches rest not at all (edits searchable at once)
MAX_REST_SECONDS = 2.0
# How long grep waits for the watcher to read what happened before it (then it stats
# every file instead); the wait is a file created and read back, well under 1 ms idle.
BARRIER_SECONDS = 0.5


class VaultWatcher:
    """Feeds ``apply(files, folders)`` with debounced batches of changed paths."""

    def __init__(
        self,
        workspace: Workspace,
        apply: Apply,
        *,
        debounce: float = 0.05,
        max_delay: float = 0.25,
        on_lost: OnLost | None = None,
    ) -> None:
        self.root = workspace.languages_dir
        self._barrier_dir = workspace.state_dir / "watch"
        self._prefix = str(self.root).rstrip("/") + "/"
        self._apply = apply
        self._on_lost: OnLost = on_lost or (lambda reason: None)
        self._debounce = debounce
        self._max_delay = max_delay
        self._files: Changes = set()
        self._folders: Changes = set()
        self._applying: tuple[Changes, Changes] = (set(), set())  # taken, not applied yet
        # Files a tool changed and their folders (the tools index their own writes at
        # once): (lang, rel) -> until when, by the monotonic clock.
        self._tools: dict[tuple[str, str], float] = {}
        self._bulk = False  # a folder or many files heard, until all heard is applied
        self._first = 0.0
        self._last = 0.0
        self._rest_until = 0.0  # after a slow batch (``COST_SHARE``)
        self._cond = threading.Condition()
        self._stopped = False
        self._observer: Supervisor | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Watch (see ``observer.Supervisor``: a watcher that cannot start, or dies, is
        restarted; meanwhile ``on_lost`` has the index reconcile)."""
        fsops.make_folders(self.root)
        self._observer = Supervisor(
            self.root, _Handler(self), self._on_lost, self.path_changed, self._barrier_dir
        )
        self._observer.start()
        self._thread = threading.Thread(target=self._run, name="index-watcher", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = STOP_SECONDS) -> bool:
        """Stop watching; whether the batch being applied (if any) ended within
        ``timeout`` (one of 100,000 outside changes may not: its thread goes on, and
        what it applies after the index closes never reaches history)."""
        with self._cond:
            self._stopped = True
            self._cond.notify_all()
        if self._observer is not None:
            self._observer.stop()
        if self._thread is not None:
            self._thread.join(timeout=timeout)
            return not self._thread.is_alive()
        return True

    # -- called from the observer thread -------------------------------------------------

    def event(self, event: FileSystemEvent) -> None:
        kind = event.event_type
        paths = [event.src_path]
        if kind == "moved":
            paths.append(event.dest_path)
        found = []
        for raw in paths:
            raw_path = raw if isinstance(raw, str) else raw.decode()
            where = self._sorted(kind, raw_path, event.is_directory)
            if where is not None:
                found.append(where)
        self._add(found)

    def path_changed(self, kind: str, raw: str, is_folder: bool) -> None:
        """An event as inotify's reader thread reads it: ``kind`` as watchdog names it."""
        where = self._sorted(kind, raw, is_folder)
        if where is not None:
            self._add([where])

    def caught_up(self, timeout: float = BARRIER_SECONDS) -> bool:
        """Whether every change made before this call is known: applied to the index,
        or in ``pending`` (False when that cannot be known; see ``Supervisor``)."""
        observer = self._observer
        return observer is not None and observer.caught_up(timeout)

    def pending(self, lang: str) -> set[str] | None:
        """The files of ``lang`` changed on disk and not applied to the index yet; None
        while a folder of it is (its files are not known one by one)."""
        with self._cond:
            files = self._files | self._applying[0]
            folders = self._folders | self._applying[1]
        if any(folder_lang == lang for folder_lang, _ in folders):
            return None
        return {rel for file_lang, rel in files if file_lang == lang}

    def tools_changed(self, lang: str, rel: str) -> None:
        """A tool changed ``rel`` (and made its folders, maybe, and the vault at its first
        write: ``(lang, "")``): the index has it already, so their events are not a
        change the index is catching up with."""
        self.tools_changed_all([(lang, rel)])

    def tools_changed_all(self, keys: list[tuple[str, str]]) -> None:
        """``tools_changed`` for each (lang, rel) of one call (a folder moved): the
        expired entries are dropped once, not once per file."""
        now = time.monotonic()
        with self._cond:
            if len(self._tools) > 4 * BULK_FILES:
                self._tools = {key: until for key, until in self._tools.items() if until > now}
            until = now + TOOLS_SECONDS
            for lang, rel in keys:
                folders = rel.split("/")[:-1]
                self._tools[(lang, rel)] = until
                for end in range(len(folders) + 1):
                    self._tools[(lang, "/".join(folders[:end]))] = until

    def catching_up(self) -> bool:
        """Whether the watcher heard a folder change (created, moved in, deleted) or many
        files that no tool changed, and has not applied all it heard since, or holds
        outside changes back behind a batch being applied or the rest after a slow one:
        searches may miss part of it until then (``partial``). A few files (a save)
        applied at once never count."""
        with self._cond:
            now = time.monotonic()

            def outside(changes: Changes, *, folders: bool = False) -> int:
                return sum(1 for key in changes if not self._tools_own(key, now, folders))

            busy = now < self._rest_until or any(self._applying)
            if busy and (outside(self._files) or outside(self._folders, folders=True)):
                return True  # heard, and held back behind a batch (or a rest)
            if not self._bulk:
                self._bulk = bool(outside(self._folders | self._applying[1], folders=True)) or (
                    outside(self._files | self._applying[0]) >= BULK_FILES
                )
            return self._bulk

    def _tools_own(self, key: tuple[str, str], now: float, folder: bool) -> bool:
        """Whether a change heard at ``key`` is a tool's own: a path a tool changed in
        the last seconds; for a folder, one that is still there (a tool's write makes
        its folders; a folder deleted or moved away by another program right after a
        tool wrote in it is that program's change, which the index is catching up with)."""
        if self._tools.get(key, 0.0) < now:
            return False
        lang, rel = key
        return not folder or os.path.isdir(f"{self._prefix}{lang}/vault/{rel}")

    def _sorted(self, kind: str, raw: str, is_folder: bool) -> tuple[bool, str, str] | None:
        """(is a folder, lang, rel) of a path the index must look at again, or None."""
        where = self._locate(raw)
        if where is None:
            return None
        lang, rel = where
        if is_folder or rel == "":
            if kind in _FOLDER_EVENTS and is_indexed_folder(rel):
                return True, lang, rel
        elif kind in _FILE_EVENTS and is_note_path(rel):
            return False, lang, rel
        return None

    def _add(self, found: list[tuple[bool, str, str]]) -> None:
        if not found:
            return
        with self._cond:
            now = time.monotonic()
            if not self._files and not self._folders:
                self._first = now
            self._last = now
            for is_folder, lang, rel in found:
                (self._folders if is_folder else self._files).add((lang, rel))
            self._cond.notify_all()

    def _locate(self, raw: str) -> tuple[str, str] | None:
        """(lang, vault-relative path) of an event path; "" is a vault (or lang) root."""
        # String work, not pathlib: this runs for every event of every file written.
        if not raw.startswith(self._prefix):
            return None
        parts = tuple(p for p in raw[len(self._prefix) :].split("/") if p)
        if not parts or not is_lang(parts[0]):
            return None
        if len(parts) == 1 or (len(parts) == 2 and parts[1] == "vault"):
            return parts[0], ""
        if parts[1] != "vault":
            return None
        rel = tool_path(parts[2:])  # None: a name no tool could use (the walk warns)
        return None if rel is None else (parts[0], rel)

    # -- the debounce thread ---------------------------------------------------------------

    def polling(self) -> bool:
        """Whether changes on disk are found only by the periodic reconcile (no observer
        running): a save may then be missing from search for seconds."""
        observer = self._observer
        return observer is not None and observer.state()["state"] == "polling"

    def state(self) -> dict:
        """The observer's state: running or polling, restarts (``Supervisor.state``)."""
        observer = self._observer
        return observer.state() if observer is not None else {"state": "stopped", "restarts": 0}

    def _run(self) -> None:
        checked = time.monotonic()
        while True:
            if time.monotonic() - checked >= CHECK_SECONDS and self._observer is not None:
                # Also while busy: a languages folder swapped for a copy (a restore) is
                # noticed while the old one still changes (inotify follows that one).
                self._observer.check()  # a dead (or moved) observer is restarted
                checked = time.monotonic()
            with self._cond:
                while not self._stopped and not (self._files or self._folders):
                    if not self._cond.wait(CHECK_SECONDS):
                        break  # idle: time for the check above
                if self._stopped:
                    return
                if not (self._files or self._folders):
                    continue
                while not self._stopped:
                    now = time.monotonic()
                    due = min(self._last + self._debounce, self._first + self._max_delay)
                    due = max(due, self._rest_until)
                    if now >= due:
                        break
                    self._cond.wait(due - now)
                files, folders = self._files, self._folders
                self._files, self._folders = set(), set()
                self._applying = (files, folders)
            started = time.monotonic()
            try:
                self._apply(files, folders)
            except Exception:
                log.exception("could not apply %d file change(s) to the index", len(files))
                self._on_lost("the index could not take changes the watcher saw")
            finally:
                ended = time.monotonic()
                took = ended - started
                rest = min(took * COST_SHARE, MAX_REST_SECONDS) if took >= SLOW_BATCH_SECONDS else 0
                with self._cond:
                    self._applying = (set(), set())
                    self._rest_until = ended + rest
                    if not self._files and not self._folders:
                        self._bulk = False


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: VaultWatcher) -> None:
        self._watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        self._watcher.event(event)
