"""Catching up: the Keeper (retries after failures, periodic passes while polling) and
the watcher's Supervisor (polling while no observer can start, then starting one)."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest
from helpers.indexer_process import wait_for
from watchdog.events import FileSystemEventHandler

from indexer.index.keeper import Keeper
from indexer.index.reconcile import ReconcileStats
from indexer.index.watch_supervisor import Supervisor


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
        wait_for(lambda: not keeper.partial, 10, what="a successful pass after two failures")
        assert len(calls) == 3 and keeper.state()["last_error"] is None
        keeper.behind("a test")
        assert keeper.partial
        wait_for(lambda: not keeper.partial, 10, what="catching up again")
        done = len(calls)
        polling[0] = True
        keeper.behind("polling now")  # wakes the thread, which then polls on its own
        wait_for(lambda: len(calls) >= done + 4, 10, what="periodic passes while polling")
    finally:
        keeper.stop()


def test_a_watcher_that_cannot_start_polls_and_starts_later(tmp_path: Path) -> None:
    lost: list[str] = []
    root = tmp_path / "languages"  # missing: watching it fails
    supervisor = Supervisor(root, FileSystemEventHandler(), lost.append)
    supervisor.start()
    try:
        assert supervisor.state()["state"] == "polling"
        assert lost == ["the file watcher could not start"]
        supervisor.check()  # too early to retry
        assert supervisor.state()["state"] == "polling"
        root.mkdir()
        supervisor._retry_at = 0.0  # the retry is due
        supervisor.check()
        state = supervisor.state()
        assert (state["state"], state["restarts"]) == ("running", 1)
        assert lost[-1] == "the file watcher stopped and was restarted"
    finally:
        supervisor.stop()


def test_a_polls_pass_that_finds_the_index_caught_up_says_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """While polling (a watcher that cannot watch every folder: for days), each pass
    logged "caught up" at INFO: a line every 10 s. Only a pass after falling behind does."""
    calls: list[float] = []

    def reconcile() -> ReconcileStats:
        calls.append(time.monotonic())
        return ReconcileStats()

    caplog.set_level(logging.INFO, logger="indexer.index")
    keeper = Keeper(reconcile, polling=lambda: True, poll_seconds=0.02)
    keeper.start()
    try:
        wait_for(lambda: len(calls) >= 6, 10, what="periodic passes while polling")
        keeper.behind("a test")
        done = len(calls)
        wait_for(lambda: len(calls) >= done + 6, 10, what="more periodic passes")
    finally:
        keeper.stop()
    assert caplog.text.count("the index has caught up with disk") == 1


def test_a_stopped_supervisor_starts_no_observer_again(tmp_path: Path) -> None:
    """The watcher's thread checks its observer after each batch; a stop during a long
    batch (a checkout being indexed) left it to check a stopped supervisor, which took
    the missing observer for a dead one: it started a new one after the stop (an inotify
    instance and a thread no one stops) and logged that the index fell behind."""
    lost: list[str] = []
    root = tmp_path / "languages"
    root.mkdir()
    supervisor = Supervisor(root, FileSystemEventHandler(), lost.append)
    supervisor.start()
    supervisor.stop()
    supervisor.check()  # (the watcher's thread, its batch applied after the stop)
    try:
        assert supervisor.state()["state"] == "polling"
        assert (supervisor.restarts, lost) == (0, [])
    finally:
        supervisor.stop()
