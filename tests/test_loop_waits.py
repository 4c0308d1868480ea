"""``read`` and ``stat`` run on the server's event loop; one that would wait moves to a
thread. A lease another program keeps on a note (a file server slow to give it back)
made each read of it stall every client for ``LEASE_WAIT`` (2 s), and a stat of a
multi-GiB file for the seconds its hash took."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from fastmcp import Client
from fastmcp.exceptions import ToolError
from helpers.history import vault_with_history
from helpers.indexer_process import RunningIndexer, vault_dir

from indexer.vault.fsops import etag_of
from indexer.vault.no_wait import WouldWait, without_waiting
from indexer.vault.vault import Vault

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
