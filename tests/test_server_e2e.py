"""End to end: a real ``indexer serve`` subprocess, spoken to over HTTP by real MCP clients.

The tests that only need a running server share the module's (``server``, each with a
lang of its own); the ones about a start, a stop, flags or a crash start their own.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import signal
import stat
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from fastmcp import Client
from fastmcp.exceptions import ToolError
from helpers.indexer_process import RunningIndexer, spawn_indexer, start_indexer, wait_for

from shared.frontmatter import parse_frontmatter

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))


def vault(ws: Path, lang: str = "en") -> Path:
    return ws / "memory" / "languages" / lang / "vault"


async def data(client: Client, tool: str, **args) -> dict:
    return (await client.call_tool(tool, args)).structured_content


@pytest.mark.parametrize(("mode", "lang"), [("auto", "en"), ("legacy", "en-legacy")])
async def test_every_tool_over_http(server: RunningIndexer, mode: str, lang: str) -> None:
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/mcp", server.url)
    async with server.client(mode=mode) as c:
        names = {t.name for t in await c.list_tools()}
        assert {"read", "write", "stat", "append", "find", "grep", "delete", "status"} <= names
        w = await data(c, "write", lang=lang, path="items/go.md", content="# Go\nwent\n")
        r = await data(c, "read", lang=lang, path="items/go.md")
        assert r["etag"] == w["etag"] and r["content"].endswith("# Go\nwent\n")
        assert (await data(c, "stat", lang=lang, path="items/go.md"))["exists"] is True
        await data(c, "append", lang=lang, path="items/go.md", content="\n## more\n")
        assert (await data(c, "find", lang=lang))["paths"] == ["items/go.md"]
        g = await data(c, "grep", lang=lang, pattern="^## more$")
        assert g["matches"][0]["path"] == "items/go.md"
        status = await data(c, "status")
        assert status["langs"][lang] == 1
        assert status["workspace"] == str(server.workspace.resolve())
        assert await data(c, "delete", lang=lang, path="items/go.md") == {
            "path": "items/go.md",
            "deleted": True,
        }
        with pytest.raises(ToolError, match=r"^forbidden_path: "):
            await c.call_tool("read", {"lang": lang, "path": "../../../../etc/passwd"})
        prompt = await c.get_prompt("vault_spec")
        assert prompt.messages[0].content.text.strip()


async def test_if_match_conflict_over_http(server: RunningIndexer) -> None:
    lang = "en-ifmatch"
    async with server.client() as c:
        first = await data(c, "write", lang=lang, path="n.md", content="# n\n", if_match="")
        note = vault(server.workspace, lang) / "n.md"
        note.write_text(note.read_text() + "a human edit\n")  # someone edits in an editor
        before = note.read_bytes()
        with pytest.raises(ToolError, match=r"^conflict: "):
            await c.call_tool(
                "write",
                {"lang": lang, "path": "n.md", "content": "# llm\n", "if_match": first["etag"]},
            )
        assert note.read_bytes() == before


async def test_binary_asset_write_over_http(server: RunningIndexer) -> None:
    lang = "en-binary"
    async with server.client() as c:
        content = base64.b64encode(PNG).decode()
        await data(
            c,
            "write",
            lang=lang,
            path="items/a.md.assets/p.png",
            content=content,
            encoding="base64",
        )
    assert (vault(server.workspace, lang) / "items/a.md.assets/p.png").read_bytes() == PNG


async def test_concurrent_appends_never_interleave(server: RunningIndexer) -> None:
    clients, per_client, lang = 8, 100, "en-appends"

    async def writer(n: int) -> None:
        async with server.client() as c:
            for i in range(per_client):
                section = f"## s{n}-{i}\n" + f"payload {n} {i} " * 3 + "\nend\n"
                await c.call_tool("append", {"lang": lang, "path": "log.md", "content": section})

    await asyncio.gather(*(writer(n) for n in range(clients)))
    text = (vault(server.workspace, lang) / "log.md").read_text()
    sections = text.split("## ")[1:]
    assert len(sections) == clients * per_client
    seen = set()
    for section in sections:
        head, body, end, tail = section.split("\n")
        n, i = head[1:].split("-")
        assert body == f"payload {n} {i} " * 3 and end == "end" and tail == ""
        seen.add(head)
    assert len(seen) == clients * per_client


def test_sigterm_removes_url_file_and_exits_zero(workspace: Path) -> None:
    mark = workspace / ".indexer/clean-shutdown"
    server = start_indexer(workspace)
    assert server.stop(signal.SIGTERM) == 0
    assert not (workspace / "indexer.mcp.url").exists()
    assert mark.exists()  # the next start skips the checks that read whole files
    server = start_indexer(workspace)
    assert not mark.exists()  # taken while serving: a crash now is seen at the next start
    assert server.stop(signal.SIGINT) == 0
    assert not (workspace / "indexer.mcp.url").exists()
    assert mark.exists()
    server = start_indexer(workspace)  # a closed terminal: SIGHUP stops it as cleanly
    assert server.stop(signal.SIGHUP) == 0
    assert not (workspace / "indexer.mcp.url").exists()
    assert mark.exists()
    server = start_indexer(workspace)
    server.stop(signal.SIGKILL)
    assert not mark.exists()


def test_url_file_of_another_instance_is_left_alone(workspace: Path) -> None:
    server = start_indexer(workspace)
    (workspace / "indexer.mcp.url").write_text("http://127.0.0.1:1/mcp\n")
    assert server.stop() == 0
    assert (workspace / "indexer.mcp.url").read_text() == "http://127.0.0.1:1/mcp\n"


def test_stale_url_file_is_replaced(workspace: Path) -> None:
    (workspace / "indexer.mcp.url").write_text("http://127.0.0.1:1/mcp\n")
    server = start_indexer(workspace)
    try:
        assert server.url != "http://127.0.0.1:1/mcp"
    finally:
        server.stop()


def test_second_instance_is_refused(server: RunningIndexer) -> None:
    second = spawn_indexer(server.workspace)
    assert second.wait(timeout=30) != 0
    assert "already serving" in second.log_path.read_text()  # type: ignore[attr-defined]
    assert (server.workspace / "indexer.mcp.url").read_text().strip() == server.url


async def test_sigkill_during_writes_leaves_no_torn_or_temp_files(workspace: Path) -> None:
    # Folder summaries write their own (atomic) files in the background: not this test's.
    quiet = {"INDEXER_SUMMARIES": "0"}
    server = start_indexer(workspace, env=quiet)
    written: dict[str, set[str]] = {}

    async def stream() -> None:
        async with server.client() as c:
            for i in range(100_000):
                path = f"items/n{i % 7}.md"
                body = f"# note {i}\n" + f"version {i} " * 300 + "\n"
                written.setdefault(path, set()).add(body)
                await c.call_tool("write", {"lang": "en", "path": path, "content": body})

    task = asyncio.create_task(stream())
    await asyncio.to_thread(
        wait_for, lambda: sum(len(v) for v in written.values()) > 30, 30, what="some writes"
    )
    server.process.send_signal(signal.SIGKILL)
    server.process.wait()
    with pytest.raises(BaseException):  # noqa: B017 (the connection dies with the server)
        await asyncio.wait_for(task, 30)
    restarted = start_indexer(workspace, env=quiet)
    try:

        def leftovers() -> list[Path]:  # swept in the background once serving
            return [p for p in vault(workspace).rglob("*") if ".tmp." in p.name]

        wait_for(lambda: not leftovers(), 30, what="the crash's temp files swept")
        for note in (vault(workspace) / "items").glob("*.md"):
            meta, body = parse_frontmatter(note.read_text())
            assert meta["id"] and body in written[f"items/{note.name}"]
    finally:
        restarted.stop()


def test_a_start_sweeps_the_temp_files_a_crash_left_after_serving(workspace: Path) -> None:
    """The sweep runs in the background once the URL is written, after a clean stop or
    not: temp files are dot-files no tool sees, and one younger than the start (a write
    in flight) is spared."""
    items = vault(workspace) / "items"
    items.mkdir(parents=True)
    (items / "kept.md").write_text("# kept\n")
    orphans = [
        items / ".kept.md.tmp.0123456789abcdef",
        vault(workspace) / ".x.md.tmp.00112233aabbccdd",
    ]
    for orphan in orphans:
        orphan.write_text("left by a crash")
        os.utime(orphan, (1.0e9, 1.0e9))
    for _ in range(2):  # the first start (no clean mark), then one after a clean stop
        server = start_indexer(workspace, env={"INDEXER_SUMMARIES": "0"})
        try:
            wait_for(lambda: not any(o.exists() for o in orphans), 30, what="orphans swept")
            assert (items / "kept.md").read_text() == "# kept\n"
        finally:
            server.stop()
        for orphan in orphans:
            orphan.write_text("left by a crash")
            os.utime(orphan, (1.0e9, 1.0e9))


def post(url: str, headers: dict[str, str]) -> int:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}).encode()
    request = urllib.request.Request(
        url,
        data=body,
        method="POST",
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-11-25",
            **headers,
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as err:
        return err.code


def test_foreign_host_and_origin_are_refused(server: RunningIndexer) -> None:
    url = server.url
    port = url.rsplit(":", 1)[1].split("/")[0]
    assert post(url, {"Host": "evil.example:80"}) == 421
    assert post(url, {"Origin": "http://evil.example"}) == 403
    assert post(url, {"Origin": "null"}) == 403
    assert post(url, {"Host": f"localhost:{port}", "Origin": f"http://localhost:{port}"}) not in (
        403,
        421,
    )


def test_url_answers_without_redirect(server: RunningIndexer) -> None:
    assert post(server.url, {}) not in (301, 302, 307, 308)


async def test_token_is_required_when_set(workspace: Path) -> None:
    server = start_indexer(workspace, "--token", "s3cret-token")
    try:
        token_file = workspace / "indexer.mcp.token"
        assert token_file.read_text().strip() == "s3cret-token"
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        assert post(server.url, {}) == 401
        assert post(server.url, {"Authorization": "Bearer wrong"}) == 401
        async with server.client() as c:
            assert (await data(c, "status"))["version"]
    finally:
        server.stop()
    server = start_indexer(workspace, env={"INDEXER_MCP_TOKEN": "from-env"})
    try:
        assert (workspace / "indexer.mcp.token").read_text().strip() == "from-env"
        assert post(server.url, {}) == 401
    finally:
        server.stop()
    server = start_indexer(workspace)
    try:
        assert not (workspace / "indexer.mcp.token").exists()
    finally:
        server.stop()


def test_debug_log_has_one_line_per_tool_call(workspace: Path) -> None:
    server = start_indexer(workspace, "--log-level", "DEBUG")

    async def calls() -> None:
        async with server.client() as c:
            await c.call_tool("stat", {"lang": "en", "path": "a.md"})
            with pytest.raises(ToolError):
                await c.call_tool("read", {"lang": "en", "path": "a.md"})

    try:
        asyncio.run(calls())
    finally:
        server.stop()
    log = server.log()
    assert f"serving {server.url}" in log
    assert re.search(r"tool=stat lang=en path=a\.md ms=[\d.]+ outcome=ok", log)
    assert re.search(r"tool=read lang=en path=a\.md ms=[\d.]+ outcome=not_found", log)


def test_missing_workspace_is_a_clear_error(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "INDEXER_WORKSPACE"}
    result = subprocess.run(
        [sys.executable, "-m", "indexer", "serve"], capture_output=True, text=True, env=env
    )
    assert result.returncode == 2 and "workspace" in result.stderr


def test_port_in_use_is_one_clear_line(server: RunningIndexer, tmp_path: Path) -> None:
    port = server.url.rsplit(":", 1)[1].split("/")[0]
    other = tmp_path / "other"
    proc = spawn_indexer(other, "--port", port)
    assert proc.wait(timeout=30) == 1
    log = proc.log_path.read_text()  # type: ignore[attr-defined]
    assert f"could not listen on 127.0.0.1:{port} (Address already in use)" in log
    assert "Traceback" not in log
    assert not (other / "indexer.mcp.url").exists()


def test_an_address_not_of_this_machine_is_said_so(tmp_path: Path) -> None:
    """It said "is the port in use?" of port 0."""
    proc = spawn_indexer(tmp_path / "ws", "--host", "192.0.2.1")  # TEST-NET-1: nobody's
    assert proc.wait(timeout=30) == 1
    log = proc.log_path.read_text()  # type: ignore[attr-defined]
    assert "could not listen on 192.0.2.1:0 (Cannot assign requested address)" in log, log


def test_index_from_a_newer_version_is_refused_clearly(workspace: Path) -> None:
    import sqlite3

    (workspace / ".indexer").mkdir()
    with sqlite3.connect(workspace / ".indexer" / "index.sqlite") as db:
        db.execute("PRAGMA user_version = 999")
    proc = spawn_indexer(workspace)
    assert proc.wait(timeout=30) == 1
    log = proc.log_path.read_text()  # type: ignore[attr-defined]
    assert "999" in log and "Traceback" not in log
    assert not (workspace / "indexer.mcp.url").exists()


async def test_a_move_over_http_relinks_the_notes_that_link_to_it(server: RunningIndexer) -> None:
    lang = "en-move"
    async with server.client() as c:
        await data(c, "write", lang=lang, path="items/plan.md", content="# Plan\n")
        see = "# See\n\n[the plan](../items/plan.md) and [[items/plan|Plan]]\n"
        await data(c, "write", lang=lang, path="notes/see.md", content=see)
        moved = await data(c, "move", lang=lang, path="items/plan.md", new_path="done/plan.md")
        assert moved["relinked"] == ["notes/see.md"]
        text = (vault(server.workspace, lang) / "notes/see.md").read_text()
        assert "[the plan](../done/plan.md) and [[done/plan|Plan]]" in text
        found = await data(c, "grep", lang=lang, pattern="done/plan", fixed=True)
        assert [m["path"] for m in found["matches"]] == ["notes/see.md"]
