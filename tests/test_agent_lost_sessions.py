"""Long-held agent clients against a real ``indexer serve`` whose MCP sessions end: the
server's idle timeout (``INDEXER_SESSION_IDLE_TIMEOUT``, 1 s here) and restarts.

Against this indexer the client speaks MCP 2026-07-28, which has no sessions (no
``Mcp-Session-Id``): an idle timeout or a restart on the same port has nothing of it to
end, and its next call just works. It falls back to the 2025 protocol, which has
sessions, when the server refuses its ``server/discover`` probe (other than as busy: a
busy indexer's 503 ``unavailable`` made it fall back too, until connecting learned to
wait for a place), and the connection keeps that session for its whole life. Its open
event stream (GET) keeps it from idling out, but after a restart on the same port, or
once the server ended it (as its idle timeout ends one), every call failed as "indexer
offline" ("Session not found", HTTP 404): now the client connects again, once, and calls
again. The server refuses such a request before any tool sees it, so even a write is
made once.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from collections.abc import Iterator
from datetime import UTC
from pathlib import Path
from typing import Any

import httpx2
import pytest
from fastmcp import Client
from fastmcp.client.transports import StreamableHttpTransport
from helpers.indexer_process import RunningIndexer, start_indexer, vault_dir
from helpers.memory_tool import outcome

from agent_client import VaultMemoryTool
from agent_client.connection import VaultSession, open_session
from agent_client.discovery import discover
from agent_client.notices import CollectingNoticeSink
from agent_client.settings import ClientSettings
from agent_client.writer import MemoryWriter
from shared.models import MemoryEntry

IDLE = 1.0  # the server's session idle timeout here, in seconds
PAST_IDLE = IDLE + 1.5
ENV = {"INDEXER_SESSION_IDLE_TIMEOUT": str(IDLE), "INDEXER_SESSION_HANDSHAKE_TIMEOUT": "1"}


def free_port() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return str(sock.getsockname()[1])


class Indexer:
    """One ``indexer serve`` on a fixed port, restarted there at will."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.port = free_port()
        self.running: RunningIndexer = self._start()

    def _start(self) -> RunningIndexer:
        return start_indexer(self.workspace, "--port", self.port, env=ENV)

    def restart(self) -> None:
        url = self.running.url
        self.running.stop()
        self.running = self._start()
        assert self.running.url == url

    def stop(self) -> None:
        self.running.stop()


@pytest.fixture(scope="module")
def indexer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Indexer]:
    """The module's indexer (restarted by its tests; each writes notes of its own): one
    of each test's own was a start of 3-7 s at load, beside the restart that is the case."""
    served = Indexer(tmp_path_factory.mktemp("module") / "ws")
    try:
        yield served
    finally:
        served.stop()


def settings_of(indexer: Indexer) -> ClientSettings:
    return ClientSettings(workspace=indexer.workspace, tz=UTC)


def appended(indexer: Indexer, path: str, line: str) -> int:
    """How many times ``line`` is in the note ``path`` of the ``en`` vault."""
    return (vault_dir(indexer.running, "en") / path).read_text().count(line)


async def test_a_held_connection_outlives_the_idle_timeout_and_a_restart(
    indexer: Indexer,
) -> None:
    """``open_session`` (``mcp_vault_connection``) held while the indexer's session idle
    timeout passes, then while it restarts on the same port: each next call works."""
    async with open_session(settings_of(indexer)) as session:
        vault = session.vault("en")
        await vault.write("a.md", "# A\n")
        await asyncio.sleep(PAST_IDLE)
        assert (await vault.stat("a.md"))["exists"]
        await vault.append("a.md", "after the idle timeout\n")
        indexer.restart()
        assert (await vault.stat("a.md"))["exists"]
        await vault.append("a.md", "after the restart\n")
        assert not session.broken
    assert appended(indexer, "a.md", "after the idle timeout\n") == 1
    assert appended(indexer, "a.md", "after the restart\n") == 1


def memory(tool: VaultMemoryTool, **inp: Any) -> str:
    text, is_error = outcome(tool, inp)
    assert not is_error, text
    return str(text)


