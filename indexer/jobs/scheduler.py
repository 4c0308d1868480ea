"""When maintenance runs inside the daemon: on an interval, and soon after event writes.

One coroutine on the jobs thread (``JobRunner``) checks every vault every
``check_minutes``; a change under ``events/`` (told by the index's change listeners,
whoever made it: a tool, an editor, the start-up reconcile) schedules a check of that
vault once writes have been quiet for ``debounce_seconds`` (and at the latest after five
times that, so a steady stream of events cannot postpone it forever). The due rules
decide whether a check becomes a run. A task already running is never started again:
runs are tracked here, and ``Maintenance.run_task`` also holds the task's lock file
(an ``indexer maintain`` from the shell cannot overlap either).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from indexer.jobs.runner import JobRunner

if TYPE_CHECKING:
    from indexer.jobs.maintenance import Maintenance

log = logging.getLogger("indexer.jobs")
MAX_DEBOUNCES = 5


class MaintenanceScheduler:
    """Runs due maintenance tasks on the jobs thread."""

    def __init__(
        self,
        maintenance: Callable[[], Maintenance],
        jobs: JobRunner,
        *,
        tasks: Sequence[str],
        check_seconds: float,
        debounce_seconds: float,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        """``maintenance``: builds it at its first call (its modules are imported then: a
        server whose ``tasks``, the enabled ones, are none never does)."""
        self.maintenance = maintenance
        self.tasks = list(tasks)
        self.jobs = jobs
        self.check_seconds = check_seconds
        self.debounce_seconds = debounce_seconds
        self._monotonic = monotonic
        self._started = False
        self._wake: asyncio.Event | None = None
        self._pending: dict[str, tuple[float, float]] = {}  # lang -> (first, due) poke times
        self._running: dict[tuple[str, str], asyncio.Task[object]] = {}
        self.checks = 0  # checks done (for tests and status)

    def start(self) -> bool:
        """Start checking, when any task is enabled; True if started."""
        if self._started or not self.tasks:
            return self._started
        self._started = True
        self.jobs.submit(self._loop())
        return True

    def on_change(self, lang: str, path: str, source: str) -> None:
        """Index change listener (any thread): an event note changed in ``lang``. Dot-files
        (a folder summary written into events/) are not maintenance's input, nor a note
        written again with the bytes it had ("rewritten": a checkout, a touch)."""
        if not self._started or not path.startswith("events/") or "/." in path:
            return
        if source == "rewritten":
            return
        with contextlib.suppress(RuntimeError):  # the loop is closed: shutting down
            self.jobs.loop.call_soon_threadsafe(self._poke, lang)

    def _poke(self, lang: str) -> None:
        now = self._monotonic()
        first = self._pending.get(lang, (now, now))[0]
        latest = first + MAX_DEBOUNCES * self.debounce_seconds
        self._pending[lang] = (first, min(now + self.debounce_seconds, latest))
        if self._wake is not None:
            self._wake.set()

    async def _loop(self) -> None:
        self._wake = asyncio.Event()
        next_full = self._monotonic() + min(self.debounce_seconds, self.check_seconds)
        while True:
            now = self._monotonic()
            waits = [next_full, *(due for _, due in self._pending.values())]
            delay = max(0.0, min(waits) - now)
            if delay > 0:
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), delay)
                continue
            if now >= next_full:
                next_full = now + self.check_seconds
                self._pending.clear()
                langs = await asyncio.to_thread(lambda: self.maintenance().langs())
            else:
                langs = [lang for lang, (_, due) in self._pending.items() if due <= now]
                for lang in langs:
                    del self._pending[lang]
            for lang in langs:
                self._check(lang)

    def _check(self, lang: str) -> None:
        """Start a run of each enabled task of ``lang`` that is not running already."""
        self.checks += 1
        for task in self.tasks:
            key = (lang, task)
            if key in self._running:
                continue
            run = asyncio.ensure_future(self._run(lang, task))
            self._running[key] = run
            run.add_done_callback(lambda _, key=key: self._running.pop(key, None))  # type: ignore[misc]

    async def _run(self, lang: str, task: str) -> None:
        try:
            await self.maintenance().run_task(lang, task, backoff=True)
        except Exception:
            log.exception("maintenance %s/%s failed unexpectedly", lang, task)
