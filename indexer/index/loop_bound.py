"""SQLite statements of a call made on the event loop stop when its time there is over."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager

from indexer.vault.no_wait import TookLong, loop_deadline

_STEPS = 2000  # virtual machine steps between two looks at the thread's CPU clock (1 us)


@contextmanager
def bounded_on_loop(conn: sqlite3.Connection) -> Iterator[None]:
    """On the loop (``no_wait.without_waiting``), a statement of ``conn`` run in the block
    past the call's time there is interrupted and ``TookLong`` raised (the call runs
    again on a thread); on a thread, statements take the time they take."""
    deadline = loop_deadline()
    if deadline is None:
        yield
        return
    passed = False

    def past() -> bool:
        nonlocal passed
        passed = time.thread_time() > deadline
        return passed

    conn.set_progress_handler(past, _STEPS)
    try:
        yield
    except sqlite3.OperationalError:
        if passed:
            raise TookLong from None
        raise
    finally:
        conn.set_progress_handler(None, 0)
