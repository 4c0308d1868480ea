"""Find the indexer: ``W/indexer.mcp.url`` (and the token), as they are on every connect.

The indexer may have restarted on another port since the last connection, so each look
stats the files; their text is read again only when that stat changed (``_Remembered``:
the writer looks at every entry). Whether a server holds the serving lock is asked every
time: a crash leaves the URL file as it was. The indexer may also have restarted on the
same port (``--port``): every start writes the URL file anew (temp file and rename), so
the file's inode and mtime tell one start from the next, and a client keeps what it
learnt of a server (its tool list) for as long as that start is the one serving.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
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
        url, info = _URLS.read(url_file)
        instance = _instance(url_file) if info is None else (info.st_ino, info.st_mtime_ns)
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
        token, _ = _TOKENS.read(token_file)
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


# A file changed this long (or less) before it was read may change again within the same
# tick of the file system's clock (a few ms) and keep its stat: it is not remembered.
SETTLED_NS = 1_000_000_000


class _Remembered:
    """The text ``reader`` read from each file, with the stat it had just before: read
    again once any of its identity, size, times, owner or mode changed (a file replaced,
    rewritten, handed to another user, made writable by others). Only a text read whole
    is remembered: a missing file, an empty one and a refusal are read, and said, anew."""

    def __init__(self, reader: Callable[[Path], str | None]) -> None:
        self._reader = reader
        self._seen: dict[Path, tuple[tuple[int, ...], str]] = {}
        self._lock = threading.Lock()  # (the memory tool looks from a thread of its own)

    def read(self, path: Path) -> tuple[str | None, os.stat_result | None]:
        """The file's text, and the stat it was remembered by (None: read now)."""
        try:
            info = os.stat(path)
        except OSError:
            info = None
        key = None if info is None else _key(info)
        with self._lock:
            seen = self._seen.get(path)
        if seen is not None and seen[0] == key:
            return seen[1], info
        text = self._reader(path)
        settled = info is not None and time.time_ns() - _changed_ns(info) > SETTLED_NS
        with self._lock:
            if text is not None and key is not None and settled:
                self._seen[path] = (key, text)
            else:
                self._seen.pop(path, None)
        return text, None


def _key(info: os.stat_result) -> tuple[int, ...]:
    """What tells one state of a file from another."""
    return (
        info.st_dev,
        info.st_ino,
        info.st_size,
        info.st_mtime_ns,
        info.st_ctime_ns,
        info.st_mode,
        info.st_uid,
    )


def _changed_ns(info: os.stat_result) -> int:
    """When the file last changed, its text or its inode (owner, mode, a rename)."""
    return max(info.st_mtime_ns, info.st_ctime_ns)


_URLS = _Remembered(read_url_file)
_TOKENS = _Remembered(read_token_file)
