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

import functools
import os
from collections.abc import Callable
from typing import Any, TypeVar

import anyio.to_thread
from anyio import CapacityLimiter

from indexer.one_cpu import on_any_cpu

T = TypeVar("T")


def default_threads() -> int:
    """One less than the CPUs (one stays free for every other call), from 1 to 4."""
    return max(1, min(4, (os.cpu_count() or 2) - 1))


class ScanPool:
    """``await pool.run(fn, *args)``: ``fn`` in a worker thread, ``threads`` at a time
    (0: ``default_threads()``)."""

    def __init__(self, threads: int = 0) -> None:
        self.threads = threads or default_threads()
        self._limiter: CapacityLimiter | None = None

    async def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        if self._limiter is None:  # made in the running event loop
            self._limiter = CapacityLimiter(self.threads)
        call = functools.partial(_on_any_cpu, fn, *args, **kwargs)
        return await anyio.to_thread.run_sync(call, limiter=self._limiter)


def _on_any_cpu(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn`` on any CPU (``indexer.one_cpu``: the server's other threads keep to one)."""
    with on_any_cpu():
        return fn(*args, **kwargs)
