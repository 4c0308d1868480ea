"""SIGTERM taken as Ctrl-C for a block of the CLI's main thread.

A service manager or ``kill`` stopping ``agent-client remember`` killed it with a merge
half done (images staged for a note never written); raised as ``KeyboardInterrupt``,
the command takes the entry's writes back as for Ctrl-C. Once its result is decided
(``result_decided``), there is nothing to take back: a stop then lets the result be
printed and ends the process with its status (it said "interrupted", status 130, after
printing that the entry was saved).
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
        if signal.getsignal(signal.SIGTERM) is _interrupt:  # (else a result is decided)
            signal.signal(signal.SIGTERM, before)


@contextlib.contextmanager
def result_decided(code: int) -> Iterator[None]:
    """The block prints a decided result: where SIGTERM was taken as Ctrl-C, a SIGTERM
    or Ctrl-C in it is held until the result is printed, then ends the process with
    ``code`` (one in the block ended it with nothing printed, or said "interrupted");
    after it, either ends the process at once with ``code`` (elsewhere, nothing
    changes)."""
    main = threading.current_thread() is threading.main_thread()
    if not (main and signal.getsignal(signal.SIGTERM) is _interrupt):
        yield
        return
    held: list[int] = []
    signal.signal(signal.SIGTERM, lambda signum, frame: held.append(signum))
    signal.signal(signal.SIGINT, lambda signum, frame: held.append(signum))
    try:
        yield
    finally:
        if held:
            _end(code)

        def end(signum: int, frame: object) -> None:
            _end(code)

        signal.signal(signal.SIGTERM, end)
        signal.signal(signal.SIGINT, end)


def _end(code: int) -> None:
    """End the process with ``code``, what was printed flushed."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError, AttributeError):
            stream.flush()
    os._exit(code)
