"""``indexer config-snippet``: the JSON each client takes, from the live URL and token files."""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from helpers.indexer_process import RunningIndexer, start_indexer

from indexer.cli import client_config as snippets
from indexer.cli import workspace_options
from indexer.cli.client_config import config_snippet
from indexer.health import health_url, server_health
from shared.errors import ConfigError, OperationalError
from shared.workspace import Workspace, workspace_id

URL = "http://127.0.0.1:8765/mcp"
INTEROP = Path(__file__).parent / "interop"


def entry(client: str, token: str | None) -> dict[str, object]:
    text = config_snippet(client, URL, token)
    assert text.endswith("}\n")
    parsed: dict[str, object] = json.loads(text)["mcpServers"]["vault-memory"]
    return parsed


def test_claude_entry_bridges_stdio_to_the_url_with_mcp_remote() -> None:
    pinned = f"mcp-remote@{snippets.MCP_REMOTE_VERSION}"
    assert entry("claude", None) == {
        "command": "npx",
        "args": ["-y", pinned, URL, "--transport", "http-only"],
    }
    header = ["--header", "Authorization:${VAULT_MEMORY_AUTH}"]
    assert entry("claude", "s3cret") == {
        "command": "npx",
        "args": ["-y", pinned, URL, "--transport", "http-only", *header],
        "env": {"VAULT_MEMORY_AUTH": "Bearer s3cret"},
    }


def test_cursor_and_generic_entries_take_url_and_headers() -> None:
    assert entry("cursor", None) == {"url": URL}
    assert entry("cursor", "s3cret") == {"url": URL, "headers": {"Authorization": "Bearer s3cret"}}
    assert entry("generic", None) == {"type": "http", "url": URL}
    assert entry("generic", "s3cret") == {
        "type": "http",
        "url": URL,
        "headers": {"Authorization": "Bearer s3cret"},
    }


def test_unknown_client_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown client 'vscode'"):
        config_snippet("vscode", URL, None)


def test_mcp_remote_version_is_the_one_the_interop_tests_run() -> None:
    package = json.loads((INTEROP / "package.json").read_text(encoding="utf-8"))
    assert package["dependencies"]["mcp-remote"] == snippets.MCP_REMOTE_VERSION


def test_health_url_sits_beside_the_mcp_endpoint() -> None:
    assert health_url(URL) == "http://127.0.0.1:8765/health"
    assert health_url(URL + "/") == "http://127.0.0.1:8765/health"


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="indexer")
    snippets.register(parser.add_subparsers(dest="command", required=True), workspace_options())
    return parser.parse_args(argv)


def test_register_adds_the_subcommand() -> None:
    args = parse(["config-snippet", "--workspace", "W"])
    assert (args.client, args.workspace, args.func) == ("generic", "W", snippets.cmd_config_snippet)
    with pytest.raises(SystemExit):
        parse(["config-snippet", "--client", "vscode"])


