"""SIGTERM taken as Ctrl-C for a block of the CLI's main thread.

A service manager or ``kill`` stopping ``agent-client remember`` killed it with a merge
half done (images staged for a note never written); raised as ``KeyboardInterrupt``,
the command takes the entry's writes back as for Ctrl-C. Once its result is decided
(``end_on_terminate``), there is nothing to take back: SIGTERM then ends the process
with that result's status (it said "interrupted", status 130, after printing that the
entry was saved).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


@contextlib.contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM raises ``KeyboardInterrupt`` in the block (main thread only; elsewhere
    no signal handler can be set, and the block runs as it is)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


def end_on_terminate(code: int) -> None:
    """Where SIGTERM is taken as Ctrl-C, from now on it ends the process at once with
    ``code``, what was printed flushed (elsewhere, nothing changes)."""

    def end(signum: int, frame: object) -> None:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        os._exit(code)

    main = threading.current_thread() is threading.main_thread()
    if main and signal.getsignal(signal.SIGTERM) is _interrupt:
        signal.signal(signal.SIGTERM, end)
