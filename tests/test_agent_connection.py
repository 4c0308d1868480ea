"""The agent client's MCP connection against a real ``indexer serve``: typed tools,
typed errors, prompts, offline detection within the time bound, token discovery."""

from __future__ import annotations

import asyncio
import base64
import importlib
import itertools
import logging
import socket
import time
from datetime import UTC
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx2
import pytest
from helpers.indexer_process import RunningIndexer, start_indexer

from agent_client.connection import mcp_vault_connection, open_session
from agent_client.sessions import SessionKeeper
from agent_client.settings import ClientSettings
from agent_client.unreachable import BUSY_PAUSES
from agent_client.vault import PROMPT_NAMES
from shared.errors import (
    ConflictError,
    ForbiddenPathError,
    IndexerOfflineError,
    InvalidArgumentError,
    NotFoundError,
)
from shared.workspace import OVERVIEW_FILE

_langs = itertools.count()


@pytest.fixture
def settings(server: RunningIndexer) -> ClientSettings:
    return ClientSettings(workspace=server.workspace, tz=UTC)


@pytest.fixture
def lang() -> str:
    return f"en-c{next(_langs):03d}"


def dead_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_typed_tools_round_trip(settings: ClientSettings, lang: str) -> None:
    async with mcp_vault_connection(lang, settings) as vault:
        written = await vault.write("items/a.md", "# A\n\nalpha\n", if_match="")
        assert written["created"] and written["path"] == "items/a.md"
        read = await vault.read("items/a.md")
        assert read["etag"] == written["etag"] and "alpha" in read["content"]
        assert "id:" in read["content"]  # normalized by the server
        stat = await vault.stat("items/a.md")
        assert stat["exists"] and stat["type"] == "file" and stat["etag"] == read["etag"]
        appended = await vault.append("items/a.md", "beta\n")
        assert appended["etag"] != read["etag"]
        assert (await vault.find(path="items"))["paths"] == ["items/a.md"]
        grep = await vault.grep("beta", path="items")
        assert [(m["path"], m["text"]) for m in grep["matches"]] == [("items/a.md", "beta")]
        assert (await vault.delete("items/a.md"))["deleted"]
        assert not (await vault.stat("items/a.md"))["exists"]
        status = await vault.status()
        assert "version" in status


async def test_refusals_become_typed_errors(settings: ClientSettings, lang: str) -> None:
    async with mcp_vault_connection(lang, settings) as vault:
        with pytest.raises(NotFoundError):
            await vault.read("items/none.md")
        with pytest.raises(ForbiddenPathError):
            await vault.read("../../secret.md")
        await vault.write("items/b.md", "# B\n")
        with pytest.raises(ConflictError):
            await vault.write("items/b.md", "# B2\n", if_match="")
        with pytest.raises(ConflictError):
            await vault.write("items/b.md", "# B2\n", if_match="0" * 32)
        assert not vault.session.broken  # a refusal is not a lost connection


async def test_prompts_and_tool_list(settings: ClientSettings) -> None:
    async with open_session(settings) as session:
        names = await session.tool_names()
        assert {"read", "write", "stat", "append", "find", "grep", "delete"} <= names
        assert await session.vault("en").has_search() == ("search" in names)
        for name in PROMPT_NAMES:
            text = await session.prompt_text(name)
            assert text.strip() == Path(f"prompts/{name}.md").read_text(encoding="utf-8").strip()


async def test_no_url_file_is_offline_at_once(tmp_path: Path) -> None:
    started = time.monotonic()
    with pytest.raises(IndexerOfflineError, match="no indexer URL file"):
        async with mcp_vault_connection("en", ClientSettings(workspace=tmp_path)):
            pass
    assert time.monotonic() - started < 0.5


async def test_dead_port_is_offline_within_the_bound(tmp_path: Path) -> None:
    """The connect's bound, not the MCP client's first import (done once a process, off
    the event loop: 2.2 s on a busy machine, when it is a worker's first test)."""
    importlib.import_module("agent_client.mcp_client")
    (tmp_path / "indexer.mcp.url").write_text(f"http://127.0.0.1:{dead_port()}/mcp\n")
    settings = ClientSettings(workspace=tmp_path, connect_timeout=1.0)
    started = time.monotonic()
    with pytest.raises(IndexerOfflineError, match="cannot connect"):
        async with open_session(settings):
            pass
    assert time.monotonic() - started < 1.5