def test_the_writer_and_the_memory_tool_go_on_past_the_idle_timeout_and_a_restart(
    indexer: Indexer,
) -> None:
    """The Memory Writer and Claude's memory tool, each held with its connection (the
    writer lets its own go after 30 s without work: not reached here)."""
    settings = settings_of(indexer)
    sink = CollectingNoticeSink()
    writer = MemoryWriter(settings, sink)
    tool = VaultMemoryTool("en", settings=settings)

    def log(title: str) -> None:
        writer.submit([MemoryEntry("en", "event", title, f"{title} happened")])
        assert writer.flush(30)
        assert sink.notices[-1].ok, sink.notices[-1].error

    try:
        log("first")
        memory(tool, command="create", path="/memories/m.md", file_text="one\n")
        time.sleep(PAST_IDLE)
        log("after the idle timeout")
        memory(tool, command="str_replace", path="/memories/m.md", old_str="one", new_str="two")
        indexer.restart()
        log("after the restart")
        assert memory(tool, command="view", path="/memories/m.md").endswith("\ttwo\n     2\t")
        memory(tool, command="str_replace", path="/memories/m.md", old_str="two", new_str="three")
    finally:
        writer.close()
        tool.close()
    events = "".join(
        p.read_text() for p in (vault_dir(indexer.running, "en") / "events").rglob("*.md")
    )
    for title in ("first", "after the idle timeout", "after the restart"):
        assert events.count(f"- title: {title}\n") == 1, events


async def session_2025(settings: ClientSettings) -> tuple[VaultSession, Client[Any]]:
    """A connection on the 2025 protocol, as the agent client's own is when the server
    refused its ``server/discover`` probe (other than as busy); and its client (the one
    it begins with)."""
    endpoint = discover(settings.url_file, settings.token_file)
    client: Client[Any] = Client(StreamableHttpTransport(endpoint.url), mode="legacy")
    await client.__aenter__()
    return VaultSession(client, endpoint, settings.call_timeout, settings=settings), client


async def end_session(indexer: Indexer, client: Client[Any]) -> None:
    """End the client's session on the server's side as its idle timeout would (the
    library then discards it; the event stream the client holds open keeps the real
    timeout off)."""
    session_id = client.transport.get_session_id()
    assert session_id  # (the 2026 protocol has none)
    async with httpx2.AsyncClient() as http:
        answer = await http.delete(indexer.running.url, headers={"Mcp-Session-Id": session_id})
        assert answer.status_code == 200


@pytest.mark.parametrize("ending", ["restart", "ended"])
async def test_a_2025_session_the_server_forgot_is_opened_again(
    indexer: Indexer, ending: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The server answers 404 "Session not found" to a session it no longer has: the
    call is made again, once, on a new connection (one for the calls in flight). A write
    so refused never ran: it is made once."""
    settings = settings_of(indexer)
    session, first = await session_2025(settings)
    caplog.set_level(logging.INFO, logger="agent_client.connection")

    def said() -> list[str]:
        return [r.getMessage() for r in caplog.records if r.name == "agent_client.connection"]

    note = f"{ending}.md"
    try:
        vault = session.vault("en")
        await vault.write(note, "# B\n")
        assert "history" in await session.tool_names()
        if ending == "restart":
            indexer.restart()
        else:  # (its open event stream holds it past the idle timeout)
            await asyncio.sleep(PAST_IDLE)
            assert (await vault.stat(note))["exists"] and said() == []  # (the same session)
            await end_session(indexer, first)
        _, stat, _ = await asyncio.gather(
            vault.append(note, "appended\n", reason="its session was gone"),
            vault.stat(note),
            vault.find(path=""),
        )
        assert stat["exists"]
        assert (await vault.read(note))["content"].endswith("# B\nappended\n")
        assert not session.broken
        assert session.endpoint == discover(settings.url_file, settings.token_file)
    finally:
        await session.close()
    assert appended(indexer, note, "appended\n") == 1
    assert len(said()) == 1 and "lost this client's session: connected again" in said()[0]
