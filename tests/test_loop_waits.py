"""``read``, ``stat`` and ``search`` run on the server's event loop; one that would wait
or takes long moves to a thread. A lease another program keeps on a note (a file server
slow to give it back) made each read of it stall every client for ``LEASE_WAIT`` (2 s),
and a stat of a multi-GiB file for the seconds its hash took."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from fastmcp import Client
from fastmcp.exceptions import ToolError
from helpers.history import vault_with_history
from helpers.indexer_process import RunningIndexer, vault_dir

from indexer.index.loop_bound import bounded_on_loop
from indexer.index.service import NoteIndex
from indexer.sqlite_lib import sqlite3  # (the module the index uses: its errors are caught)
from indexer.vault.fsops import etag_of
from indexer.vault.no_wait import (
    Abandoned,
    TookLong,
    WouldWait,
    abandoned_when,
    may_take_long,
    without_waiting,
)
from indexer.vault.vault import Vault
from indexer.web.loop_calls import on_loop_unless_waiting
from shared.workspace import Workspace

LIMIT = 4096


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Vault]:
    with vault_with_history(tmp_path, LIMIT) as made:
        yield made


@contextlib.contextmanager
def write_lease(path: Path) -> Iterator[None]:
    """Another program's write lease on ``path``, kept however it is asked back (every
    other open of the file waits for it, up to the kernel's lease-break time)."""
    before = signal.signal(signal.SIGIO, signal.SIG_IGN)  # (the ask: it would kill us)
    fd = os.open(path, os.O_WRONLY)
    try:
        try:
            fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_WRLCK)
        except OSError as err:
            pytest.skip(f"no file lease here: {err}")
        yield
    finally:
        os.close(fd)
        signal.signal(signal.SIGIO, before)


def test_a_large_file_to_hash_or_a_version_moves_off_the_loop(vault: Vault) -> None:
    root = vault.sandbox.workspace.vault_dir("en")
    root.mkdir(parents=True)
    big = b"a line of a log\n" * LIMIT  # 16 times the limit
    (root / "big.log.txt").write_bytes(big)
    vault.write("en", "small.md", "small\n")
    with without_waiting():
        assert vault.read("en", "small.md")["content"].endswith("\nsmall\n")  # on the loop
        assert vault.stat("en", "small.md")["type"] == "file"
        with pytest.raises(WouldWait):
            vault.stat("en", "big.log.txt")
        with pytest.raises(WouldWait):
            vault.read("en", "small.md", version=1)
    assert vault.stat("en", "big.log.txt")["etag"] == etag_of(big)  # on a thread: whole
    assert vault.read("en", "small.md", version=1)["content"].endswith("\nsmall\n")


def test_a_leased_note_moves_off_the_loop_at_once(vault: Vault) -> None:
    vault.write("en", "leased.md", "held\n")
    with write_lease(vault.sandbox.workspace.vault_dir("en") / "leased.md"):
        started = time.monotonic()
        with without_waiting(), pytest.raises(WouldWait):
            vault.read("en", "leased.md")
        assert time.monotonic() - started < 1  # (the thread then waits LEASE_WAIT: 2 s)
    assert vault.read("en", "leased.md")["content"].endswith("\nheld\n")


@pytest.mark.e2e
async def test_a_leased_note_stalls_no_other_client(indexer_server: RunningIndexer) -> None:
    """While an MCP ``read`` and a REST ``stat`` of a leased note wait for the lease,
    other clients' reads over MCP and REST are answered."""
    root = vault_dir(indexer_server, "en")
    root.mkdir(parents=True, exist_ok=True)
    (root / "leased.md").write_text("held by a file server\n")
    (root / "other.md").write_text("free\n")
    api = indexer_server.url.removesuffix("/mcp") + "/api/v1"
    done: dict[str, float] = {}

    def rest(name: str, path: str) -> int:
        with httpx2.Client(base_url=api, timeout=30) as http:
            status = http.get(path).status_code
        done[name] = time.monotonic()
        return status

    async def mcp(client: Client, name: str, path: str) -> str:
        try:
            result = await client.call_tool("read", {"lang": "en", "path": path})
            answer = str(result.data["content"])
        except ToolError as err:
            answer = str(err)
        done[name] = time.monotonic()
        return answer

    async with Client(indexer_server.url) as first, Client(indexer_server.url) as second:
        await second.call_tool("read", {"lang": "en", "path": "other.md"})
        with write_lease(root / "leased.md"):
            waiting = [
                asyncio.create_task(mcp(first, "mcp leased", "leased.md")),
                asyncio.create_task(asyncio.to_thread(rest, "rest leased", "/en/stat/leased.md")),
            ]
            await asyncio.sleep(0.3)
            free = await mcp(second, "mcp other", "other.md")
            free_status = await asyncio.to_thread(rest, "rest other", "/en/notes/other.md")
            leased, leased_status = await asyncio.gather(*waiting)
    assert (free, free_status) == ("free\n", 200)
    assert leased.startswith("conflict:") and leased_status == 412
    assert max(done["mcp other"], done["rest other"]) < min(done["mcp leased"], done["rest leased"])


# -- search on the loop -------------------------------------------------------------------