async def test_token_discovery_and_server_gone_mid_session(tmp_path: Path) -> None:
    running = start_indexer(tmp_path / "ws", "--token", "tok-" + "x" * 30)
    try:
        token_file = running.workspace / "indexer.mcp.token"
        settings = ClientSettings(workspace=running.workspace, connect_timeout=1.0)
        token = token_file.read_text()
        token_file.unlink()
        with pytest.raises(IndexerOfflineError, match=r"refuses no token \(.*is missing\)"):
            async with mcp_vault_connection("en", settings) as vault:
                await vault.stat("x.md")
        token_file.write_text(f"{token}\n# rotate monthly\n")  # the error quoted the header
        with pytest.raises(IndexerOfflineError, match=r"does not hold one token") as info:
            async with mcp_vault_connection("en", settings) as vault:
                await vault.stat("x.md")
        assert token.strip() not in str(info.value)
        token_file.write_text("wrong\n")  # it said "is `indexer serve` running?" of both
        with pytest.raises(IndexerOfflineError, match=r"answers but refuses its token"):
            async with mcp_vault_connection("en", settings) as vault:
                await vault.stat("x.md")
        token_file.write_text(token)
        async with open_session(settings) as session:
            vault = session.vault("en")
            assert not (await vault.stat("x.md"))["exists"]
            running.stop()
            started = time.monotonic()
            with pytest.raises(IndexerOfflineError):
                await vault.stat("x.md")
            assert time.monotonic() - started < 2.0
            assert session.broken
    finally:
        running.stop()


async def test_the_keeper_keeps_a_servers_tools_until_a_restart_on_the_same_port(
    tmp_path: Path,
) -> None:
    """A batch no longer asks for the tool list again (a round trip per batch of one);
    a server started again on the same port is a new instance all the same."""
    port = str(dead_port())
    running = start_indexer(tmp_path / "ws", "--port", port)
    keeper = SessionKeeper(ClientSettings(workspace=running.workspace, tz=UTC))
    try:
        await keeper.begin()
        first = await keeper.get()
        await first.vault("en").append("a.md", "one\n", reason="first")  # lists the tools
        await keeper.begin()
        assert await keeper.get() is first
        url = running.url
        running.stop()
        assert "history" in await first.tool_names()  # known: nothing asked of the server
        running = start_indexer(tmp_path / "ws", "--port", port)
        assert running.url == url
        await keeper.begin()
        again = await keeper.get()
        assert again is not first
        await again.vault("en").append("a.md", "two\n", reason="second")
        assert (
            (running.workspace / "memory/languages/en/vault/a.md")
            .read_text()
            .endswith("one\ntwo\n")
        )
    finally:
        await keeper.close()
        running.stop()


async def test_a_busy_server_is_asked_again_and_every_call_is_answered(
    tmp_path: Path,
) -> None:
    """At its cap of requests in flight the server refuses at the door (503, a JSON-RPC
    error saying ``unavailable``, the request unread); the client waits and calls again,
    so 16 calls at once on a cap of 2 all get their answers, each call made once."""
    running = start_indexer(tmp_path / "ws", env={"INDEXER_MAX_REQUESTS": "2"})
    try:
        settings = ClientSettings(workspace=running.workspace, tz=UTC)
        async with open_session(settings) as session:
            vault = session.vault("en")
            for n in range(60):
                await vault.write(f"items/n{n}.md", f"# n{n}\n" + "lorem ipsum dolor " * 200)

            async def append(k: int) -> None:
                await vault.append(f"items/n{k}.md", f"appended {k}\n")
                assert (await vault.grep("lor.*em", limit=5))["matches"]

            await asyncio.gather(*(append(k) for k in range(16)))
        assert "refused a request" in running.log()  # the cap was reached
        root = running.workspace / "memory/languages/en/vault/items"
        for k in range(16):
            assert (root / f"n{k}.md").read_text().count(f"appended {k}\n") == 1
    finally:
        running.stop()


# One request in flight at most; a body may trickle in (by default one under 16 KB a
# second is cut after 5 s, which would free the place a test holds)
ONE_PLACE = {"INDEXER_MAX_REQUESTS": "1", "INDEXER_MIN_BODY_RATE": "0"}


def held_request(url: str) -> socket.socket:
    """A request to ``url`` kept in flight until the socket closes: its headers and the
    first byte of its body sent, the rest never."""
    parts = urlsplit(url)
    sock = socket.create_connection((parts.hostname, parts.port), timeout=10)
    sock.sendall(
        f"POST {parts.path} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
        "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{".encode()
    )
    return sock


async def hold_the_only_place(running: RunningIndexer) -> socket.socket:
    """A request that holds the place of a server capped at one request in flight, once
    the server refuses others (503 ``unavailable``)."""
    held = held_request(running.url)
    async with httpx2.AsyncClient() as http:
        for _ in range(250):  # (the server takes the held request in as it reads it)
            answer = await http.post(running.url, json={"jsonrpc": "2.0", "id": 1})
            if answer.status_code == 503 and "unavailable:" in answer.text:
                return held
            await asyncio.sleep(0.02)
    held.close()
    raise AssertionError("the held request never took the server's place")


