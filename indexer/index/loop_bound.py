"""SQLite statements stopped once a deadline passes: a grep's narrowing query past its
time, a call made on the event loop past its time there."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from indexer.sqlite_lib import sqlite3
from indexer.vault.no_wait import Abandoned, TookLong, caller_gone, loop_deadline

_STEPS = 2000  # virtual machine steps between two looks at the clock (about 1 us each)


class DeadlinePassed(Exception):
    """A statement was interrupted because its deadline passed (``interrupted_past``)."""


@contextmanager
def interrupted_past(
    conn: sqlite3.Connection, past: Callable[[], bool], steps: int = _STEPS
) -> Iterator[None]:
    """A statement of ``conn`` run in the block is interrupted once ``past()`` says so
    (asked every ``steps`` virtual machine steps), and ``DeadlinePassed`` raised; any
    other SQLite error is raised as it is."""
    passed = False

    def check() -> bool:
        nonlocal passed
        passed = past()
        return passed

    conn.set_progress_handler(check, steps)
    try:
        yield
    except sqlite3.OperationalError:
        if passed:
            raise DeadlinePassed from None
        raise
    finally:
        conn.set_progress_handler(None, 0)


@contextmanager
def bounded_on_loop(conn: sqlite3.Connection) -> Iterator[None]:
    """On the loop (``no_wait.without_waiting``), a statement of ``conn`` run in the block
    past the call's time there is interrupted and ``TookLong`` raised (the call runs
    again on a thread); on a thread, statements take the time they take, unless the
    caller gave up (``no_wait.abandoned_when``): then ``Abandoned`` is raised."""
    deadline = loop_deadline()
    if deadline is None:
        gone = caller_gone()
        if gone is None:
            yield
            return
        try:
            with interrupted_past(conn, gone.is_set):
                yield
        except DeadlinePassed:
            raise Abandoned from None
        return
    try:
        with interrupted_past(conn, lambda: time.thread_time() > deadline):
            yield
    except DeadlinePassed:
        raise TookLong from None
