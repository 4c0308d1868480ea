"""The perf bench's harness: an ``indexer serve`` on a workspace (with the ``echo`` floor),
a client to it, and the figures' arithmetic (p50, ratios, timing one call)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from fastmcp import Client

from bench.vault_queries import QUIET


class Server:
    """``indexer serve`` on a workspace, stderr to a log file next to it."""

    def __init__(self, workspace: Path, *args: str, env: dict[str, str] | None = None) -> None:
        self.workspace = workspace
        self.url_file = workspace / "indexer.mcp.url"
        self.url_file.unlink(missing_ok=True)
        workspace.mkdir(parents=True, exist_ok=True)
        self.log_path = workspace.parent / f"serve-{workspace.name}.log"
        self.started = time.perf_counter()
        with open(self.log_path, "w") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "indexer", "serve", "--workspace", str(workspace), *args],
                stdout=subprocess.DEVNULL,
                stderr=log,
                env={**os.environ, **QUIET, "INDEXER_ECHO_TOOL": "1", **(env or {})},
            )

    def wait_url(self, timeout: float = 600) -> str:
        deadline = time.monotonic() + timeout
        while True:
            if self.url_file.exists():
                text = self.url_file.read_text()
                if text.endswith("\n"):
                    return text.strip()
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the server did not start: {self.log_path.read_text()}")
            time.sleep(0.002)

    def log(self) -> str:
        return self.log_path.read_text()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@contextlib.asynccontextmanager
async def serving(workspace: Path, *args: str):  # type: ignore[no-untyped-def]
    server = Server(workspace, *args)
    try:
        url = server.wait_url()
        async with Client(url, timeout=600) as client:
            yield server, client
    finally:
        server.stop()


def p50(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def ratio(value: float, floor: float) -> str:
    return f"{value / floor:.2f}x" if floor else "-"


async def timed(call: Callable[[], Awaitable[Any]]) -> float:
    began = time.perf_counter()
    await call()
    return time.perf_counter() - began


async def wait_ready(client: Client) -> None:
    deadline = time.monotonic() + 1800
    while not ((await client.call_tool("status", {})).structured_content or {}).get("index_ready"):
        if time.monotonic() > deadline:
            raise RuntimeError("the index never became ready")
        await asyncio.sleep(0.1)


def cpu_seconds(pid: int) -> float:
    """User and system CPU a process has used (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def wait_quiet(server: Server, timeout: float = 60) -> None:
    """Until the server is idle (under 5% of a core for a second): once ready, it may
    still be writing folder summaries, and a figure would measure them too."""
    deadline = time.monotonic() + timeout
    used, calm = cpu_seconds(server.proc.pid), 0
    while calm < 4 and time.monotonic() < deadline:
        await asyncio.sleep(0.25)
        now = cpu_seconds(server.proc.pid)
        calm = calm + 1 if now - used < 0.0125 else 0
        used = now
