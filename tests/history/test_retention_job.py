"""The retention job prunes history on the jobs thread, and stops with it."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

from helpers.indexer_process import wait_for

from indexer.jobs.retention import prune_history
from indexer.jobs.runner import JobRunner
from indexer.settings import Settings
from indexer.vault.fsops import etag_of
from indexer.vault.history.store import Change, HistoryStore

NOW = datetime(2026, 11, 29, tzinfo=UTC)


def test_old_versions_are_pruned_in_the_background(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "history", etag_of)
    store.open()
    text = b""
    for i in range(1, 31):
        new = os.urandom(200)  # no deltas: each version's blob stands alone
        pending = store.begin(
            [Change("en", "a.md", "write", text if i > 1 else None, new)],
            actor="tool",
            reason=None,
            at=NOW - timedelta(days=100),
        )
        store.commit(pending)
        text = new
    pending = store.begin(
        [Change("en", "b.md", "write", None, b"b\n")], actor="tool", reason=None, at=NOW
    )
    store.commit(pending)  # (in use until NOW: the pass's cut-off is the clock's)
    runner = JobRunner()
    try:
        runner.submit(prune_history(store, 90, lambda: NOW, first_delay=0, interval=3600))
        wait_for(lambda: store.stats()["versions"] == 21, 10, what="the prune")
        assert [v.version for v in store.versions("en", "a.md", 100)][-1] == 11
        wait_for(lambda: store.stats()["blobs"] == 21, 10, what="the blobs' collection")
    finally:
        runner.stop()
        store.close()


def test_history_days_is_a_setting(tmp_path: Path) -> None:
    flags = {"workspace": str(tmp_path)}
    assert Settings.resolve(flags, {}).history_days == 90
    assert Settings.resolve(flags, {"INDEXER_HISTORY_DAYS": "7"}).history_days == 7
    for bad in ("-1", "x"):
        try:
            Settings.resolve(flags, {"INDEXER_HISTORY_DAYS": bad})
        except ValueError:
            continue
        raise AssertionError(f"INDEXER_HISTORY_DAYS={bad} was accepted")
