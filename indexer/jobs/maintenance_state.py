"""``W/.indexer/maintenance-state.json``: what each maintenance task last did, and locks.

The file maps ``lang -> task -> TaskState``. It is the troubleshooting view of seed 002:
``last_action`` (``none|replace|skip|error``), ``last_run`` (when a run last finished),
``last_success`` and ``last_digest`` (when and on which inputs a run last succeeded:
the due rules compare against these), ``last_error`` (why the last failed run failed,
kept until a run succeeds), ``reason`` (the model's reason, or why the task was
skipped) and ``last_entry`` (without a model: the newest event entry a run took, so a
line a person deleted is not added again). Both the daemon's scheduler and ``indexer
maintain`` update it, so every update is a read-modify-write under an exclusive
``flock`` and lands by an atomic replace (temp file, fsync, rename). A run holds a
per-task ``flock`` for its whole length: never two runs of one task at once, in one
process or across two.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, fields, replace
from datetime import datetime, timedelta
from pathlib import Path

from indexer.vault import atomic, fsops
from indexer.vault.tempfiles import remove_temp_files_of
from shared.retry_after import MAX_RETRY_AFTER
from shared.timestamps import format_timestamp

log = logging.getLogger("indexer.jobs")
ACTIONS = ("none", "replace", "skip", "error")
LOCKS_DIR = "maintenance-locks"
AHEAD = timedelta(minutes=5)  # a stored moment later than now by more: the clock went back


@dataclass(frozen=True)
class TaskState:
    """One task's record for one vault (None: never happened)."""

    last_action: str | None = None
    last_run: str | None = None
    last_success: str | None = None
    last_digest: str | None = None
    last_error: str | None = None
    reason: str | None = None
    last_entry: str | None = None  # without a model: the newest event entry taken
    # the moment the model endpoint asked not to be asked before (its Retry-After)
    retry_at: str | None = None

    @classmethod
    def from_json(cls, data: object) -> TaskState:
        if not isinstance(data, dict):
            return cls()
        return cls(**{k: v for k, v in data.items() if k in _FIELDS and isinstance(v, str)})


_FIELDS = frozenset(f.name for f in fields(TaskState))


States = dict[str, dict[str, TaskState]]


def _ahead(value: str | None, now: datetime) -> bool:
    """Whether a stored moment is later than ``now`` (by more than a clock's jitter)."""
    moment = parse_time(value)
    return moment is not None and moment > now + AHEAD


def parse_time(value: str | None) -> datetime | None:
    """A stored timestamp (ISO 8601), or None when absent or unreadable."""
    if not value:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None


class StateFile:
    """The state file of one workspace (``path``), with its lock files beside it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock_path = path.with_name(path.name + ".lock")
        # The parsed file and the (inode, size, mtime) it was parsed from: a due check of
        # every vault reads the state once per task, and the file rarely changes.
        self._cache: tuple[tuple[int, int, int], States] | None = None

    def load(self) -> States:
        """Every record (shared: do not change it); an absent or unreadable file reads
        as empty (logged)."""
        try:
            info = os.stat(self.path)
        except FileNotFoundError:
            return {}
        key = (info.st_ino, info.st_size, info.st_mtime_ns)
        cached = self._cache
        if cached is not None and cached[0] == key:
            return cached[1]
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as err:
            log.warning("maintenance state %s is unreadable (%s): starting afresh", self.path, err)
            return {}
        states: States = {}
        if isinstance(data, dict):
            states = {
                lang: {task: TaskState.from_json(state) for task, state in tasks.items()}
                for lang, tasks in data.items()
                if isinstance(tasks, dict)
            }
        self._cache = (key, states)
        return states

    def quiet_until(self, now: datetime) -> datetime | None:
        """The latest ``retry_at`` of any task still ahead: the model endpoint is asked
        nothing before it (a moment further than ``MAX_RETRY_AFTER`` ahead: a clock set
        back or an edit, not believed)."""
        latest = now + timedelta(seconds=MAX_RETRY_AFTER + 1)
        moments = [parse_time(t.retry_at) for ts in self.load().values() for t in ts.values()]
        return max((m for m in moments if m is not None and now < m <= latest), default=None)

    def get(self, lang: str, task: str) -> TaskState:
        return self.load().get(lang, {}).get(task, TaskState())

    def not_ahead(self, lang: str, task: str, now: datetime) -> TaskState:
        """One task's record, its ``last_success``/``last_run`` set back to ``now`` when
        they are later (saved, logged once): the clock stepped back, or the file was
        edited. Believed, a run of 2099 held the task for years (9999 overflowed the
        arithmetic); ignored, it ran again at once; set to now, the interval counts
        from the moment the step back was seen, by the new clock."""
        state = self.get(lang, task)
        if not _ahead(state.last_success, now) and not _ahead(state.last_run, now):
            return state
        moment = format_timestamp(now.replace(microsecond=0))

        def back(s: TaskState) -> TaskState:
            success = moment if _ahead(s.last_success, now) else s.last_success
            run = moment if _ahead(s.last_run, now) else s.last_run
            return replace(s, last_success=success, last_run=run)

        log.warning(
            "maintenance %s/%s: its last run (%s) is later than the clock (%s): the clock "
            "went back, or the state file was edited; counting its interval from now",
            lang, task, state.last_run or state.last_success, moment,
        )  # fmt: skip
        return self.update(lang, task, back)

    def update(self, lang: str, task: str, change: Callable[[TaskState], TaskState]) -> TaskState:
        """Apply ``change`` to one record under the lock; write only if it changed. A
        write the system refuses (a full disk) is a warning: the run's outcome stands and
        the task runs again when next due (it ended as "failed unexpectedly", a traceback
        from the scheduler, and a failed run's error record failed the same way)."""
        with self._locked(self._lock_path, blocking=True):
            states = {name: dict(tasks) for name, tasks in self.load().items()}
            old = states.get(lang, {}).get(task, TaskState())
            new = change(old)
            if new != old:
                states.setdefault(lang, {})[task] = new
                try:
                    self._write(states)
                except OSError as err:
                    log.warning(
                        "maintenance %s/%s: its state could not be saved in %s (%s); the"
                        " task runs again when next due",
                        lang, task, self.path, err.strerror or err,
                    )  # fmt: skip
            return new

    @contextlib.contextmanager
    def run_lock(self, lang: str, task: str) -> Iterator[bool]:
        """Hold the lock of one task's runs; yields False (held by nobody) when another
        run of it, in this process or another, already holds it."""
        folder = self.path.parent / LOCKS_DIR
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        with self._locked(folder / f"{lang}.{task}.lock", blocking=False) as acquired:
            yield acquired

    def remove_leftovers(self) -> int:
        """Delete the temp files crashed writes of the file left; how many. Under the
        lock: an ``indexer maintain`` may be writing one right now."""
        with self._locked(self._lock_path, blocking=True):
            return remove_temp_files_of(self.path)

    def _write(self, states: States) -> None:
        data = {
            lang: {task: asdict(state) for task, state in sorted(tasks.items())}
            for lang, tasks in sorted(states.items())
        }
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
        fd = os.open(self.path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        with fsops.opened(fd):
            atomic.replace_at(fd, self.path.name, text.encode("utf-8"), mode=0o600)

    @contextlib.contextmanager
    def _locked(self, path: Path, *, blocking: bool) -> Iterator[bool]:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
            except BlockingIOError:
                yield False
                return
            yield True
        finally:
            os.close(fd)  # closing releases the lock
