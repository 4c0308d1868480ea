"""A quick read-only call made on the event loop, moved to a thread if it would wait."""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import anyio.to_thread

from indexer.vault.no_wait import (
    LOOP_SECONDS,
    TookLong,
    WouldWait,
    abandoned_when,
    without_waiting,
)

T = TypeVar("T")
Key = tuple[str, str]  # (tool, lang)

QUICK_TO_RETURN = 3  # calls in a row quick on a thread before the next is tried on the loop


class LongCalls:
    """The (tool, lang) of calls that took long of late: the next ones go to a thread at
    once, until ``quick`` of them in a row were quick there (in a vault where searches
    take long, each would else give its time on the loop away first; the first search
    after a start, on a cold cache, sends the next few there)."""

    def __init__(self, quick: int = QUICK_TO_RETURN, most: int = 256) -> None:
        self.quick = quick
        self.most = most  # (a lang is any string until the tool checks it)
        self._streaks: dict[Key, int] = {}  # key -> quick calls in a row since
        self._lock = threading.Lock()

    def __contains__(self, key: Key) -> bool:
        return key in self._streaks

    def took_long(self, key: Key) -> None:
        with self._lock:
            if len(self._streaks) >= self.most:
                self._streaks.clear()
            self._streaks[key] = 0

    def was_quick(self, key: Key) -> None:
        with self._lock:
            streak = self._streaks.get(key)
            if streak is None:
                return
            if streak + 1 >= self.quick:
                del self._streaks[key]
            else:
                self._streaks[key] = streak + 1


LONG_CALLS = LongCalls()


async def on_loop_unless_waiting(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` on the loop itself (a small file's ``read`` or ``stat``, a
    search of a vault of ordinary size: the thread hop costs more than the work), or on
    a thread when it meets something it would wait for or takes long (``no_wait``): the
    loop serves every other client meanwhile (``LongCalls``: the next go there at once)."""
    key = (getattr(fn, "__qualname__", ""), repr(kwargs.get("lang"))[:100])
    if key not in LONG_CALLS:
        try:
            with without_waiting():
                return fn(*args, **kwargs)
        except TookLong:
            LONG_CALLS.took_long(key)
        except WouldWait:
            pass
    gone = threading.Event()
    try:  # (a request cancelled, its client gone: the thread is told, not waited for)
        call = functools.partial(_timed, key, gone, fn, *args, **kwargs)
        return await anyio.to_thread.run_sync(call, abandon_on_cancel=True)
    except BaseException:
        gone.set()
        raise


def _timed(key: Key, gone: threading.Event, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn`` on a thread (its statements stop once ``gone`` is set: ``loop_bound``); one
    that took half the loop's time in CPU there counts as one that took long (its CPU:
    the wall clock of a loaded machine says little)."""
    began = time.thread_time()
    with abandoned_when(gone):
        result = fn(*args, **kwargs)
    if time.thread_time() - began >= LOOP_SECONDS / 2:
        LONG_CALLS.took_long(key)
    else:
        LONG_CALLS.was_quick(key)
    return result
