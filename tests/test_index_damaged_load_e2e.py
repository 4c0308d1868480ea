"""An index damaged while 8 clients write and search, and the server killed (``kill -9``)
while it rebuilds it after starting itself again (``late_check``, ``start_again``): the
next start rebuilds it once, serves without starting again (no loop), and no write a
client was told was made is lost; the index then equals a rebuild from the vaults.
"""

from __future__ import annotations

import asyncio
import random
import signal
from pathlib import Path

import fastmcp
import pytest
from helpers.indexer_process import spawn_indexer, start_indexer, wait_for
from helpers.rebuilt_index import check_index_is_a_rebuild
from test_index_damaged_serving_e2e import NO_SUMMARIES, NOTES, caught_up, cut_in_half, notes

from shared.workspace import Workspace

CLIENTS = 8


async def client_loop(workspace: Path, n: int, stop: asyncio.Event, made: dict[str, str]) -> int:
    """Write new notes and search, whatever the server's state; the writes it answered
    are kept in ``made``; how many calls failed."""
    failed = 0
    i = 0
    while not stop.is_set():
        try:
            url = (workspace / "indexer.mcp.url").read_text().strip()
            async with fastmcp.Client(url, timeout=10) as client:
                while not stop.is_set():
                    rel, text = f"c{n}/w{i}.md", f"# Client {n} write {i}\n\nplum {n} {i}\n"
                    i += 1
                    await client.call_tool("write", {"lang": "en", "path": rel, "content": text})
                    made[rel] = text
                    await client.call_tool(
                        "search", {"lang": "en", "query": f"plum {n}"}, raise_on_error=False
                    )
        except Exception:
            failed += 1
            await asyncio.sleep(0.05)
    return failed


async def damaged_under_load(workspace: Path, seed: int) -> tuple[dict[str, str], str]:
    """The server's log up to its kill during the rebuild, and the writes answered."""
    rng = random.Random(seed)
    proc = spawn_indexer(workspace, env=NO_SUMMARIES)
    log_path: Path = proc.log_path  # type: ignore[attr-defined]
    made: dict[str, str] = {}
    stop = asyncio.Event()
    try:
        await asyncio.to_thread(
            wait_for, lambda: " serving " in log_path.read_text(), 60, 0.05, "serving"
        )
        url = (workspace / "indexer.mcp.url").read_text().strip()
        await asyncio.to_thread(wait_for, lambda: caught_up(url, workspace), 60, 0.05, "index")
        clients = [
            asyncio.create_task(client_loop(workspace, n, stop, made)) for n in range(CLIENTS)
        ]
        await asyncio.sleep(1.5)
        cut_in_half(workspace)
        await asyncio.to_thread(
            wait_for,
            lambda: "recreating it from the vaults" in log_path.read_text(),
            60,
            0.002,
            "the rebuild",
        )
        await asyncio.sleep(rng.uniform(0.0, 0.3))  # (the rebuild: ~0.7 s)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        await asyncio.sleep(0.5)  # (the clients meet no server)
        server = start_indexer(workspace, env=NO_SUMMARIES, timeout=60)
        try:
            await asyncio.sleep(3)  # (the clients write and search again)
            stop.set()
            await asyncio.gather(*clients)
        finally:
            assert server.stop() == 0
        assert server.log().count(" serving ") == 1, server.log()
        assert "starting again" not in server.log(), server.log()
        return made, log_path.read_text()
    finally:
        stop.set()
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.e2e
@pytest.mark.timeout(300)
@pytest.mark.parametrize("seed", range(2))
async def test_a_damaged_index_killed_in_its_rebuild_loses_no_write(
    tmp_path: Path, seed: int
) -> None:
    workspace = tmp_path / "ws"
    vault = notes(workspace)
    made, log = await damaged_under_load(workspace, seed)
    assert log.count(" serving ") <= 2, log
    assert len(made) > CLIENTS, "the clients wrote too little to count"
    lost = {rel for rel, text in made.items() if not (vault / rel).is_file()}
    assert not lost, sorted(lost)[:5]
    changed = {rel: (text, (vault / rel).read_text()) for rel, text in made.items()}
    changed = {rel: pair for rel, pair in changed.items() if not pair[1].endswith(pair[0])}
    assert not changed, list(changed.items())[:3]
    assert len(list(vault.glob("n*.md"))) == NOTES
    assert not (Workspace(workspace).state_dir / "check-index").exists()
    check_index_is_a_rebuild(workspace, tmp_path / "scratch")
