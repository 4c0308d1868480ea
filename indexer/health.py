"""Asking a running indexer whether it is alive: ``GET /health`` beside its MCP URL.

Used by the CLI (``status``, ``config-snippet``, ``open``) to tell a live URL file from a
stale one. Every request the CLI makes to the running indexer goes through ``open_local``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from shared.errors import OperationalError
from shared.workspace import (
    Workspace,
    read_url_file,
    server_serving,
    shell_word,
    workspace_id,
)

if TYPE_CHECKING:
    import urllib.request


def open_local(request: str | urllib.request.Request, timeout: float) -> Any:
    """``urlopen`` for the indexer on this machine, never through a proxy the environment
    names (``HTTP_PROXY``...: urllib uses it for every host but those ``NO_PROXY`` lists):
    a proxy set for the outside world cannot reach this machine's loopback (the server
    looked dead), and would be sent the token."""
    import urllib.request  # (with http.client, 30 ms of every command's start)

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    return opener.open(request, timeout=timeout)


def base_url(url: str) -> str:
    """``http://host:port/mcp`` -> ``http://host:port`` (where /health, /api and /ui are)."""
    return url.rstrip("/").removesuffix("/mcp")


def health_url(url: str) -> str:
    """``http://host:port/mcp`` -> ``http://host:port/health``."""
    return base_url(url) + "/health"


def server_health(url: str, workspace: Workspace, timeout: float = 2.0) -> dict | None:
    """The JSON of ``GET /health`` next to the MCP ``url``, or None if nothing answers or
    what answers serves another workspace (a stale URL file whose port was taken since),
    or when no server holds the workspace's serving lock (a crash left the URL file:
    whatever took its port is asked nothing, and is sent no token after)."""
    if server_serving(workspace) is False:
        return None
    import urllib.error  # (with http.client, 30 ms of every command's start, `serve`'s too)

    try:
        with open_local(health_url(url), timeout) as response:
            data = json.loads(response.read())
    except (urllib.error.URLError, OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("status") != "ok":
        return None
    return data if data.get("workspace_id") == workspace_id(workspace.root) else None


def live_server_url(workspace: Workspace) -> str:
    """The MCP URL of the indexer serving ``workspace`` now; ``OperationalError`` saying
    what to do when there is no URL file or nothing answers at it (a crash left it)."""
    return live_server(workspace)[0]


def live_server(workspace: Workspace) -> tuple[str, dict]:
    """``live_server_url`` with what its ``/health`` said (``config-snippet`` reads
    ``port_fixed`` there: only the server knows whether ``--port`` chose its port)."""
    url = read_url_file(workspace.url_file)
    if url is None:
        raise OperationalError(
            f"no {workspace.url_file.name} in {workspace.root}: start the indexer first "
            f"(indexer serve --workspace {shell_word(workspace.root)})"
        )
    health = server_health(url, workspace)
    if health is None:
        raise OperationalError(
            f"{workspace.url_file} says {url}, but no indexer of this workspace answers "
            "there (a stale file left by a crash?): start the indexer, then run this again"
        )
    return url, health


def check_no_token_needed(url: str, workspace: Workspace, timeout: float = 2.0) -> None:
    """With no token file, make sure the server at ``url`` asks for none: one that does
    (the file deleted, or not copied beside a service's settings) would refuse whatever
    is made without it (a client's snippet, a page link) with 401 only later."""
    import urllib.error

    try:
        with open_local(base_url(url) + "/ui/", timeout):
            return
    except urllib.error.HTTPError as err:
        if err.code != 401:
            return
    except (urllib.error.URLError, OSError, ValueError):
        return
    raise OperationalError(
        f"the indexer at {url} asks for a token, but {workspace.token_file} is missing: "
        "restart the indexer (it writes the file), or write its INDEXER_MCP_TOKEN there"
    )
