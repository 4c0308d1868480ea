"""``AsyncVaultMemoryTool`` used from one event loop after another (``asyncio.run``
again, as a script calling it once per turn does), against a real ``indexer serve``.

On the 2025 protocol (the client's when the server refuses its ``server/discover``
probe, as a server of that protocol does: here a stand-in for the indexer's port,
``helpers.mcp_proxy``, refuses it and forwards the rest) the connection holds an MCP
session on the server. The tool dropped the old loop's connection without ending it,
and the server kept that session for its idle timeout, counted against its cap
(``INDEXER_MAX_SESSIONS``, 1 here: the next loop's session was refused as "Too many
open sessions"). Now the new loop ends it first, with the DELETE the MCP client sends
when it closes. The server's count is seen at its cap: a session opened beside the
tool's is refused while the tool holds one, and admitted once it holds none.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from datetime import UTC
from pathlib import Path
from typing import Any

import httpx2
import pytest
from helpers.indexer_process import RunningIndexer, start_indexer, vault_dir
from helpers.mcp_proxy import McpProxy, Reply, Seen
from helpers.raw_mcp import HEADERS, initialize

from agent_client import AsyncVaultMemoryTool, ClientSettings

ENV = {"INDEXER_MAX_SESSIONS": "1", "INDEXER_SUMMARIES": "0"}
NO_DISCOVER = {
    "jsonrpc": "2.0",
    "id": None,
    "error": {"code": -32601, "message": "Method not found"},
}


def as_a_2025_server(seen: Seen) -> Reply | None:
    """Refuse the 2026 protocol's probe, as a server of the 2025 protocol does."""
    if seen.method != "server/discover":
        return None
    return Reply(400, json.dumps(NO_DISCOVER).encode(), {"content-type": "application/json"})


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RunningIndexer]:
    running = start_indexer(tmp_path / "ws", env=ENV)
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
def proxy(server: RunningIndexer) -> Iterator[McpProxy]:
    """The stand-in, named by the URL file (written as the server writes it: a rename)."""
    served = McpProxy(server.url, answer=as_a_2025_server, forward_deletes=True)
    (server.workspace / "url.tmp").write_text(served.url + "\n")
    os.replace(server.workspace / "url.tmp", server.workspace / "indexer.mcp.url")
    try:
        yield served
    finally:
        served.stop()


def opens_a_session(server: RunningIndexer) -> bool:
    """Whether the server admits one more session (then ended again): at its cap of one,
    only while no other session is open."""
    answer = httpx2.post(server.url, json=initialize("counter"), headers=HEADERS, timeout=30)
    session = answer.headers.get("mcp-session-id")
    if session:
        httpx2.delete(server.url, headers={"Mcp-Session-Id": session}, timeout=30)
    assert answer.status_code in (200, 503), answer.text
    assert answer.status_code == 200 or "Too many open sessions" in answer.text
    return answer.status_code == 200


def test_a_new_loop_ends_the_old_loops_session(server: RunningIndexer, proxy: McpProxy) -> None:
    settings = ClientSettings(workspace=server.workspace, tz=UTC)
    tool = AsyncVaultMemoryTool("en", folder="loops", settings=settings)

    def run(inp: dict[str, Any]) -> Any:
        return asyncio.run(tool.call(inp))

    create = {"command": "create", "path": "/memories/a.md", "file_text": "one\n"}
    assert run(create) == "File created successfully at: /memories/a.md"
    assert any(s.method == "initialize" for s in proxy.seen)  # (on the 2025 protocol)
    assert not opens_a_session(server)  # the tool's session holds the one place
    edit = {"command": "str_replace", "path": "/memories/a.md", "old_str": "one", "new_str": "two"}
    assert run(edit).startswith("The memory file has been edited.")  # (was: no place)
    assert sum(1 for s in proxy.seen if s.http_method == "DELETE") == 1
    assert not opens_a_session(server)  # one session open: the second loop's, not two
    asyncio.run(tool.aclose())  # (from a third loop: the second's session ends too)
    assert sum(1 for s in proxy.seen if s.http_method == "DELETE") == 2
    assert opens_a_session(server)
    assert (vault_dir(server, "en") / "loops" / "a.md").read_text().endswith("two\n")


def test_a_session_of_an_indexer_that_restarted_is_not_deleted_there(
    server: RunningIndexer, proxy: McpProxy
) -> None:
    """The URL file names another start of the indexer (or none): the old session went
    with the old start, and the old port, whoever holds it now, is sent nothing."""
    settings = ClientSettings(workspace=server.workspace, tz=UTC)
    tool = AsyncVaultMemoryTool("en", folder="moved", settings=settings)
    create = {"command": "create", "path": "/memories/b.md", "file_text": "b\n"}
    assert asyncio.run(tool.call(create)).startswith("File created")
    url_file = server.workspace / "indexer.mcp.url"
    (server.workspace / "url.tmp").write_text(url_file.read_text())
    os.replace(server.workspace / "url.tmp", url_file)  # (a new start: a new file)
    asyncio.run(tool.aclose())
    assert not any(s.http_method == "DELETE" for s in proxy.seen)
