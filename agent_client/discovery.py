"""Find the indexer: read ``W/indexer.mcp.url`` (and the token) afresh on every connect.

The indexer may have restarted on another port since the last connection, so nothing
here is cached. It may also have restarted on the same port (``--port``): every start
writes the URL file anew (temp file and rename), so the file's inode and mtime tell one
start from the next, and a client keeps what it learnt of a server (its tool list) for
as long as that start is the one serving.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from shared.errors import ConfigError, IndexerOfflineError
from shared.workspace import (
    Workspace,
    older_server,
    read_token_file,
    read_url_file,
    server_serving,
    shell_word,
)


@dataclass(frozen=True)
class Endpoint:
    """Where the indexer's MCP server answers, and the bearer token it wants (if any)."""

    url: str
    token: str | None = None
    instance: tuple[int, int] | None = None  # the URL file's (inode, mtime): which start


def discover(url_file: Path, token_file: Path) -> Endpoint:
    """Read the URL (and token) files; ``IndexerOfflineError`` when there is no usable URL."""
    try:
        url = read_url_file(url_file)
        instance = _instance(url_file)
    except OSError as exc:
        raise IndexerOfflineError(f"cannot read {url_file}: {exc.strerror}") from None
    if url is None:
        raise IndexerOfflineError(
            f"no indexer URL file at {url_file}: start `indexer serve --workspace "
            f"{shell_word(url_file.parent)}`"
        )
    if not url.startswith(("http://", "https://")):
        raise IndexerOfflineError(f"{url_file} holds no http(s) URL: {url[:80]!r}")
    workspace = Workspace(url_file.parent)
    serving = server_serving(workspace)
    older = older_server(workspace) if serving is False else None
    if older is not None:  # (an upgrade without a restart: no serving lock to trust)
        raise IndexerOfflineError(
            f"the indexer running on {url_file.parent} (pid {older}) holds no serving lock"
            " (started before an upgrade, or its serving file deleted), so this client"
            " cannot trust it: stop it and start it again"
        )
    if serving is False or (serving and _instance(url_file) != instance):
        # A URL file a crash left: whatever answers at its port now is no indexer of this
        # workspace, and it would be sent the token before it could be told apart. (The
        # serving lock, not the workspace's: ``indexer reindex`` holds that one too. A
        # server starting removes such a file before it takes that lock: one that changed
        # since it was read may be that file, read just before.)
        raise IndexerOfflineError(
            f"no indexer is running on {url_file.parent} ({url_file.name} is left from one"
            f" that stopped; its {url[:80]} was not tried): start `indexer serve"
            f" --workspace {shell_word(url_file.parent)}`"
        )
    try:
        token = read_token_file(token_file)
    except OSError as exc:
        raise IndexerOfflineError(f"cannot read {token_file}: {exc.strerror}") from None
    except ConfigError as exc:
        raise IndexerOfflineError(exc.message) from None
    return Endpoint(url=url, token=token, instance=instance)


def _instance(url_file: Path) -> tuple[int, int] | None:
    try:
        info = url_file.stat()
    except FileNotFoundError:
        return None
    return info.st_ino, info.st_mtime_ns
