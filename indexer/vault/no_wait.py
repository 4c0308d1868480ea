"""Calls made on the event loop itself must not wait: where one would, it is moved.

``read``, ``stat`` and ``search`` run on the server's event loop (the thread hop costs
more than their usual work: on a loaded machine, waking a worker thread alone took
longer than a search), and the loop serves every client: a lease another program keeps
on a note (``LEASE_WAIT``, 2 s), a multi-GiB file to hash or a search of a word in
every note stalled them all. Inside ``without_waiting`` such a call raises
``WouldWait`` before it waits (``may_wait``), or ``TookLong`` once its time on the loop
is over (``may_take_long``), and the caller runs it again on a thread. Only read-only
calls are made so: nothing has changed when one gives up.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

LOOP_SECONDS = 0.005  # the CPU a call may spend on the loop (every other client waits)

_on_loop = threading.local()


class WouldWait(Exception):
    """The call would wait here (a lease, a large file): run it on a thread instead."""


class TookLong(WouldWait):
    """The call's time on the loop is over: run it on a thread (and the next like it)."""


class Abandoned(Exception):
    """The call's caller went away (its request was cancelled): its thread stops here."""


@contextmanager
def without_waiting(seconds: float = LOOP_SECONDS) -> Iterator[None]:
    """In the block (on this thread), ``may_wait`` raises ``WouldWait``, and
    ``may_take_long`` raises ``TookLong`` once the thread spent ``seconds`` of CPU (its
    CPU, not the wall clock: on a loaded machine a search of 1 ms took 6, and went to a
    thread every time)."""
    _on_loop.active = True
    _on_loop.deadline = time.thread_time() + seconds
    try:
        yield
    finally:
        _on_loop.active = False


def may_wait() -> None:
    """Mark a point that may block: inside ``without_waiting``, give up here."""
    if getattr(_on_loop, "active", False):
        raise WouldWait


def loop_deadline() -> float | None:
    """When the call's time on the loop is over (``time.thread_time``), or None when it
    runs on a thread (work of any length may go on)."""
    return _on_loop.deadline if getattr(_on_loop, "active", False) else None


def may_take_long() -> None:
    """Mark a point in work of unknown length: past the call's time on the loop, give up;
    on a thread whose caller gave up (``abandoned_when``), stop (``Abandoned``: a page's
    snippets, up to half a second of CPU, went on after a search was cancelled)."""
    deadline = loop_deadline()
    if deadline is not None and time.thread_time() > deadline:
        raise TookLong
    stop_if_abandoned()


def stop_if_abandoned() -> None:
    """On a thread whose caller gave up (``abandoned_when``), stop here (``Abandoned``):
    a ``grep`` cancelled by its client read every note on, and the scans queued behind
    it waited seconds for its thread."""
    gone = caller_gone()
    if gone is not None and gone.is_set():
        raise Abandoned


@contextmanager
def abandoned_when(gone: threading.Event) -> Iterator[None]:
    """In the block (a call on a thread), ``gone`` set means its caller gave up: a
    statement bounded by ``loop_bound`` then stops (a search of many words went on for
    seconds after its client's timeout, holding the CPU every other client needed)."""
    _on_loop.gone = gone
    try:
        yield
    finally:
        _on_loop.gone = None


def caller_gone() -> threading.Event | None:
    """The event set once this thread's caller gave up (``abandoned_when``), if any."""
    return getattr(_on_loop, "gone", None)
