"""A stop during a first index ends it between small steps, not after the walk or a batch.

A stop (SIGTERM) in the first second of a start building its first index of 10,000
notes took 0.3-1.7 s beside a test run: it waited for the walk of every vault (the stop
was asked only between batches) and for a fresh batch's 0.5 s of reads, and uvicorn
told the index of the signal only once it had shut down. The walk and the batch's reads
now look at the stop every ``STOP_EVERY`` files (what the batch read is rolled back,
left for the next start), and ``indexer serve`` tells the index as the signal comes.
"""

from __future__ import annotations

import contextlib
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.indexer_process import start_indexer

from indexer.index.connections import Connections
from indexer.index.reconcile import Stopped
from indexer.index.whole_pass import STOP_EVERY, reconcile_all
from indexer.sqlite_lib import sqlite3
from shared.workspace import Workspace

NOTES = 5 * STOP_EVERY


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    workspace = Workspace(tmp_path / "ws")
    folder = workspace.vault_dir("en") / "topics"
    folder.mkdir(parents=True)
    for n in range(NOTES):
        (folder / f"n{n:04}.md").write_text(f"# Note {n}\n\nquokka words {n}\n")
    return workspace


@pytest.fixture
def db(ws: Workspace) -> Iterator[Connections]:
    connections = Connections(ws.index_path)
    ws.index_path.parent.mkdir(parents=True, exist_ok=True)
    connections.open_writer(check=False)
    yield connections
    connections.close()


def rows(db: Connections) -> int:
    with db.write() as conn:
        return conn.execute("SELECT count(*) FROM notes").fetchone()[0]


def test_a_stop_during_the_walk_ends_it(ws: Workspace, db: Connections) -> None:
    """The walk gave up only once every vault was walked (then told its progress)."""
    walked: list[tuple[int, int]] = []
    with pytest.raises(Stopped):
        reconcile_all(db.write, ws, stop=lambda: True, progress=lambda *p: walked.append(p))
    assert walked == []  # (before: [(0, NOTES)], the whole walk done)
    assert rows(db) == 0


def test_a_stop_during_a_fresh_batch_rolls_it_back(ws: Workspace, db: Connections) -> None:
    """A stop that comes once the first batch reads: the batch is taken back whole
    (nothing of it committed), where it read every file, inserted them and committed."""
    walked: list[bool] = []
    asked = 0

    def stop() -> bool:
        nonlocal asked
        asked += bool(walked)
        return asked > 1  # (the first look after the walk, before the batch: go on)

    with pytest.raises(Stopped):
        reconcile_all(db.write, ws, stop=stop, progress=lambda *p: walked.append(True))
    assert rows(db) == 0
    stats = reconcile_all(db.write, ws, stop=lambda: False)  # the next start: all of them
    assert stats.added == NOTES and rows(db) == NOTES


def test_a_stop_right_after_a_first_start_leaves_a_clean_index(tmp_path: Path) -> None:
    """SIGTERM as a first index runs: exit 0, no traceback, the clean mark left, and the
    next start indexes every note (nothing lost; this one passed before too)."""
    ws = Workspace(tmp_path / "ws")
    folder = ws.vault_dir("en") / "topics"
    folder.mkdir(parents=True)
    for n in range(3000):
        (folder / f"n{n:04}.md").write_text(f"# Note {n}\n\nquokka words {n}\n")
    server = start_indexer(ws.root, settled=False)
    time.sleep(0.1)
    assert server.stop(signal.SIGTERM) == 0
    log = server.log()
    assert "Traceback" not in log and "indexer stopped" in log
    assert ws.clean_mark.exists()  # (the next start checks nothing whole)
    again = start_indexer(ws.root)  # (settled: its reconcile done)
    assert again.stop() == 0
    assert "Traceback" not in again.log()
    with contextlib.closing(sqlite3.connect(ws.index_path)) as conn:
        assert (
            conn.execute("SELECT count(*) FROM notes WHERE path LIKE 'topics/n%'").fetchone()[0]
            == 3000
        )
