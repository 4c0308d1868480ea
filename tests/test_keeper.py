"""Keeper: the index's catching up (retries after failures, periodic passes while polling)."""

from __future__ import annotations

import time
from collections.abc import Callable

from indexer.index.keeper import Keeper
from indexer.index.reconcile import ReconcileStats


def eventually(check: Callable[[], object], what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def test_the_keeper_retries_until_a_pass_succeeds_and_polls_while_asked() -> None:
    calls: list[float] = []
    failures = [RuntimeError("database or disk is full")] * 2

    def reconcile() -> ReconcileStats:
        calls.append(time.monotonic())
        if failures:
            raise failures.pop()
        return ReconcileStats()

    polling = [False]
    keeper = Keeper(reconcile, polling=lambda: polling[0], poll_seconds=0.05)
    keeper.start()
    try:
        eventually(lambda: not keeper.partial, "a successful pass after two failures")
        assert len(calls) == 3 and keeper.state()["last_error"] is None
        keeper.behind("a test")
        assert keeper.partial
        eventually(lambda: not keeper.partial, "catching up again")
        done = len(calls)
        polling[0] = True
        keeper.behind("polling now")  # wakes the thread, which then polls on its own
        eventually(lambda: len(calls) >= done + 4, "periodic passes while polling")
    finally:
        keeper.stop()
