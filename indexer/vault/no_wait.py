"""Calls made on the event loop itself must not wait: where one would, it is moved.

``read`` and ``stat`` run on the server's event loop (the thread hop costs more than a
small file's work), and the loop serves every client: a lease another program keeps on
a note (``LEASE_WAIT``, 2 s) or a multi-GiB file to hash stalled them all. Inside
``without_waiting`` such a call raises ``WouldWait`` before it waits, and the caller
runs it again on a thread. Only read-only calls are made so: nothing has changed when
one gives up.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

_on_loop = threading.local()


class WouldWait(Exception):
    """The call would wait here (a lease, a large file): run it on a thread instead."""


@contextmanager
def without_waiting() -> Iterator[None]:
    """In the block (on this thread), ``may_wait`` raises ``WouldWait``."""
    _on_loop.active = True
    try:
        yield
    finally:
        _on_loop.active = False


def may_wait() -> None:
    """Mark a point that may block: inside ``without_waiting``, give up here."""
    if getattr(_on_loop, "active", False):
        raise WouldWait