async def free_once_refused(running: RunningIndexer, held: socket.socket) -> None:
    """Close ``held`` (free the place) once the server has refused one request more than
    it had (each refusal is a line of its log, the first five a minute)."""
    refused = running.log().count("refused a request")
    while running.log().count("refused a request") == refused:
        await asyncio.sleep(0.01)
    held.close()


async def test_connecting_to_a_busy_server_waits_and_ends_on_the_current_protocol(
    tmp_path: Path,
) -> None:
    """A server whose one place is taken refuses the client's ``server/discover`` probe
    503 ``unavailable``, and its ``initialize`` (the 2025 protocol's) as well: connecting
    failed at once as "cannot connect to the indexer" (or, the place freed in between,
    landed on the 2025 protocol, whose MCP session a restart loses). It now waits as a
    call does; once the place frees it connects, on the 2026 protocol."""
    running = start_indexer(tmp_path / "ws", env=ONE_PLACE)
    held = await hold_the_only_place(running)
    try:
        settings = ClientSettings(workspace=running.workspace, tz=UTC)
        freeing = asyncio.create_task(free_once_refused(running, held))
        started = time.monotonic()
        async with open_session(settings) as session:
            waited = time.monotonic() - started
            assert freeing.done()  # the server refused the client before it got in
            client = session._client  # (how it connected: no part of the session's API)
            assert client.transport.get_session_id() is None  # no Mcp-Session-Id
            assert client.protocol_version == "2026-07-28"
            assert client.initialize_result is None  # (the 2025 handshake's)
            written = await session.vault("en").write("a.md", "# A\n")
            assert written["created"]
        assert waited < sum(BUSY_PAUSES)
    finally:
        held.close()
        running.stop()


async def test_a_server_busy_past_the_pauses_is_offline_saying_so(tmp_path: Path) -> None:
    running = start_indexer(tmp_path / "ws", env=ONE_PLACE)
    held = await hold_the_only_place(running)
    try:
        settings = ClientSettings(workspace=running.workspace, tz=UTC)
        started = time.monotonic()
        with pytest.raises(IndexerOfflineError, match=r"stayed busy for 6\.05 s"):
            async with open_session(settings):
                pass
        assert sum(BUSY_PAUSES) <= time.monotonic() - started < sum(BUSY_PAUSES) + 2
    finally:
        held.close()
        running.stop()


async def test_a_connection_logs_no_request_lines_at_info(
    settings: ClientSettings, lang: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO):
        async with mcp_vault_connection(lang, settings) as vault:
            for _ in range(3):
                await vault.stat("items/a.md")
    assert [r.name for r in caplog.records] == []


async def seed_notes(settings: ClientSettings, lang: str, count: int, word: str) -> set[str]:
    async with mcp_vault_connection(lang, settings) as vault:
        for i in range(count):
            await vault.write(f"items/n{i:02d}.md", f"# Note {i}\n\n{word} number {i}\n")
    return {f"items/n{i:02d}.md" for i in range(count)}


async def test_search_offset_zero_is_not_sent(settings: ClientSettings, lang: str) -> None:
    paths = await seed_notes(settings, lang, 3, "zebra")
    async with mcp_vault_connection(lang, settings) as vault:
        result = await vault.search("zebra", limit=10, offset=0)
    assert {hit["path"] for hit in result["results"]} == paths


async def test_search_pages_with_offset(settings: ClientSettings, lang: str) -> None:
    paths = await seed_notes(settings, lang, 25, "giraffe")
    seen: list[str] = []
    async with mcp_vault_connection(lang, settings) as vault:
        for offset in (0, 10, 20):
            page = await vault.search("giraffe", limit=10, offset=offset)
            assert page.get("total", 25) == 25  # total is optional ("when cheap")
            seen += [hit["path"] for hit in page["results"]]
    assert len(seen) == 25 and set(seen) == paths


async def test_recall_on_the_handle(settings: ClientSettings, lang: str) -> None:
    async with mcp_vault_connection(lang, settings) as vault:
        await vault.write("items/orbits.md", "# Orbits\n\nPhobos orbits Mars.\n", if_match="")
        recalled = await vault.recall("what orbits Mars?", budget_tokens=300)
        assert recalled["tokens"] <= 300
        assert "Phobos orbits Mars." in recalled["block"]
        sources = {s["path"] for s in recalled["sources"]}
        assert {p for p in sources if not p.endswith(OVERVIEW_FILE)} == {"items/orbits.md"}
        with pytest.raises(InvalidArgumentError):
            await vault.recall("Mars", budget_tokens=10)


