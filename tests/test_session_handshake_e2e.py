"""Abandoned half-open MCP sessions (2025 protocol) against a real ``indexer serve``.

Clients that time out while connecting send ``initialize`` and nothing more: no
``notifications/initialized``, no DELETE. The server kept each such session for its idle
timeout (5 minutes), so ``INDEXER_MAX_SESSIONS`` of them refused every real client
("Too many open sessions") for that long; and a request reaching a session as it
closed was logged as two ``ClosedResourceError`` tracebacks. Here the cap is 5 and a
session gets 1 s after its ``initialize`` to send anything else.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx2
import pytest
from helpers.indexer_process import RunningIndexer, start_indexer
from helpers.raw_mcp import HEADERS, initialize

MAX_SESSIONS = 5
HANDSHAKE = 1.0
ENV = {
    "INDEXER_MAX_SESSIONS": str(MAX_SESSIONS),
    "INDEXER_SESSION_HANDSHAKE_TIMEOUT": str(HANDSHAKE),
    "INDEXER_SESSION_IDLE_TIMEOUT": "300",
}
INITIALIZE = initialize("abandoned")
STATUS = {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "status", "arguments": {}}}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RunningIndexer]:
    running = start_indexer(tmp_path / "ws", env=ENV)
    try:
        yield running
    finally:
        running.stop()


async def initialize(http: httpx2.AsyncClient, url: str) -> tuple[int, str | None]:
    """Open a session and abandon it: (status, its id)."""
    answer = await http.post(url, json=INITIALIZE, headers=HEADERS)
    return answer.status_code, answer.headers.get("mcp-session-id")


async def initialize_and_vanish(url: str) -> None:
    """Send ``initialize`` and close the connection before the answer."""
    parts = urlsplit(url)
    body = json.dumps(INITIALIZE).encode()
    head = "".join(f"{name}: {value}\r\n" for name, value in HEADERS.items())
    request = (
        f"POST {parts.path} HTTP/1.1\r\nHost: {parts.netloc}\r\n{head}"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    _, writer = await asyncio.open_connection(parts.hostname, parts.port)
    writer.write(request)
    await writer.drain()
    writer.transport.abort()


async def calls_as_it_deletes(http: httpx2.AsyncClient, url: str) -> None:
    """A session whose calls are in flight as its client deletes it (a client giving up
    while it connects): the MCP library logged each such call as a traceback."""
    _, session = await initialize(http, url)
    assert session
    headers = {**HEADERS, "Mcp-Session-Id": session}
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    await http.post(url, json=initialized, headers=headers)
    calls = [http.post(url, json={**STATUS, "id": n}, headers=headers) for n in range(2, 5)]
    answers = await asyncio.gather(
        *calls, http.delete(url, headers=headers), return_exceptions=True
    )
    for answer in answers:  # (before: a connection cut after a traceback, a ReadError)
        assert isinstance(answer, httpx2.Response) and answer.status_code in {200, 404, 500}


async def call_status(server: RunningIndexer) -> None:
    async with server.client(mode="legacy", timeout=5, init_timeout=5) as client:
        assert (await client.call_tool("status", {})).structured_content["langs"] is not None


async def test_abandoned_sessions_do_not_lock_out_real_clients(server: RunningIndexer) -> None:
    url = server.url
    async with server.client(mode="legacy", timeout=5) as in_use:  # opened first, kept
        await in_use.call_tool("status", {})
        async with httpx2.AsyncClient(timeout=5) as http:
            await asyncio.gather(*(initialize(http, url) for _ in range(4 * MAX_SESSIONS)))
            await asyncio.gather(*(initialize_and_vanish(url) for _ in range(MAX_SESSIONS)))
            await asyncio.gather(*(initialize(http, url) for _ in range(MAX_SESSIONS)))
        # A real client gets in at once: the session that waited longest for its second
        # request gives its place up (before: "Too many open sessions" for 300 s)
        started = time.monotonic()
        await call_status(server)
        assert time.monotonic() - started < 3
        await in_use.call_tool("status", {})  # the session in use all along is left alone
        async with httpx2.AsyncClient(timeout=5) as http:
            for _ in range(3):
                await asyncio.gather(*(calls_as_it_deletes(http, url) for _ in range(4)))
    server.stop()
    log = server.log()
    assert "Traceback" not in log, log
    assert "ClosedResourceError" not in log, log


async def test_a_session_silent_after_initialize_is_closed_soon(server: RunningIndexer) -> None:
    async with (
        server.client(mode="legacy", timeout=5) as in_use,
        httpx2.AsyncClient(timeout=5) as http,
    ):
        await in_use.call_tool("status", {})
        status, session = await initialize(http, server.url)
        assert status == 200 and session
        await asyncio.sleep(HANDSHAKE + 1.0)
        listed = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        headers = {**HEADERS, "Mcp-Session-Id": session}
        answer = await http.post(server.url, json=listed, headers=headers)
        assert answer.status_code == 404, answer.text[:200]  # (before: kept for 300 s)
        await in_use.call_tool("status", {})  # a session in use outlives the handshake time
