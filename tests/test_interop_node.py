"""Interop with MCP clients we did not write, against a real ``indexer serve`` subprocess.

- the official MCP TypeScript SDK (``@modelcontextprotocol/sdk``, Streamable HTTP): lists the
  tools, calls every one, and sees the SPEC's error codes as tool errors;
- the MCP Inspector CLI (``@modelcontextprotocol/inspector --cli``), in both protocol eras;
- the configurations printed by ``indexer config-snippet``, used as pasted: the Claude
  Desktop entry (``npx mcp-remote`` as a stdio bridge) and the Cursor entry (url + headers).

The server has a token, so every client here also proves it sends the header.
The npm packages are pinned in tests/interop/package.json and installed by ``make test``
(``npm ci``). Without node these tests are skipped; without the packages they fail.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.indexer_process import RunningIndexer, start_indexer

INTEROP = Path(__file__).parent / "interop"
NODE = shutil.which("node")
SDK_CLIENT = INTEROP / "sdk_client.mjs"
INSPECTOR = INTEROP / "node_modules" / ".bin" / "mcp-inspector"
TOKEN = "interop-token-7f3a"
LANG = "en"
NOTE = "items/interop.md"
DAY = "events/2026/11/29.md"
TIMEOUT = 60

pytestmark = pytest.mark.skipif(
    NODE is None, reason="node not found on PATH: interop tests with Node MCP clients skipped"
)

# The SPEC's tool table: parameter names are part of the contract.
SPEC_PARAMS = {
    "read": {"lang", "path", "offset", "limit", "version"},
    "write": {"lang", "path", "content", "encoding", "if_match", "reason"},
    "stat": {"lang", "path"},
    "append": {"lang", "path", "content", "create", "reason"},
    "find": {"lang", "pattern", "path", "limit", "dirs", "sizes", "after"},
    "grep": {"lang", "pattern", "path", "glob", "fixed", "ignore_case", "limit"},
    "delete": {"lang", "path", "reason"},
    "search": {"lang", "query", "limit", "type", "tags", "path", "offset"},
    "status": set(),
    "recall": {"lang", "query", "budget_tokens", "path"},
    "summary": {"lang", "path"},
    "history": {"lang", "path", "limit"},
    "diff": {"lang", "path", "from_version", "to_version"},
    "restore": {"lang", "path", "version", "if_match", "reason"},
    "move": {"lang", "path", "new_path", "if_match", "reason"},
    "undo": {"lang", "entry_id", "dry_run"},
}
REQUIRED_TOOLS = set(SPEC_PARAMS) - {"search", "summary"}  # optional: index, INDEXER_SUMMARIES


@pytest.fixture(scope="module", autouse=True)
def node_packages() -> None:
    if not (INTEROP / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        pytest.fail(
            "the interop npm packages are not installed: run `make test`, or "
            "`npm ci --prefix tests/interop`",
            pytrace=False,
        )


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningIndexer]:
    """One indexer for the module, with a token: every client must send the header."""
    running = start_indexer(tmp_path_factory.mktemp("interop") / "ws", "--token", TOKEN)
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
def node_env(tmp_path: Path) -> dict[str, str]:
    """Environment for the Node clients: a throw-away HOME, no network for npx."""
    home = tmp_path / "home"
    home.mkdir()
    return {**os.environ, "HOME": str(home), "npm_config_offline": "true", "CI": "true"}


def run_sdk(plan: dict[str, Any], env: dict[str, str]) -> tuple[int, dict[str, Any]]:
    """Run tests/interop/sdk_client.mjs on ``plan``; its exit code and JSON report."""
    assert NODE is not None
    proc = subprocess.run(
        [NODE, str(SDK_CLIENT)],
        input=json.dumps(plan),
        capture_output=True,
        text=True,
        cwd=INTEROP,
        env=env,
        timeout=TIMEOUT,
    )
    assert proc.stdout.strip(), f"no report from sdk_client.mjs; stderr:\n{proc.stderr}"
    return proc.returncode, json.loads(proc.stdout)


def run_inspector(
    args: list[str], env: dict[str, str], token: str | None = TOKEN
) -> subprocess.CompletedProcess[str]:
    header = ["--header", f"Authorization: Bearer {token}"] if token else []
    return subprocess.run(
        [str(INSPECTOR), "--cli", *args, *header, "--format", "json"],
        stdin=subprocess.DEVNULL,  # never an interactive OAuth prompt
        capture_output=True,
        text=True,
        cwd=INTEROP,
        env=env,
        timeout=TIMEOUT,
    )


def config_snippet(client: str, workspace: Path) -> dict[str, Any]:
    """The entry printed by the real ``indexer config-snippet`` for ``client``."""
    command = [sys.executable, "-m", "indexer", "config-snippet"]
    proc = subprocess.run(
        [*command, "--client", client, "--workspace", str(workspace)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert proc.returncode == 0, proc.stderr
    entry: dict[str, Any] = json.loads(proc.stdout)["mcpServers"]["vault-memory"]
    return entry


def every_tool_plan() -> list[dict[str, Any]]:
    body = "# Interop note\n\nwritten by the TypeScript SDK\n"
    return [
        {"name": "status"},
        {
            "name": "write",
            "arguments": {"lang": LANG, "path": NOTE, "content": body, "if_match": ""},
        },
        {
            "name": "write",
            "arguments": {"lang": LANG, "path": NOTE, "content": "x", "if_match": ""},
        },
        {"name": "stat", "arguments": {"lang": LANG, "path": NOTE}},
        {"name": "read", "arguments": {"lang": LANG, "path": NOTE}},
        {"name": "append", "arguments": {"lang": LANG, "path": DAY, "content": "## Event\n\nhi\n"}},
        {"name": "find", "arguments": {"lang": LANG}},
        {"name": "grep", "arguments": {"lang": LANG, "pattern": "TypeScript SDK", "fixed": True}},
        {"name": "search", "arguments": {"lang": LANG, "query": "TypeScript"}},
        {"name": "delete", "arguments": {"lang": LANG, "path": NOTE}},
        {"name": "read", "arguments": {"lang": LANG, "path": "../etc/passwd"}},
        {"name": "read", "arguments": {"lang": LANG, "path": NOTE}},
    ]


def test_typescript_sdk_lists_and_calls_every_tool(
    server: RunningIndexer, node_env: dict[str, str]
) -> None:
    plan = {"transport": "http", "url": server.url, "token": TOKEN, "calls": every_tool_plan()}
    code, report = run_sdk({**plan, "texts": True}, node_env)
    assert code == 0, report

    # SDK 1.32.2 negotiates 2025-11-25 with an initialize handshake and a session.
    assert report["protocolVersion"] == "2025-11-25"
    assert report["sessionId"]
    tools = {tool["name"]: tool["inputSchema"] for tool in report["tools"]}
    assert set(tools) >= REQUIRED_TOOLS, sorted(tools)
    for name in set(tools) & set(SPEC_PARAMS):
        assert set(tools[name].get("properties", {})) == SPEC_PARAMS[name], name

    results = report["results"]
    status, created, exists, stat, read, append, find, grep, search, delete, refused, gone = results
    assert not status["isError"] and "version" in status["structuredContent"]
    assert created["structuredContent"]["created"] is True
    assert exists["isError"] and exists["text"].startswith("conflict:")
    assert stat["structuredContent"]["exists"] is True
    assert stat["structuredContent"]["type"] == "file"
    assert "written by the TypeScript SDK" in read["structuredContent"]["content"]
    assert read["structuredContent"]["etag"] == created["structuredContent"]["etag"]
    assert append["structuredContent"]["path"] == DAY
    assert {NOTE, DAY} <= set(find["structuredContent"]["paths"])
    assert [m["path"] for m in grep["structuredContent"]["matches"]] == [NOTE]
    if "search" in tools:
        assert not search["isError"], search
        assert NOTE in [hit["path"] for hit in search["structuredContent"]["results"]]
    else:
        assert search == {"name": "search", "skipped": True}
    assert delete["structuredContent"] == {"path": NOTE, "deleted": True}
    assert refused["isError"] and refused["text"].startswith("forbidden_path:"), refused
    assert gone["isError"] and gone["text"].startswith("not_found:"), gone

    vault = server.workspace / "memory" / "languages" / LANG / "vault"
    assert (vault / DAY).read_text(encoding="utf-8").endswith("## Event\n\nhi\n")
    assert not (vault / NOTE).exists()

    # Every prompt and resource listed can be read, with the MIME type it declares.
    texts = report["texts"]
    assert {"vault_spec", "mem_entry_spec", "envelope_spec"} <= {
        p["name"] for p in texts["prompts"]
    }
    assert all(prompt["messages"] == ["text"] for prompt in texts["prompts"]), texts
    assert "vault://prompts/vault_spec" in {r["uri"] for r in texts["resources"]}
    for resource in texts["resources"]:
        assert resource["listed"] == resource["read"] == "text/markdown", resource
        assert resource["size"] > 0, resource
    assert texts["unknownPrompt"]["code"] == -32602, texts


def test_typescript_sdk_without_the_token_is_refused(
    server: RunningIndexer, node_env: dict[str, str]
) -> None:
    calls = [{"name": "status"}]
    code, report = run_sdk({"transport": "http", "url": server.url, "calls": calls}, node_env)
    assert code == 2
    assert report["code"] == 401, report  # the SDK's StreamableHTTPError carries the status


def inspector_result(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert proc.stdout.strip(), proc.stderr
    result: dict[str, Any] = json.loads(proc.stdout)["result"]
    return result


def test_inspector_cli_lists_tools_and_calls_status(
    server: RunningIndexer, node_env: dict[str, str]
) -> None:
    """The Inspector's default era for a URL: 2025-11-25, initialize handshake, session."""
    listed = run_inspector([server.url, "--method", "tools/list"], node_env)
    assert listed.returncode == 0, listed.stderr
    names = {tool["name"] for tool in inspector_result(listed)["tools"]}
    assert names >= REQUIRED_TOOLS, sorted(names)

    call_status = ["--method", "tools/call", "--tool-name", "status"]
    called = run_inspector([server.url, *call_status], node_env)
    assert called.returncode == 0, called.stderr
    result = inspector_result(called)
    assert result["isError"] is False
    assert result["structuredContent"]["workspace"] == str(server.workspace.resolve())


