"""Start and stop a real ``indexer serve`` subprocess for end-to-end tests."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import fastmcp

from indexer.health import server_health
from shared.workspace import Workspace

QUIET_ENV = {
    "FASTMCP_SHOW_SERVER_BANNER": "false",
    "FASTMCP_CHECK_FOR_UPDATES": "off",
    "FASTMCP_LOG_LEVEL": "ERROR",
}


def wait_for(predicate, timeout: float, interval: float = 0.02, what: str = "condition"):
    """Poll ``predicate`` until it returns a truthy value or the deadline passes."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


@dataclass
class RunningIndexer:
    workspace: Path
    process: subprocess.Popen
    url: str
    token: str | None = None
    log_path: Path | None = None
    extra: dict = field(default_factory=dict)

    def client(self, **kwargs) -> fastmcp.Client:
        kwargs.setdefault("timeout", 30)
        return fastmcp.Client(self.url, auth=self.token, **kwargs)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 15) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise

    def log(self) -> str:
        return self.log_path.read_text() if self.log_path and self.log_path.exists() else ""


def spawn_indexer(
    workspace: Path, *args: str, env: dict | None = None, prefix: Sequence[str] = ()
) -> subprocess.Popen:
    """Start ``indexer serve`` without waiting; stderr goes to ``workspace/../serve-*.log``.
    ``prefix``: a command it runs under (``helpers.permissions.as_plain_user``)."""
    workspace.mkdir(parents=True, exist_ok=True)
    log_path = workspace.parent / f"serve-{workspace.name}-{time.monotonic_ns()}.log"
    full_env = {**os.environ, **QUIET_ENV, **(env or {})}
    full_env.pop("INDEXER_MCP_TOKEN", None) if "--token" in args else None
    with open(log_path, "w") as log_file:  # the child keeps its own copy of the descriptor
        proc = subprocess.Popen(
            [
                *prefix,
                sys.executable,
                "-m",
                "indexer",
                "serve",
                "--workspace",
                str(workspace),
                *args,
            ],
            stdout=subprocess.DEVNULL,
            stderr=log_file,
            env=full_env,
        )
    proc.log_path = log_path  # type: ignore[attr-defined]
    return proc


def start_indexer(
    workspace: Path,
    *args: str,
    env: dict | None = None,
    timeout: float = 30,
    settled: bool = True,
    prefix: Sequence[str] = (),
) -> RunningIndexer:
    """Start ``indexer serve`` and wait until its URL file appears and, when ``settled``,
    until its start-up reconcile is done (``/health``: ``index_ready``).

    A note saved outside the tools while that first reconcile runs may be indexed by it
    rather than reported by the watcher, and so not recorded in history at once (by
    design: see ``indexer.vault.timeline``); tests that edit right after a start wait.
    """
    url_file = workspace / "indexer.mcp.url"
    old = url_file.read_text() if url_file.exists() else None
    proc = spawn_indexer(workspace, *args, env=env, prefix=prefix)

    def ready() -> str | None:
        if proc.poll() is not None:
            raise RuntimeError(
                f"indexer exited with {proc.returncode}: {proc.log_path.read_text()}"
            )
        try:  # (a killed server's stale file is removed by the new one as it starts)
            text = url_file.read_text()
        except FileNotFoundError:
            return None
        return text.strip() if text != old and text.endswith("\n") else None

    try:
        url = wait_for(ready, timeout, what="the indexer's URL file")
        if settled:
            wait_for(
                lambda: (server_health(url, Workspace(workspace)) or {}).get("index_ready"),
                timeout,
                what="the start-up reconcile",
            )
    except BaseException:  # a server that never got ready is not left running
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        raise
    token = None
    if "--token" in args:
        token = args[args.index("--token") + 1]
    elif env and env.get("INDEXER_MCP_TOKEN"):
        token = env["INDEXER_MCP_TOKEN"]
    return RunningIndexer(workspace, proc, url, token, proc.log_path)


def vault_dir(server: RunningIndexer, lang: str) -> Path:
    """The vault folder of ``lang`` in the server's workspace."""
    return server.workspace / "memory" / "languages" / lang / "vault"


def serving(workspace: Path, *args: str, env: dict | None = None) -> Iterator[RunningIndexer]:
    """``start_indexer`` for a fixture to ``yield from``: stopped afterwards."""
    running = start_indexer(workspace, *args, env=env)
    try:
        yield running
    finally:
        running.stop()
