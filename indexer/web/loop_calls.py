"""A quick read-only call made on the event loop, moved to a thread if it would wait."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any, TypeVar

from starlette.concurrency import run_in_threadpool

from indexer.vault.no_wait import LOOP_SECONDS, TookLong, WouldWait, without_waiting

T = TypeVar("T")

_MAX_KEYS = 256  # (a lang is any string until the tool checks it)
_took_long: set[tuple[str, str]] = set()  # (tool, lang) of calls that took long of late


async def on_loop_unless_waiting(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` on the loop itself (a small file's ``read`` or ``stat``, a
    search of a vault of ordinary size: the thread hop costs more than the work), or on
    a thread when it meets something it would wait for or takes long (``no_wait``): the
    loop serves every other client meanwhile. After a call of a tool and lang took long,
    the next ones go to a thread at once, until one of them is quick again there."""
    key = (getattr(fn, "__qualname__", ""), repr(kwargs.get("lang"))[:100])
    if key not in _took_long:
        try:
            with without_waiting():
                return fn(*args, **kwargs)
        except TookLong:
            if len(_took_long) >= _MAX_KEYS:
                _took_long.clear()
            _took_long.add(key)
        except WouldWait:
            pass
    return await run_in_threadpool(functools.partial(_timed, key, fn, *args, **kwargs))


def _timed(key: tuple[str, str], fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn`` on a thread; a call that took little CPU there sends the next to the loop."""
    began = time.thread_time()
    result = fn(*args, **kwargs)
    if time.thread_time() - began < LOOP_SECONDS / 2:
        _took_long.discard(key)
    return result