def test_inspector_cli_modern_era_calls_status_and_sees_tool_errors(
    server: RunningIndexer, node_env: dict[str, str]
) -> None:
    """--protocol-era modern: 2026-07-28, server/discover, no session."""
    base = [server.url, "--protocol-era", "modern", "--method", "tools/call"]
    called = run_inspector([*base, "--tool-name", "status"], node_env)
    assert called.returncode == 0, called.stderr
    assert inspector_result(called)["structuredContent"]["version"]

    arguments = json.dumps({"lang": LANG, "path": "../etc/passwd"})
    refused = run_inspector([*base, "--tool-name", "read", "--tool-args-json", arguments], node_env)
    assert refused.returncode != 0  # the Inspector exits non-zero on isError
    result = inspector_result(refused)
    assert result["isError"] is True
    assert result["content"][0]["text"].startswith("forbidden_path:")


def test_inspector_cli_without_the_token_is_refused(
    server: RunningIndexer, node_env: dict[str, str]
) -> None:
    args = [server.url, "--method", "tools/call", "--tool-name", "status"]
    refused = run_inspector(args, node_env, token=None)
    assert refused.returncode != 0
    # A 401 makes the Inspector want an OAuth login, which it cannot do without a TTY.
    assert json.loads(refused.stderr)["error"]["code"] == "auth_required", refused.stderr