async def test_history_methods_on_the_handle(settings: ClientSettings, lang: str) -> None:
    async with mcp_vault_connection(lang, settings) as vault:
        assert await vault.has_history()
        first = await vault.write("items/h.md", "# H\n\none\n", if_match="", reason="made")
        await vault.append("items/h.md", "two\n", reason="entry:e1 H")
        history = await vault.history("items/h.md")
        assert history["path"] == "items/h.md"
        assert [(v["version"], v["op"], v["reason"]) for v in history["versions"]] == [
            (2, "append", "entry:e1 H"),
            (1, "write", "made"),
        ]
        old = await vault.read("items/h.md", version=1)
        assert old["version"] == 1 and old["etag"] == first["etag"]
        assert old["content"].endswith("# H\n\none\n")
        assert "+two\n" in (await vault.diff("items/h.md", 1))["diff"]
        assert (await vault.diff("items/h.md", 1, 2))["diff"].endswith("+two\n")

        plan = await vault.undo("e1", dry_run=True)
        assert plan == {
            "entry_id": "e1",
            "dry_run": True,
            "files": [
                {
                    "path": "items/h.md",
                    "from_version": 2,
                    "to_version": 1,
                    "deleted": False,
                    "unchanged": False,
                }
            ],
        }
        assert (await vault.undo("e1"))["files"][0]["version"] == 3
        assert (await vault.read("items/h.md"))["etag"] == first["etag"]
        with pytest.raises(ConflictError, match="already undone"):
            await vault.undo("e1")
        with pytest.raises(NotFoundError):
            await vault.undo("e2")

        moved = await vault.move("items/h.md", "items/k.md", reason="tidy")
        assert moved["new_path"] == "items/k.md" and moved["etag"] == first["etag"]
        await vault.delete("items/k.md", reason="gone")
        rows = (await vault.history("items/k.md", limit=2))["versions"]
        assert [(v["op"], v["reason"], v["etag"]) for v in rows] == [
            ("delete", "gone", None),
            ("move", "tidy", first["etag"]),
        ]
        assert rows[1]["moved_from"] == "items/h.md"
        back = await vault.restore("items/k.md", 1, reason="back")
        assert back["etag"] == first["etag"] and back["version"] == 3
        with pytest.raises(InvalidArgumentError):
            await vault.write("items/k.md", "# K\n", reason="two\nlines")


async def test_undo_removes_the_images_folder_it_emptied(
    settings: ClientSettings, lang: str
) -> None:
    gif = base64.b64encode(b"GIF89a" + b"\x01\x00\x01\x00\x00\x00\x00;").decode()
    async with mcp_vault_connection(lang, settings) as vault:
        note = await vault.write("items/i.md", "# I\n", if_match="")
        reason = "entry:e3 I"
        await vault.write("items/i.md.assets/a.gif", gif, encoding="base64", reason=reason)
        await vault.write(
            "items/i.md", "# I\n\n![a](i.md.assets/a.gif)\n", if_match=note["etag"], reason=reason
        )
        undone = await vault.undo("e3")
        assert [(f["path"], f["deleted"]) for f in undone["files"]] == [
            ("items/i.md", False),
            ("items/i.md.assets/a.gif", True),
        ]
        assert (await vault.find("**", "items", dirs=True))["paths"] == ["items/i.md"]


async def test_a_url_file_naming_another_workspaces_indexer_is_stale(
    server: RunningIndexer, lang: str, tmp_path: Path
) -> None:
    """A crash leaves W's URL file naming a port that another workspace's indexer (the
    module's) took since: the client wrote into that other workspace (exit 0)."""
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "indexer.mcp.url").write_text(server.url + "\n")  # left by a crash
    settings = ClientSettings(workspace=mine)
    with pytest.raises(IndexerOfflineError, match=r"stale: the indexer at .* serves another"):
        async with mcp_vault_connection(lang, settings) as vault:
            await vault.write("x.md", "# x\n")
    assert not (server.workspace / "memory/languages" / lang / "vault/x.md").exists()


async def test_a_session_cancelled_as_it_opens_is_closed(
    settings: ClientSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cancelled (an interrupt) once connected, while it asked which workspace the server
    serves, ``open_session`` left the client's own session task running: closed later
    from another task (the loop's shutdown), its generators printed pages of anyio's
    "Attempted to exit cancel scope in a different task"."""
    from agent_client import mcp_client

    asked, held = mcp_client._served_workspace, asyncio.Event()

    async def hold(client: Any, timeout: float) -> Path | None:
        held.set()
        await asyncio.sleep(60)
        return await asked(client, timeout)

    monkeypatch.setattr(mcp_client, "_served_workspace", hold)
    before = asyncio.all_tasks()

    async def open_one() -> None:
        async with open_session(settings):
            pass

    opening = asyncio.create_task(open_one())
    await asyncio.wait_for(held.wait(), 30)
    opening.cancel()
    with pytest.raises(asyncio.CancelledError):
        await opening
    left = [t for t in asyncio.all_tasks() - before if not t.done()]
    assert left == [], left  # the client's session task is gone with it
