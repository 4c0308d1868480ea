"""A quick read-only call made on the event loop, moved to a thread if it would wait."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from starlette.concurrency import run_in_threadpool

from indexer.vault.no_wait import WouldWait, without_waiting

T = TypeVar("T")


async def on_loop_unless_waiting(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` on the loop itself (a small file's ``read`` or ``stat``:
    the thread hop costs more than the work), or on a thread when it meets something
    it would wait for (``no_wait``): the loop serves every other client meanwhile."""
    try:
        with without_waiting():
            return fn(*args, **kwargs)
    except WouldWait:
        return await run_in_threadpool(functools.partial(fn, *args, **kwargs))