def test_claude_desktop_snippet_works_as_pasted(
    server: RunningIndexer, node_env: dict[str, str]
) -> None:
    """Run the printed command (npx mcp-remote ...) exactly; npx finds the pinned local copy."""
    entry = config_snippet("claude", server.workspace)
    assert entry["command"] == "npx"
    assert server.url in entry["args"]
    plan = {
        "transport": "stdio",
        "command": entry["command"],
        "args": entry["args"],
        "env": entry.get("env", {}),
        "calls": [
            {"name": "status"},
            {"name": "stat", "arguments": {"lang": LANG, "path": "a.md"}},
        ],
    }
    code, report = run_sdk(plan, node_env)
    assert code == 0, report
    assert {tool["name"] for tool in report["tools"]} >= REQUIRED_TOOLS
    status, stat = report["results"]
    assert status["structuredContent"]["workspace"] == str(server.workspace.resolve())
    assert stat["structuredContent"]["exists"] is False


def test_cursor_snippet_url_and_headers_work(
    server: RunningIndexer, node_env: dict[str, str]
) -> None:
    entry = config_snippet("cursor", server.workspace)
    assert entry["url"] == server.url
    assert entry["headers"] == {"Authorization": f"Bearer {TOKEN}"}
    plan = {"transport": "http", "url": entry["url"], "headers": entry["headers"]}
    plan["calls"] = [{"name": "status"}]
    code, report = run_sdk(plan, node_env)
    assert code == 0, report
    assert report["results"][0]["isError"] is False


def test_claude_desktop_bridge_outlives_a_read_of_a_note_near_the_size_limit(
    server: RunningIndexer, node_env: dict[str, str]
) -> None:
    """A 4 MiB note of quotes and backslashes (within INDEXER_MAX_FILE_BYTES) made an
    answer of 11.9 MB, past the 10 MiB the TypeScript SDK takes in one stdio message:
    the client of mcp-remote closed, and every later call failed. Now the read is
    refused as too_large (read it in parts) and the session goes on."""
    vault = server.workspace / "memory" / "languages" / LANG / "vault"
    line = 'He said "hi" \\ and left\n'
    note = ("# Quoted\n\n" + line * (4_190_000 // len(line)))[:4_190_000] + "\n"
    (vault / "items").mkdir(parents=True, exist_ok=True)
    (vault / "items" / "quoted.md").write_text(note, encoding="utf-8")
    entry = config_snippet("claude", server.workspace)
    plan = {
        "transport": "stdio",
        "command": entry["command"],
        "args": entry["args"],
        "env": entry.get("env", {}),
        "calls": [
            {"name": "read", "arguments": {"lang": LANG, "path": "items/quoted.md"}},
            {"name": "read", "arguments": {"lang": LANG, "path": "items/quoted.md", "limit": 10}},
            {"name": "status"},
        ],
    }
    code, report = run_sdk(plan, node_env)
    assert code == 0, report
    whole, part, status = report["results"]
    assert whole["isError"] and whole["text"].startswith("too_large:"), whole["text"][:200]
    assert part["structuredContent"]["content"].count("\n") == 10
    assert status["isError"] is False