class Health(BaseHTTPRequestHandler):
    served: str | None = None  # the workspace_id it answers, as an indexer would

    def do_GET(self) -> None:
        answer = {"status": "ok", "workspace_id": self.served}
        body = json.dumps(answer).encode() if self.path == "/health" else b"{}"
        self.send_response(200 if self.path == "/health" else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def health_server(tmp_path: Path) -> Iterator[str]:
    """A real HTTP server answering /health as the indexer of ``tmp_path`` would: the MCP
    URL a live indexer would advertise."""
    handler = type("HealthOfTmp", (Health,), {"served": workspace_id(tmp_path)})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/mcp"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_command_prints_the_live_url_and_token(
    tmp_path: Path,
    health_server: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (tmp_path / "indexer.mcp.url").write_text(health_server + "\n")
    (tmp_path / "indexer.mcp.token").write_text("tok\n")
    monkeypatch.delenv("INDEXER_WORKSPACE", raising=False)
    with pytest.raises(ConfigError, match="--workspace"):  # neither flag nor environment
        snippets.cmd_config_snippet(parse(["config-snippet", "--client", "cursor"]))

    monkeypatch.setenv("INDEXER_WORKSPACE", str(tmp_path))
    args = parse(["config-snippet", "--client", "cursor"])
    assert snippets.cmd_config_snippet(args) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["mcpServers"]["vault-memory"] == {
        "url": health_server,
        "headers": {"Authorization": "Bearer tok"},
    }
    assert ".cursor/mcp.json" in err and "--port" in err


def test_command_refuses_a_missing_or_stale_url_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = parse(["config-snippet", "--workspace", str(tmp_path)])
    with pytest.raises(OperationalError) as missing:
        snippets.cmd_config_snippet(args)
    assert "indexer.mcp.url" in missing.value.message and "indexer serve" in missing.value.message

    (tmp_path / "indexer.mcp.url").write_text(f"http://127.0.0.1:{free_port()}/mcp\n")
    with pytest.raises(OperationalError, match="stale"):
        snippets.cmd_config_snippet(args)
    assert capsys.readouterr().out == ""


def test_command_refuses_a_url_file_naming_another_workspaces_indexer(
    tmp_path: Path, health_server: str
) -> None:
    """A crash left the URL file; another workspace's indexer took its port since: what
    answers /health is not ours, so the snippet would point a client at the wrong vaults."""
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "indexer.mcp.url").write_text(health_server + "\n")
    with pytest.raises(OperationalError, match="no indexer of this workspace answers"):
        snippets.cmd_config_snippet(parse(["config-snippet", "--workspace", str(mine)]))
    (tmp_path / "indexer.mcp.url").write_text(health_server + "\n")  # its own: fine
    assert server_health(health_server, Workspace(tmp_path)) is not None
    assert server_health(health_server, Workspace(mine)) is None


def test_cli_prints_the_snippet_of_a_running_indexer(indexer_server: RunningIndexer) -> None:
    command = [sys.executable, "-m", "indexer", "config-snippet", "--client", "generic"]
    proc = subprocess.run(
        [*command, "--workspace", str(indexer_server.workspace)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {
        "mcpServers": {"vault-memory": {"type": "http", "url": indexer_server.url}}
    }
    assert "fixed --port" in proc.stderr  # (a free port: another one after a restart)


@pytest.mark.parametrize("how", ["--port", "INDEXER_PORT"])
def test_no_fixed_port_advice_for_an_indexer_started_on_a_fixed_port(
    tmp_path: Path, how: str
) -> None:
    """The snippet said to start the indexer "with a fixed --port" even when it had been."""
    port = str(free_port())
    args, env = (("--port", port), None) if how == "--port" else ((), {"INDEXER_PORT": port})
    server = start_indexer(tmp_path / "ws", *args, env=env)
    try:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "indexer",
                "config-snippet",
                "--workspace",
                str(server.workspace),
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        server.stop()
    assert proc.returncode == 0, proc.stderr
    assert f":{port}/mcp" in proc.stdout and "Streamable HTTP" in proc.stderr
    assert "--port" not in proc.stderr, proc.stderr


def test_a_missing_token_file_of_a_server_that_asks_for_one_is_refused(
    tmp_path: Path,
) -> None:
    """A server started with a token whose token file is gone: the snippet came out with
    no header (exit 0) and ``open --print`` gave a bare page URL, each refused (401) only
    when used. Both now say what is missing; with the file back, both work."""
    server = start_indexer(tmp_path / "ws", env={"INDEXER_MCP_TOKEN": "s3cret-token"})
    try:
        token_file = server.workspace / "indexer.mcp.token"
        token_file.unlink()
        workspace = ["--workspace", str(server.workspace)]
        for command in (["config-snippet", "--client", "cursor"], ["open", "--print"]):
            proc = subprocess.run(
                [sys.executable, "-m", "indexer", *command, *workspace],
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert proc.returncode == 1 and proc.stdout == "", (command, proc.stdout)
            assert "asks for a token" in proc.stderr and "indexer.mcp.token" in proc.stderr
        token_file.write_text("s3cret-token\n")
        again = subprocess.run(
            [sys.executable, "-m", "indexer", "config-snippet", "--client", "cursor", *workspace],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert again.returncode == 0 and "Bearer s3cret-token" in again.stdout, again.stderr
    finally:
        server.stop()


def test_cli_exits_1_when_no_indexer_runs(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "indexer", "config-snippet", "--workspace", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert "start the indexer first" in proc.stderr
