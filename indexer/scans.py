"""The bounded pool that long scans (``grep``, ``find``) run in, apart from other calls.

Tool calls and REST requests run in anyio's worker threads, 40 at a time. Forty heavy
greps took them all, and a ``write`` waited seconds for a thread (0.03 s became 2.4 s
with 45 grep clients). Scans run here instead, ``threads`` at a time under a limiter
of their own (by default one less than the CPUs: the scans' Python work competes for
the interpreter and the CPUs with everything else, so a free CPU is what keeps other
calls fast): more scans wait their turn (a grep's time budget counts from its call,
so a grep that waited too long answers at once, ``truncated: true``), and every other
call keeps anyio's threads to itself.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, TypeVar

import anyio.to_thread
from anyio import CapacityLimiter

from indexer.one_cpu import on_any_cpu

T = TypeVar("T")
# How a scan's thread is told its caller gave up (``no_wait.abandoned_when``).
Telling = Callable[[threading.Event], AbstractContextManager[object]]


def default_threads() -> int:
    """One less than the CPUs (one stays free for every other call), from 1 to 4."""
    return max(1, min(4, (os.cpu_count() or 2) - 1))


class ScanPool:
    """``await pool.run(fn, *args)``: ``fn`` in a worker thread, ``threads`` at a time
    (0: ``default_threads()``). ``told``: how a scan learns that its caller gave up
    (``no_wait.abandoned_when``, given by whoever builds the pool: this module is below
    the vault); by default it is not told."""

    def __init__(self, threads: int = 0, told: Telling | None = None) -> None:
        self.threads = threads or default_threads()
        self.told: Telling = told or (lambda gone: contextlib.nullcontext())
        self._limiter: CapacityLimiter | None = None

    async def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """A scan cancelled (its client cancelled the call, or went away) is told, not
        waited for: it stops at its next file (``no_wait.stop_if_abandoned``). Waited
        for, it read on to its end (a grep up to its 10 s budget) and held its thread,
        so the scans queued behind it waited as long (a grep of one small folder after
        a cancelled grep of a 20-note, 140 MB vault: 0.01 -> 3.3 s)."""
        if self._limiter is None:  # made in the running event loop
            self._limiter = CapacityLimiter(self.threads)
        gone = threading.Event()
        call = functools.partial(_on_any_cpu, self.told(gone), fn, *args, **kwargs)
        try:
            return await anyio.to_thread.run_sync(
                call, limiter=self._limiter, abandon_on_cancel=True
            )
        except BaseException:
            gone.set()
            raise


def _on_any_cpu(
    told: AbstractContextManager[object], fn: Callable[..., T], *args: Any, **kwargs: Any
) -> T:
    """``fn`` on any CPU (``indexer.one_cpu``: the server's other threads keep to one),
    in ``told`` (which tells it when its caller gave up)."""
    with on_any_cpu(), told:
        return fn(*args, **kwargs)
