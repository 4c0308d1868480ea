"""An index damaged while it serves is rebuilt from the vaults as one found damaged after
a crash is (``late_check``).

Only a start after an unclean stop checked the file: a damage that the catch-up met
(``database disk image is malformed``) was retried every 15 s for as long as the server
ran, search answering 500, and a stop then left the clean mark, so that no start ever
checked or rebuilt it. Now the catch-up's failure on a file SQLite calls damaged has it
checked whole; damaged, the server stops and starts itself again, and rebuilds.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import urllib.parse
from pathlib import Path

import pytest
from helpers.indexer_process import spawn_indexer, start_indexer, wait_for

from indexer.health import server_health
from indexer.sqlite_lib import sqlite3
from shared.workspace import Workspace

NO_SUMMARIES = {"INDEXER_SUMMARIES": "0"}
NOTES = 300


def notes(workspace: Path) -> Path:
    vault = Workspace(workspace).vault_dir("en")
    vault.mkdir(parents=True)
    for n in range(NOTES):
        (vault / f"n{n}.md").write_text(f"# Note {n}\n\nquince number {n}\n" * 4)
    return vault


def caught_up(url: str, workspace: Path) -> bool:
    health = server_health(url, Workspace(workspace)) or {}
    return not health.get("index_partial", True)


def cut_in_half(workspace: Path) -> None:
    """The index's file without its second half (its pages moved into it first)."""
    path = Workspace(workspace).index_path
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    os.truncate(path, path.stat().st_size // 2)


def rebuilt(workspace: Path, expected: int) -> None:
    conn = sqlite3.connect(Workspace(workspace).index_path)
    try:
        assert conn.execute("PRAGMA quick_check").fetchall() == [("ok",)]
        assert conn.execute("SELECT count(*) FROM notes").fetchone()[0] == expected
    finally:
        conn.close()


def served_again(proc, log_path: Path, workspace: Path, expected: int) -> str:
    """Wait for the second start's rebuilt index; the log so far."""
    wait_for(lambda: log_path.read_text().count(" serving ") == 2, 60, what="a second start")
    assert proc.poll() is None  # (the same process id)
    url = (workspace / "indexer.mcp.url").read_text().strip()
    wait_for(lambda: caught_up(url, workspace), 60, what="the index rebuilt")
    log = log_path.read_text()
    steps = ["starting again to rebuild it from the vaults", "recreating it from the vaults"]
    places = [log.index(step) for step in steps]
    assert places == sorted(places) and log.rindex(" serving ") > places[-1], log
    assert not (workspace / ".indexer/check-index").exists()
    rebuilt(workspace, expected)
    return log


def cut_once_indexed(log_path: Path, workspace: Path) -> None:
    """Once the server serves and its first index is done, its file cut in half."""
    wait_for(lambda: " serving " in log_path.read_text(), 60, what="serving")
    url = (workspace / "indexer.mcp.url").read_text().strip()
    wait_for(lambda: caught_up(url, workspace), 60, what="the first index")
    cut_in_half(workspace)


@pytest.mark.e2e
def test_an_index_damaged_while_serving_is_rebuilt(workspace: Path) -> None:
    vault = notes(workspace)
    proc = spawn_indexer(workspace, env=NO_SUMMARIES)
    log_path: Path = proc.log_path  # type: ignore[attr-defined]
    try:
        cut_once_indexed(log_path, workspace)
        (vault / "later.md").write_text("# Later\n\nwritten while the index was damaged\n")
        log = served_again(proc, log_path, workspace, NOTES + 1)
        assert "the index caught up" not in log and log.count("is damaged") >= 1, log
    finally:
        if proc.poll() is None:
            proc.terminate()
        assert proc.wait(timeout=30) == 0
    assert (workspace / ".indexer/clean-shutdown").exists()
    assert (vault / "later.md").exists() and len(list(vault.glob("*.md"))) == NOTES + 1


@pytest.mark.e2e
def test_a_stop_asked_as_it_stops_for_the_damage_is_a_stop(workspace: Path) -> None:
    """A SIGTERM that came between the damage found and the start again was ignored
    (once serving, ``run`` ignores the signal uvicorn re-raises): the process started
    again and served on, its supervisor's stop lost. It stops, and the mark left has
    the next start rebuild the index."""
    vault = notes(workspace)
    proc = spawn_indexer(workspace, env=NO_SUMMARIES)
    log_path: Path = proc.log_path  # type: ignore[attr-defined]
    try:
        cut_once_indexed(log_path, workspace)
        (vault / "later.md").write_text("# Later\n")
        wait_for(lambda: "checking it whole" in log_path.read_text(), 60, 0.002, "the check")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) in (0, -signal.SIGTERM)  # (-15: after the exec)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert log_path.read_text().count(" serving ") == 1, log_path.read_text()
    assert (workspace / ".indexer/check-index").exists()
    server = start_indexer(workspace, env=NO_SUMMARIES)
    try:
        wait_for(lambda: caught_up(server.url, workspace), 60, what="the index rebuilt")
        rebuilt(workspace, NOTES + 1)
    finally:
        assert server.stop() == 0


def search_answer(url: str, word: str) -> tuple[int, dict]:
    """A REST search of the server at ``url`` (its MCP URL): the status and the body."""
    where = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(where.hostname or "", where.port, timeout=30)
    try:
        conn.request("GET", "/api/v1/en/search?" + urllib.parse.urlencode({"q": word}))
        answer = conn.getresponse()
        return answer.status, json.loads(answer.read())
    finally:
        conn.close()


@pytest.mark.e2e
def test_searches_that_meet_the_damage_have_it_checked_and_say_so(workspace: Path) -> None:
    """No write came after the damage, so no catch-up met it: searches answered a generic
    500 ("the indexer failed") for as long as the server ran. The first search that meets
    it has the file checked, and says the index is damaged and rebuilt: retry."""
    notes(workspace)
    proc = spawn_indexer(workspace, env=NO_SUMMARIES)
    log_path: Path = proc.log_path  # type: ignore[attr-defined]
    try:
        cut_once_indexed(log_path, workspace)
        url = (workspace / "indexer.mcp.url").read_text().strip()
        status, body = search_answer(url, "quince")
        assert status == 503, body
        message = body["error"]["message"]
        assert "damaged" in message and "retry" in message and str(workspace) not in message
        served_again(proc, log_path, workspace, NOTES)
        url = (workspace / "indexer.mcp.url").read_text().strip()
        status, body = search_answer(url, "quince")
        assert status == 200 and body["total"] == NOTES, body
    finally:
        if proc.poll() is None:
            proc.terminate()
        assert proc.wait(timeout=30) == 0
