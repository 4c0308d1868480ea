"""SIGTERM taken as Ctrl-C for a block of the CLI's main thread.

A service manager or ``kill`` stopping ``agent-client remember`` killed it with a merge
half done (images staged for a note never written); raised as ``KeyboardInterrupt``,
the command takes the entry's writes back as for Ctrl-C.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator


@contextlib.contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM raises ``KeyboardInterrupt`` in the block (main thread only; elsewhere
    no signal handler can be set, and the block runs as it is)."""

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)
