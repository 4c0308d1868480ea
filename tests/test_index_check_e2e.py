"""A start after an unclean stop: the index's integrity check (``PRAGMA quick_check``,
which reads the whole file: 19 s of 25 s before the URL file on a 100,000-note
workspace) runs once serving for an index past ``INDEXER_CHECK_FIRST_MB``
(``indexer.index.late_check``; 0 here: these indexes are small). A damaged index is
still rebuilt from the vaults: the server that finds it stops, leaves a mark and starts
itself again, and that start checks before serving, which recreates the file. A small one is
checked, and recreated, before the server answers, as every index was.
"""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

import pytest
from helpers.indexer_process import spawn_indexer, start_indexer, wait_for

from indexer.health import server_health
from indexer.sqlite_lib import sqlite3
from shared.workspace import Workspace

NO_SUMMARIES = {"INDEXER_SUMMARIES": "0"}
LATE = {**NO_SUMMARIES, "INDEXER_CHECK_FIRST_MB": "0"}  # (every index checked once serving)
NOTES = 300  # (every table and index of more than one page)


@pytest.fixture(scope="module")
def killed_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace whose server indexed ``NOTES`` notes, then was killed (no clean mark):
    made once, as each test's own copy starts from the same bytes on disk (one server
    start and index of 300 notes a test less: 3-5 s at load)."""
    workspace = tmp_path_factory.mktemp("killed") / "ws"
    vault = Workspace(workspace).vault_dir("en")
    vault.mkdir(parents=True)
    for n in range(NOTES):
        (vault / f"n{n}.md").write_text(f"# Note {n}\n\nquince number {n}\n" * 4)
    server = start_indexer(workspace, env=NO_SUMMARIES)
    wait_for(lambda: not partial(server.url, workspace), 60, what="the index caught up")
    server.stop(signal.SIGKILL)
    assert not (workspace / ".indexer/clean-shutdown").exists()
    return workspace


@pytest.fixture
def killed_server(killed_template: Path, workspace: Path) -> Path:
    """This test's copy of the killed workspace (nothing of it runs: a copy is what the
    kill left on disk)."""
    shutil.copytree(killed_template, workspace, symlinks=True, dirs_exist_ok=True)
    return workspace


def partial(url: str, workspace: Path) -> bool:
    health = server_health(url, Workspace(workspace)) or {}
    return bool(health.get("index_partial", True))


def assert_whole(workspace: Path) -> None:
    """The index passes the whole check and holds every note."""
    conn = sqlite3.connect(Workspace(workspace).index_path)
    try:
        assert conn.execute("PRAGMA quick_check").fetchall() == [("ok",)]
        assert conn.execute("SELECT count(*) FROM notes").fetchone()[0] == NOTES
    finally:
        conn.close()


def damage_an_index_page(workspace: Path) -> None:
    """Break the first page of an index of ``notes`` that opening the file and counting
    its notes do not read: only the whole check finds it."""
    path = Workspace(workspace).index_path
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # (the kill's pages into the file)
    (root,) = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'notes_overviews'")
    page = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    data = bytearray(path.read_bytes())
    start = (root[0] - 1) * page
    data[start : start + 12] = b"\x07" * 12  # (its b-tree page header)
    path.write_bytes(bytes(data))


@pytest.mark.e2e
def test_after_a_kill_the_index_is_checked_once_serving(killed_server: Path) -> None:
    workspace = killed_server
    server = start_indexer(workspace, env=LATE, settled=False)
    try:
        wait_for(lambda: not partial(server.url, workspace), 60, what="the index caught up")
        # (the start's own check logs nothing when it passes: this is the one that runs
        # once the URL file is written)
        assert "integrity check after an unclean stop passed" in server.log()
    finally:
        assert server.stop() == 0
    assert (workspace / ".indexer/clean-shutdown").exists()


@pytest.mark.e2e
def test_an_index_damaged_before_a_kill_is_rebuilt(killed_server: Path) -> None:
    """The server that finds the damage once serving stops and starts itself again (the
    same process: it exited with 1, and without a supervisor nobody started it again);
    that start recreates the file before it serves."""
    workspace = killed_server
    damage_an_index_page(workspace)
    proc = spawn_indexer(workspace, env=LATE)
    log_path: Path = proc.log_path  # type: ignore[attr-defined]
    try:
        wait_for(lambda: log_path.read_text().count(" serving ") == 2, 60, what="a second start")
        assert proc.poll() is None  # (the same process id)
        log = log_path.read_text()
        steps = [
            " serving ",
            "failed its integrity check",
            "starting again to rebuild it from the vaults",
            "recreating it from the vaults",
        ]
        places = [log.index(step) for step in steps]
        assert places == sorted(places) and log.rindex(" serving ") > places[-1], log
        if len(os.sched_getaffinity(0)) > 1:  # (the exec kept one CPU: the start again
            # was allowed that one only, and pinned nothing; no CPU review, scans on one)
            assert log.count("its threads on CPU") == 2, log
        assert not (workspace / ".indexer/check-index").exists()
        url = (workspace / "indexer.mcp.url").read_text().strip()
        wait_for(lambda: not partial(url, workspace), 60, what="the index rebuilt")
        assert_whole(workspace)
    finally:
        if proc.poll() is None:
            proc.terminate()
        assert proc.wait(timeout=30) == 0
    assert (workspace / ".indexer/clean-shutdown").exists()


@pytest.mark.e2e
def test_a_small_index_damaged_before_a_kill_is_rebuilt_before_serving(killed_server: Path) -> None:
    """Under ``INDEXER_CHECK_FIRST_MB`` the check runs before the URL file, as it always
    did: the damaged file is recreated before any answer, and the server keeps serving."""
    workspace = killed_server
    damage_an_index_page(workspace)
    server = start_indexer(workspace, env=NO_SUMMARIES)
    try:
        log = server.log()
        assert log.index("recreating it from the vaults") < log.index("serving"), log
        assert not (workspace / ".indexer/check-index").exists()
        wait_for(lambda: not partial(server.url, workspace), 60, what="the index rebuilt")
        assert "integrity check after an unclean stop" not in server.log()
        assert_whole(workspace)
    finally:
        assert server.stop() == 0


@pytest.mark.e2e
def test_a_damage_whose_mark_cannot_be_written_stops_the_server(killed_server: Path) -> None:
    """Without the mark (a full disk; here the mark's name points into no folder) the
    start again would check once serving, find the same damage and start again: it
    started 17 times in 40 s. It exits 1 instead, naming the file to remove."""
    workspace = killed_server
    damage_an_index_page(workspace)
    (workspace / ".indexer/check-index").symlink_to(workspace / "gone/check-index")
    proc = spawn_indexer(workspace, env=LATE)
    log_path: Path = proc.log_path  # type: ignore[attr-defined]
    try:
        assert proc.wait(timeout=60) == 1
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    log = log_path.read_text()
    assert log.count(" serving ") == 1 and "starting again" not in log, log
    assert f"remove {Workspace(workspace).index_path}" in log, log
    assert "the index the index" not in log
