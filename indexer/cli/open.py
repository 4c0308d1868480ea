"""``indexer open``: open the browser page of the indexer serving a workspace.

With a token set, the page needs a session cookie, and the token itself must never
reach the browser (a URL lands in history, a cookie in the profile). So this command
uses the token once, locally, to ask the server for a one-time login link
(``POST /api/v1/login-link``: valid for a minute, once), and opens a 0600 page leading
to it (``indexer.cli.login_file``: on a command line the code would be every local
user's to read and redeem first); the server answers with an HttpOnly,
SameSite=Strict cookie and the page. ``--print`` prints the link itself, to paste.
"""

from __future__ import annotations

import argparse
import json
import webbrowser
from typing import Any

from indexer.cli.login_file import write_login_file
from indexer.health import base_url, check_no_token_needed, live_server_url, open_local
from shared.errors import OperationalError
from shared.workspace import Workspace, read_token_file


def page_url(workspace: Workspace, timeout: float = 5.0) -> str:
    """The URL to open: the page itself, or a one-time login link when a token is set."""
    mcp_url = live_server_url(workspace)
    base = base_url(mcp_url)
    token = read_token_file(workspace.token_file)
    if token is None:
        check_no_token_needed(mcp_url, workspace)
        return f"{base}/ui/"
    import urllib.error  # (here: 30 ms of every command's start, `serve`'s too)
    import urllib.request

    request = urllib.request.Request(
        f"{base}/api/v1/login-link",
        data=b"{}",
        method="POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    try:
        with open_local(request, timeout) as response:
            answer = json.loads(response.read())
    except urllib.error.HTTPError as err:
        raise OperationalError(
            f"the indexer refused a login link ({err.code}): is the token current?"
        ) from None
    except (urllib.error.URLError, OSError, ValueError) as err:
        raise OperationalError(f"could not ask the indexer for a login link ({err})") from None
    return base + str(answer["path"])


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add the ``open`` subcommand to the ``indexer`` CLI."""
    parser: argparse.ArgumentParser = commands.add_parser(
        "open",
        parents=[common],
        help="open the browser page of the running indexer (logs in with a one-time link)",
        description=(
            "Open the browser page of the indexer serving W. With a token set, the token "
            "is used once, locally, for a one-time login link (valid a minute, once) that "
            "sets an HttpOnly, SameSite=Strict cookie; the token never reaches the browser."
        ),
    )
    parser.add_argument(
        "--print", action="store_true", help="print the URL instead of opening a browser"
    )
    parser.set_defaults(func=cmd_open)


def cmd_open(args: argparse.Namespace) -> int:
    from indexer.cli import resolve_workspace

    workspace = resolve_workspace(args, existing=True)
    url = page_url(workspace)
    if args.print:
        print(url)
        return 0
    opened = url
    if not url.endswith("/ui/"):  # (a code: never on the browser's command line)
        opened = write_login_file(workspace, url).as_uri()
    if not webbrowser.open(opened):
        when = "" if url.endswith("/ui/") else " within a minute (it logs in once)"
        print(f"no browser found; open this link{when}:\n{url}")
    return 0
