"""History retention's clock guard in a real ``indexer serve`` under libfaketime: a clock
years ahead prunes one day's worth a pass past the last pass's cut-off, not every older
version at once; set right again, retention prunes as its days say, with no warning.

A note's 40 versions: 10 written four days ago, 10 sixty hours ago (each server then
ran a pass: the cut-off kept in the history file), 20 now; ``INDEXER_HISTORY_DAYS=1``.
The clock then jumps five years ahead: its first pass asked to prune all 20 older
versions (the last 20 are always kept) and prunes the 10 of four days ago alone (its
cut-off a day past the last pass's: a day after the first server's pass; the sped-up
clocks make the days between the two servers' passes minutes longer).
libfaketime speeds each server's clock up (``x60``, ``x600``), so that the first pass,
a minute after start, comes within a second or two.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from helpers.history import history_versions
from helpers.indexer_process import RunningIndexer, start_indexer, wait_for

from indexer.sqlite_lib import sqlite3
from shared.workspace import Workspace

LIBFAKETIME = Path("/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1")
pytestmark = pytest.mark.skipif(not LIBFAKETIME.exists(), reason="needs libfaketime")

NOTE = "clock.md"
ENV = {"INDEXER_HISTORY_DAYS": "1", "INDEXER_SUMMARIES": "0"}
HELD = "asks to prune"
PRUNED = "history: pruned"


def serve(workspace: Path, clock: str) -> RunningIndexer:
    """The server itself under the library (``faketime`` would stand between: a stop
    signal to it stopped it and left the server running)."""
    env = {**ENV, "LD_PRELOAD": str(LIBFAKETIME), "FAKETIME": clock}
    return start_indexer(workspace, env=env, timeout=60)


async def write_versions(server: RunningIndexer, first: int, count: int) -> None:
    async with server.client() as client:
        for n in range(first, first + count):
            await client.call_tool("write", {"lang": "en", "path": NOTE, "content": f"v{n}\n"})


def last_cutoff(workspace: Path) -> int | None:
    """The cut-off the last pass kept (None: no pass yet)."""
    path = Workspace(workspace).history_dir / "history.sqlite"
    if not path.exists():
        return None
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        row = conn.execute("SELECT at_ms FROM prune_cutoff WHERE id = 1").fetchone()
    except sqlite3.OperationalError:  # (no such table: no pass yet)
        return None
    finally:
        conn.close()
    return None if row is None else int(row[0])


def texts(workspace: Path) -> list[int]:
    """The numbers of the versions history keeps, oldest first."""
    found = history_versions(workspace, "en", NOTE)
    return sorted(int(v["version"]) for v in found)


def run_with_a_pass(workspace: Path, clock: str, first: int, count: int) -> None:
    """Versions ``first``.. written under ``clock``, then a pruning pass waited for."""
    before = last_cutoff(workspace)
    server = serve(workspace, clock)
    try:
        asyncio.run(write_versions(server, first, count))
        wait_for(lambda: last_cutoff(workspace) not in (None, before), 30, what="a pass")
    finally:
        assert server.stop() == 0


def test_a_clock_years_ahead_prunes_a_day_a_pass_then_set_right_prunes_as_usual(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    Workspace(workspace).vault_dir("en").mkdir(parents=True)
    run_with_a_pass(workspace, "-4d x60", 1, 10)
    run_with_a_pass(workspace, "-60h x60", 11, 10)
    server = serve(workspace, "+0")  # (the real clock: stopped before its first pass)
    asyncio.run(write_versions(server, 21, 20))
    assert server.stop() == 0
    assert texts(workspace) == list(range(1, 41))

    ahead = serve(workspace, "+5y x600")  # (passes: a tenth of a second, then 36 s apart)
    try:
        wait_for(lambda: PRUNED in ahead.log(), 30, interval=0.01, what="the first pass")
        assert ahead.stop() == 0  # (before a second pass)
    finally:
        ahead.stop()
    assert texts(workspace) == list(range(11, 41)), ahead.log()  # (1 to 10: 4 days old)
    assert "WARNING" in next((line for line in ahead.log().splitlines() if HELD in line), "")

    right = serve(workspace, "+0 x60")  # the clock set right: a day's retention, no warning
    try:
        wait_for(lambda: "pruned 10 versions" in right.log(), 30, what="the pass")
    finally:
        assert right.stop() == 0
    assert texts(workspace) == list(range(21, 41))  # (11 to 20: 60 hours old)
    assert "WARNING" not in right.log()  # (held a day, its catch-up: said at INFO)
