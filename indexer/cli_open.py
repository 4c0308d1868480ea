"""``indexer open``: open the browser page of the indexer serving a workspace.

With a token set, the page needs a session cookie, and the token itself must never
reach the browser (a URL lands in history, a cookie in the profile). So this command
uses the token once, locally, to ask the server for a one-time login link
(``POST /api/v1/login-link``: valid for a minute, once), and opens that link; the
server answers it with an HttpOnly, SameSite=Strict cookie and the page.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.request
import webbrowser
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from indexer.health import server_health
from indexer.layout import Workspace


class OpenError(RuntimeError):
    """Why the page cannot be opened, in one line."""


def page_url(workspace: Workspace, timeout: float = 5.0) -> str:
    """The URL to open: the page itself, or a one-time login link when a token is set."""
    try:
        mcp_url = workspace.url_file.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        raise OpenError(
            f"no {workspace.url_file.name} in {workspace.root}: start the indexer first "
            f"(indexer serve --workspace {workspace.root})"
        ) from None
    if server_health(mcp_url) is None:
        raise OpenError(f"{workspace.url_file} says {mcp_url}, but nothing answers there")
    base = mcp_url.rstrip("/").removesuffix("/mcp")
    token = _read_token(workspace.token_file)
    if token is None:
        return f"{base}/ui/"
    request = urllib.request.Request(
        f"{base}/api/v1/login-link",
        data=b"{}",
        method="POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            answer = json.loads(response.read())
    except urllib.error.HTTPError as err:
        raise OpenError(
            f"the indexer refused a login link ({err.code}): is the token current?"
        ) from None
    except (urllib.error.URLError, OSError, ValueError) as err:
        raise OpenError(f"could not ask the indexer for a login link ({err})") from None
    return base + str(answer["path"])


def register(subparsers: Any) -> None:
    """Add the ``open`` subcommand to the ``indexer`` CLI's subparsers."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "open",
        help="open the browser page of the running indexer (logs in with a one-time link)",
        description=(
            "Open the browser page of the indexer serving W. With a token set, the token "
            "is used once, locally, for a one-time login link (valid a minute, once) that "
            "sets an HttpOnly, SameSite=Strict cookie; the token never reaches the browser."
        ),
    )
    parser.add_argument(
        "--workspace", default=None, help="workspace folder W (default: $INDEXER_WORKSPACE)"
    )
    parser.add_argument(
        "--print", action="store_true", help="print the URL instead of opening a browser"
    )
    parser.set_defaults(func=cmd_open)


def cmd_open(args: argparse.Namespace, environ: Mapping[str, str] = os.environ) -> int:
    root = args.workspace or environ.get("INDEXER_WORKSPACE", "")
    if not root:
        print("indexer open: pass --workspace W or set INDEXER_WORKSPACE", file=sys.stderr)
        return 1
    try:
        url = page_url(Workspace(Path(root).expanduser().resolve()))
    except OpenError as err:
        print(f"indexer open: {err}", file=sys.stderr)
        return 1
    if args.print:
        print(url)
        return 0
    if not webbrowser.open(url):
        print(f"indexer open: no browser found; open this link within a minute:\n{url}")
    return 0


def _read_token(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8").strip() or None
    except FileNotFoundError:
        return None
