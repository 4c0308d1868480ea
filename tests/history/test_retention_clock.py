"""Retention under a clock that jumps: a wrong clock far ahead must not prune years of
history at once; the cut-off moves at most a step (a day) per pass, kept in the file."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from helpers.indexer_process import wait_for

from indexer.jobs.retention import prune_history
from indexer.jobs.runner import JobRunner
from indexer.vault.fsops import etag_of
from indexer.vault.history.store import Change, HistoryStore

NOW = datetime(2026, 11, 29, 20, 0, 0, tzinfo=UTC)
DAY = timedelta(days=1)
STEP = 86_400_000


@pytest.fixture
def store(tmp_path: Path) -> Iterator[HistoryStore]:
    history = HistoryStore(tmp_path / "history", etag_of)
    history.open(check=True)
    yield history
    history.close()


def daily(store: HistoryStore, days: int, path: str = "a.md") -> None:
    """``days`` versions of ``path``, one a day, the last at NOW."""
    text: bytes | None = None
    for i in range(days):
        new = f"v{i}\n".encode()
        at = NOW - (days - 1 - i) * DAY
        pending = store.begin(
            [Change("en", path, "write", text, new)], actor="tool", reason=None, at=at
        )
        store.commit(pending)
        store.settle()
        text = new


def ages(store: HistoryStore, path: str = "a.md") -> list[int]:
    """The age in days (at NOW) of each version kept, oldest first."""
    return sorted(
        ((NOW - datetime.fromisoformat(v.at)).days for v in store.versions("en", path, 1000)),
        reverse=True,
    )


def test_a_clock_years_ahead_prunes_at_most_a_day_a_pass(store: HistoryStore) -> None:
    daily(store, 100)
    assert store.prune(NOW, days=30, keep=20).held_ms == 0  # the normal rule: 30 days kept
    assert ages(store) == list(range(30, -1, -1))
    jumped = NOW + timedelta(days=5 * 365)
    stats = store.prune(jumped, days=30, keep=20)
    assert stats.versions == 1 and ages(store)[0] == 29  # a day's worth, not 10 versions
    assert stats.held_ms == (jumped - NOW).days * STEP - STEP
    store.prune(jumped + timedelta(hours=6), days=30, keep=20)
    assert ages(store)[0] == 28
    # The clock is set right: the cut-off goes back with it, nothing more is lost.
    stats = store.prune(NOW + timedelta(hours=12), days=30, keep=20)
    assert stats.versions == 0 and stats.held_ms == 0 and ages(store)[0] == 28
    for later in (NOW + DAY, NOW + 2 * DAY, NOW + 2 * DAY + timedelta(hours=6)):  # as before
        stats = store.prune(later, days=30, keep=20)
        assert stats.held_ms == 0
    assert ages(store)[0] == 27


def test_a_first_pass_starts_from_the_newest_version(store: HistoryStore) -> None:
    daily(store, 100)  # a history from before the cut-off was kept: no cut-off yet
    stats = store.prune(NOW + timedelta(days=3650), days=30, keep=20)
    assert stats.held_ms > 0 and ages(store)[0] == 29  # 30 days before the newest, + a day


def test_a_long_shutdown_catches_up_over_passes(store: HistoryStore) -> None:
    daily(store, 100)
    store.prune(NOW, days=30, keep=20)
    later = NOW + timedelta(days=5)  # off for five days: one day more per pass
    for passes in range(1, 6):
        stats = store.prune(later, days=30, keep=20)
        assert ages(store)[0] == 30 - passes
    assert stats.held_ms == 0 and ages(store)[0] == 25  # 30 days at ``later``, as the rule
    assert store.prune(later, days=30, keep=20).versions == 0


def test_the_cut_off_survives_a_restart(tmp_path: Path) -> None:
    history = HistoryStore(tmp_path / "history", etag_of)
    history.open()
    daily(history, 100)
    history.prune(NOW, days=30, keep=20)
    history.close()
    history = HistoryStore(tmp_path / "history", etag_of)
    history.open(check=True)  # (the file, with its added table, is still ours)
    try:
        history.prune(NOW + timedelta(days=400), days=30, keep=20)
        assert ages(history)[0] == 29
    finally:
        history.close()


def test_the_job_says_when_the_guard_holds_a_prune_back(
    store: HistoryStore, caplog: pytest.LogCaptureFixture
) -> None:
    daily(store, 100)
    store.prune(NOW, days=30, keep=20)
    jumped = NOW + timedelta(days=2000)
    runner = JobRunner()
    try:
        with caplog.at_level(logging.WARNING, logger="indexer.jobs"):
            runner.submit(prune_history(store, 30, lambda: jumped, first_delay=0, interval=3600))
            wait_for(lambda: "asks to prune" in caplog.text, 10, what="the warning")
    finally:
        runner.stop()
    assert ages(store)[0] == 29
    assert jumped.isoformat(timespec="seconds") in caplog.text
    assert "2000.0 days more than the last pass" in caplog.text


def test_a_short_pause_catches_up_without_a_warning(
    store: HistoryStore, caplog: pytest.LogCaptureFixture
) -> None:
    """A weekend's shutdown holds a pass back too, said at INFO: a warning to check the
    clock there was noise at every Monday's start."""
    daily(store, 100)
    store.prune(NOW, days=30, keep=20)
    runner = JobRunner()
    try:
        with caplog.at_level(logging.INFO, logger="indexer.jobs"):
            later = NOW + timedelta(days=3)
            runner.submit(prune_history(store, 30, lambda: later, first_delay=0, interval=3600))
            wait_for(lambda: "asks to prune" in caplog.text, 10, what="the note")
    finally:
        runner.stop()
    held = [r for r in caplog.records if "asks to prune" in r.getMessage()]
    assert [r.levelno for r in held] == [logging.INFO]
