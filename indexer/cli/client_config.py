"""Client configuration snippets for the live Vault MCP server (`indexer config-snippet`).

A pasted configuration is only right if it carries the URL the indexer listens on now and,
when a token is set, the header the server demands; so the snippet is generated from the
workspace's URL and token files instead of being written by hand.

- ``claude``: Claude Desktop reads only stdio servers from ``claude_desktop_config.json``
  (remote "custom connectors" are reached from Anthropic's cloud, which cannot see a
  loopback server), so the entry runs ``mcp-remote`` as a stdio bridge to our URL.
- ``cursor``: Cursor speaks Streamable HTTP itself: ``{"url", "headers"}``.
- ``generic``: the ``{"type": "http", "url", "headers"}`` shape read by most clients that
  speak Streamable HTTP (Claude Code's ``.mcp.json``, for one).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from indexer.health import check_no_token_needed, live_server
from shared.workspace import read_token_file

SERVER_NAME = "vault-memory"
CLIENTS = ("claude", "cursor", "generic")
# The mcp-remote release the interop tests run (tests/interop/package.json pins the same).
MCP_REMOTE_VERSION = "0.15.1"
# mcp-remote expands ${VAR} in header values; keeping the space of "Bearer x" in an env var
# avoids the argument-quoting bug of Claude Desktop on Windows (see mcp-remote's README).
AUTH_ENV = "VAULT_MEMORY_AUTH"

_WHERE = {
    "claude": (
        "Merge into claude_desktop_config.json (macOS: ~/Library/Application Support/Claude/, "
        "Windows: %APPDATA%\\Claude\\) under mcpServers, then restart Claude Desktop. "
        "Needs Node.js 18+ for npx."
    ),
    "cursor": "Merge into .cursor/mcp.json (this project) or ~/.cursor/mcp.json (all projects).",
    "generic": "For any client that takes a Streamable HTTP url (e.g. Claude Code's .mcp.json).",
}


def config_snippet(client: str, url: str, token: str | None) -> str:
    """The JSON text of an ``mcpServers`` block for ``client``, ending with a newline."""
    if client not in CLIENTS:
        raise ValueError(f"unknown client {client!r}: choose one of {', '.join(CLIENTS)}")
    entry: dict[str, Any]
    if client == "claude":
        args = ["-y", f"mcp-remote@{MCP_REMOTE_VERSION}", url, "--transport", "http-only"]
        entry = {"command": "npx", "args": args}
        if token:
            args += ["--header", f"Authorization:${{{AUTH_ENV}}}"]
            entry["env"] = {AUTH_ENV: f"Bearer {token}"}
    elif client == "cursor":
        entry = {"url": url}
        if token:
            entry["headers"] = {"Authorization": f"Bearer {token}"}
    else:
        entry = {"type": "http", "url": url}
        if token:
            entry["headers"] = {"Authorization": f"Bearer {token}"}
    return json.dumps({"mcpServers": {SERVER_NAME: entry}}, indent=2) + "\n"


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add the ``config-snippet`` subcommand to the ``indexer`` CLI."""
    parser: argparse.ArgumentParser = commands.add_parser(
        "config-snippet",
        parents=[common],
        help="print the MCP configuration for Claude Desktop, Cursor or another client",
        description=(
            "Print the mcpServers JSON for a client, with the live URL of the indexer "
            "serving the workspace (and its token header when a token is set)."
        ),
    )
    parser.add_argument(
        "--client",
        choices=CLIENTS,
        default="generic",
        help="which client's format (default generic)",
    )
    parser.set_defaults(func=cmd_config_snippet)


def cmd_config_snippet(args: argparse.Namespace) -> int:
    """Print the snippet on stdout and where to paste it on stderr; fails with no live server."""
    from indexer.cli import resolve_workspace

    workspace = resolve_workspace(args, existing=True)
    url, health = live_server(workspace)
    token = read_token_file(workspace.token_file)
    if token is None:
        check_no_token_needed(url, workspace)
    sys.stdout.write(config_snippet(args.client, url, token))
    print(f"# {_WHERE[args.client]}", file=sys.stderr)
    if health.get("port_fixed") is not True:  # (an older server does not say: advised)
        print(
            "# The URL holds the indexer's current port: start it with a fixed --port "
            "(INDEXER_PORT) so that this snippet stays valid across restarts.",
            file=sys.stderr,
        )
    return 0
