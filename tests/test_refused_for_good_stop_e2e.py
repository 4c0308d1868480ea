"""A file history refuses for good (past SQLite's length limit) does not cost every start
after it the full check. It waits in ``Unrecorded`` for ever, and a stop with changes
waiting left no clean mark: every start then checked the index and history whole and
compared history with every file. A stop now leaves the mark with the refused files in
it, and the next start still refuses and names them, without the full check; one
changed meanwhile is read again; a damaged mark is a crash's (the full check).

In the server's process (a ``sitecustomize`` on its path) history's writer refuses a
blob past ``LIMIT`` with SQLite's own error (``SQLITE_TOOBIG``), as past its 1e9 bytes.
"""

from __future__ import annotations

import base64
import json
import os
import signal
from pathlib import Path

import pytest
from helpers.indexer_process import RunningIndexer, start_indexer, wait_for

from shared.workspace import Workspace

pytestmark = pytest.mark.e2e

LIMIT = 64 * 1024  # the blob length history's writer refuses here
TOO_BIG = f"""\
import indexer.vault.history.store as s

_open = s.HistoryStore.open

def _opened(self, *args, **kwargs):
    _open(self, *args, **kwargs)
    self._writer.execute(
        "CREATE TEMP TRIGGER too_big BEFORE INSERT ON blobs WHEN length(NEW.data) > {LIMIT}"
        " BEGIN SELECT zeroblob(2000000000); END"
    )

s.HistoryStore.open = _opened
"""
FULL_CHECK = "integrity check after an unclean stop passed"
REFUSED = "larger than history can store"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(TOO_BIG)
    # (every start checks its index once serving, when it checks: the log says so)
    return {"PYTHONPATH": str(site), "INDEXER_SUMMARIES": "0", "INDEXER_CHECK_FIRST_MB": "0"}


def vault(workspace: Path) -> Path:
    return Workspace(workspace).vault_dir("en")


def big_note(path: Path) -> None:
    """A note deflate cannot shrink past ``LIMIT``: history refuses it."""
    path.write_text("# Big\n\n" + base64.b64encode(os.urandom(2 * LIMIT)).decode() + "\n")


def start(workspace: Path, env: dict[str, str]) -> RunningIndexer:
    server = start_indexer(workspace, env=env)
    wait_for(lambda: "serving" in server.log(), 30, what="the serving line")
    return server


def stop(server: RunningIndexer) -> str:
    assert server.stop(signal.SIGTERM) == 0
    return server.log()


def mark(workspace: Path) -> Path:
    return Workspace(workspace).clean_mark


def refused_then_stopped(workspace: Path, env: dict[str, str]) -> None:
    """A server that refused ``big.md`` (written outside the tools), stopped."""
    vault(workspace).mkdir(parents=True)
    (vault(workspace) / "a.md").write_text("# A\n\nwords\n")
    server = start(workspace, env)
    big_note(vault(workspace) / "big.md")
    wait_for(lambda: "en/big.md" in server.log(), 30, what="the refusal said")
    assert REFUSED in server.log()
    stop(server)


def versions(server: RunningIndexer, path: str) -> int:
    store = Workspace(server.workspace).history_dir / "history.sqlite"
    import sqlite3  # (read-only, beside the server: WAL readers do not block it)

    conn = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        return conn.execute(
            "SELECT count(*) FROM versions v JOIN paths p ON p.id = v.path_id WHERE p.path = ?",
            (path,),
        ).fetchone()[0]
    finally:
        conn.close()


def test_a_stop_with_a_refused_file_leaves_the_clean_mark_and_the_start_refuses_it_still(
    workspace: Path, env: dict[str, str]
) -> None:
    refused_then_stopped(workspace, env)
    assert mark(workspace).exists()  # (none before: every start did the full check)
    assert "big.md" in mark(workspace).read_text()

    server = start(workspace, env)
    try:
        # (said at start: the index, whole, tells history nothing of an unchanged file)
        wait_for(lambda: "en/big.md" in server.log(), 30, what="the refusal said again")
        assert REFUSED in server.log()
    finally:
        log = stop(server)
    assert FULL_CHECK not in log and "could not be read whole" not in log
    assert "big.md" in mark(workspace).read_text()  # (and so at every stop after)


def test_a_refused_file_changed_while_no_server_ran_is_read_again(
    workspace: Path, env: dict[str, str]
) -> None:
    refused_then_stopped(workspace, env)
    (vault(workspace) / "big.md").write_text("# Big\n\nsmall now\n")
    server = start(workspace, env)
    try:
        wait_for(lambda: versions(server, "big.md") == 1, 30, what="big.md in history")
    finally:
        log = stop(server)
    assert FULL_CHECK not in log
    assert "big.md" not in mark(workspace).read_text()


@pytest.mark.parametrize(
    "text",
    [
        "stopped cleanly\n\x00\xff garbage\n",
        'stopped cleanly\n["en", "../../../etc/passwd", true, [1, 2, 3, 4, 5]]\n',
        'stopped cleanly\n["de", "big.md", true, [1, 2, 3, 4, 5]]\n',  # (no vault de)
    ],
    ids=["garbage", "dot-dot", "another-vault"],
)
def test_a_damaged_mark_makes_the_start_check_whole(
    workspace: Path, env: dict[str, str], text: str
) -> None:
    refused_then_stopped(workspace, env)
    mark(workspace).write_text(text)
    server = start(workspace, env)
    try:
        wait_for(lambda: FULL_CHECK in server.log(), 60, what="the full check")
        assert "could not be read whole" in server.log()
    finally:
        stop(server)
    assert mark(workspace).exists()


def test_the_mark_holds_one_json_line_a_refused_file(workspace: Path, env: dict) -> None:
    """(its form, for the reader's tests: ``tests/test_clean_mark.py``)"""
    refused_then_stopped(workspace, env)
    first, *lines = mark(workspace).read_text().splitlines()
    assert first == "stopped cleanly"
    [(lang, path, unknown, identity)] = [json.loads(line) for line in lines]
    info = (vault(workspace) / "big.md").stat()
    assert (lang, path, unknown) == ("en", "big.md", True)
    assert identity == [info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns]