def test_a_statement_past_the_loops_time_is_interrupted_there_only() -> None:
    """On the loop, a long statement stops at the call's time there (``TookLong``); on a
    thread it runs to its end."""
    conn = sqlite3.connect(":memory:")
    long = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)"
    sql = f"{long} SELECT count(*) FROM n"
    started = time.perf_counter()
    with without_waiting(0.01), pytest.raises(TookLong), bounded_on_loop(conn):
        conn.execute(sql, (10**9,)).fetchone()
    assert time.perf_counter() - started < 1  # (the whole count takes minutes)
    with without_waiting(0.01), bounded_on_loop(conn):  # a quick one is answered
        assert conn.execute(sql, (100,)).fetchone() == (100,)
    with bounded_on_loop(conn):  # on a thread: no bound
        assert conn.execute(sql, (200_000,)).fetchone() == (200_000,)
    assert conn.execute(sql, (10,)).fetchone() == (10,)  # (no handler left behind)


async def test_a_statement_on_a_thread_stops_once_its_caller_gave_up() -> None:
    """A search of many words whose client timed out ran on to its end on its thread
    (eight of them held the CPU for 7 s, every other client slowed): the cancelled call
    tells its thread, and the statement stops at SQLite's next progress check."""
    long = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)"
    ended: list[tuple[str, float]] = []

    def count(lang: str, upto: int) -> int:
        conn = sqlite3.connect(":memory:")
        try:
            with bounded_on_loop(conn):
                return int(conn.execute(f"{long} SELECT count(*) FROM n", (upto,)).fetchone()[0])
        except BaseException as exc:
            ended.append((type(exc).__name__, time.perf_counter()))
            raise
        finally:
            conn.close()

    began = time.perf_counter()
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(on_loop_unless_waiting(count, lang="aa", upto=10**10), 0.3)
    deadline = time.perf_counter() + 5
    while len(ended) < 2 and time.perf_counter() < deadline:  # (the loop's try, the thread's)
        await asyncio.sleep(0.01)
    assert [name for name, _ in ended] == ["TookLong", "Abandoned"]
    assert ended[-1][1] - began < 1.5  # (the whole count takes minutes)
    # a call nobody gave up on runs to its end on the thread
    assert await on_loop_unless_waiting(count, lang="aa", upto=300_000) == 300_000


def test_a_search_whose_caller_gave_up_stops_before_its_snippets(
    ws: Workspace, index: NoteIndex
) -> None:
    """A page's snippets (up to half a second of CPU) were made after the search's
    request was cancelled: the thread now stops at the next one (``may_take_long``)."""
    root = ws.vault_dir("en")
    root.mkdir(parents=True)
    for n in range(20):
        (root / f"n{n}.md").write_text(f"# Note {n}\n\nthe giraffe number {n}\n")
    index.reconcile()
    gone = threading.Event()
    with abandoned_when(gone):
        assert index.search("en", "giraffe")["total"] == 20  # (nobody gave up)
        gone.set()
        with pytest.raises(Abandoned):
            index.search("en", "giraffe")
        with pytest.raises(Abandoned):  # (recall's loops mark their steps so too)
            may_take_long()
    may_take_long()  # (outside: nothing to give up)


def test_a_search_moves_off_the_loop_for_appends_to_index_or_when_it_takes_long(
    ws: Workspace, index: NoteIndex
) -> None:
    root = ws.vault_dir("en")
    root.mkdir(parents=True)
    for n in range(300):  # (the ranking alone runs past SQLite's first progress check)
        (root / f"n{n}.md").write_text(f"# Note {n}\n\nthe giraffe number {n}\n")
    index.reconcile()
    with without_waiting(5):  # on the loop: answered there (given the time, on any machine)
        assert index.search("en", "giraffe")["total"] == 300
    note = root / "n1.md"
    note.write_text(note.read_text() + "an okapi too\n")
    index.note_appended("en", "n1.md", etag_of(note.read_bytes()))
    with without_waiting(5), pytest.raises(WouldWait):  # the append is indexed first
        index.search("en", "okapi")
    assert [r["path"] for r in index.search("en", "okapi")["results"]] == ["n1.md"]
    with without_waiting(0), pytest.raises(TookLong):  # its time on the loop is over
        index.search("en", "giraffe")
    assert index.search("en", "giraffe")["total"] == 300  # (its reader is left as it was)
    # A prefix's walk through FTS5's words is one step no deadline stops: to a thread
    for prefix in ("giraf*", "長"):
        with without_waiting(5), pytest.raises(WouldWait):
            index.search("en", prefix)
    assert index.search("en", "giraf*")["total"] == 300


async def test_a_tool_that_took_long_goes_to_a_thread_until_quick_there_a_few_times() -> None:
    """After a call gave up on the loop, the next of its tool and lang go to a thread at
    once (not every call paying its time on the loop again: at 100,000 notes most
    searches take long), until some in a row were quick there."""
    loop_thread = threading.current_thread()
    where: list[str] = []

    def work(lang: str, busy: float) -> str:
        on_loop = threading.current_thread() is loop_thread
        where.append("loop" if on_loop else "thread")
        ends = time.thread_time() + busy
        while time.thread_time() < ends:  # (CPU: what a search spends)
            may_take_long()
        return lang

    assert await on_loop_unless_waiting(work, lang="xx", busy=0.05) == "xx"
    assert where == ["loop", "thread"]
    await on_loop_unless_waiting(work, lang="yy", busy=0)
    assert where[2:] == ["loop"]  # another lang is tried on the loop
    for busy in (0, 0, 0.05, 0, 0):  # a long one there starts the count again
        await on_loop_unless_waiting(work, lang="xx", busy=busy)
    assert where[3:] == ["thread"] * 5
    await on_loop_unless_waiting(work, lang="xx", busy=0)
    await on_loop_unless_waiting(work, lang="xx", busy=0)
    assert where[8:] == ["thread", "loop"]  # three quick in a row: back to the loop
