"""Freed memory given back to the system once the server goes idle after some work.

glibc keeps the pages a program frees for its next allocations: after a burst of
searches, large notes or a reindex, the server's RSS stays where the burst left it
(about 80 MB over what it uses at 30,000 notes, with the arenas capped at two) through
the hours it then sits idle. ``malloc_trim(0)`` hands those pages back (after a full
collection: a closed MCP session's objects wait for one); it walks the heap holding its
locks, so it runs only when the process has used almost no CPU for a whole period, and
only once after each spell of work (an idle server is never walked again). A no-op
where the C library is not glibc.
"""

from __future__ import annotations

import ctypes
import gc
import logging
import resource
import threading
import time
from collections.abc import Callable
from functools import cache

from indexer.malloc_arenas import c_function

log = logging.getLogger("indexer")

PERIOD_SECONDS = 30.0
IDLE_SHARE = 0.02  # of one CPU over a period: below it, the process is idle
_PAGE = resource.getpagesize()


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    trim = c_function("malloc_trim")  # (glibc's alone)
    if trim is None:
        return None
    trim.argtypes = (ctypes.c_size_t,)
    trim.restype = ctypes.c_int
    return trim  # type: ignore[no-any-return]


def give_memory_back() -> bool:
    """Return the heap's free pages to the system; whether the C library could."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


def collect_and_give_back() -> bool:
    """Collect cycles first (closed MCP sessions and their streams wait for a full
    collection, which an idle server may not reach for hours), then trim the heap."""
    gc.collect()
    return give_memory_back()


def resident_bytes() -> int:
    """The process's resident set now (``/proc/self/statm``; 0 where there is none)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            return int(statm.read().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        return 0


class IdleTrim:
    """A daemon thread that trims the heap at the first idle period after work."""

    def __init__(
        self,
        *,
        period: float = PERIOD_SECONDS,
        cpu_seconds: Callable[[], float] = time.process_time,
        trim: Callable[[], bool] = collect_and_give_back,
    ) -> None:
        self._period = period
        self._cpu_seconds = cpu_seconds
        self._trim = trim
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self.trims = 0

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="idle-trim", daemon=True)
        self._thread.start()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def _run(self) -> None:
        worked = False  # (the start's work, done as this begins, is the first spell)
        before = self._cpu_seconds()
        while not self._stopping.wait(self._period):
            now = self._cpu_seconds()
            busy = now - before >= IDLE_SHARE * self._period
            if busy:
                worked = True
            elif worked:
                worked = False
                self._trim_once()
                now = self._cpu_seconds()  # (the walk's own CPU is no work)
            before = now

    def _trim_once(self) -> None:
        resident = resident_bytes()
        if not self._trim():
            self._stopping.set()  # (no malloc_trim here: nothing to do, ever)
            return
        self.trims += 1
        given = resident - resident_bytes()
        log.debug("idle: gave %.1f MB of freed memory back to the system", given / 2**20)
