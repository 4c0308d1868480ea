"""The commands the agent client's messages tell the user to run are run as printed by
a POSIX shell (``sh -c``), for a workspace whose name holds spaces, quotes, ``$``,
a command substitution and non-ASCII: the paths were printed unquoted, so a pasted
``indexer serve --workspace /x/my ws`` ran as other words (or expanded ``$HOME``).

The first is run for real (it starts the server the client then writes through); the
others are run with ``indexer`` a shell function that prints the words it was given.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.agent_stack import run_here
from helpers.indexer_process import QUIET_ENV, wait_for

from indexer.health import server_health
from shared.workspace import Workspace

pytestmark = pytest.mark.e2e

HOSTILE = 'my ws "q" it\'s $HOME $(touch pwned) `id` é 記憶'


def dead_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def client(workspace: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``agent-client event`` on ``workspace``, run in this process (``run_here``: a
    process of its own was a Python start of 2-6 s at load, five a test)."""
    env = {
        **os.environ,
        "AGENT_CLIENT_WORKSPACE": str(workspace),
        "AGENT_CLIENT_LANG": "en",
        "AGENT_CLIENT_CONNECT_TIMEOUT": "2",
    }
    argv = ["event", "--title", "T", *args, "x"]
    return subprocess.CompletedProcess(argv, *run_here(env, *argv))


def suggested(stderr: str) -> str:
    """The command a message names between backticks (the path may hold one too)."""
    start = stderr.index("`indexer ") + 1
    return stderr[start : stderr.rindex("`")]


def words_run(command: str, cwd: Path) -> list[str]:
    """The words ``sh`` hands ``indexer`` when it runs ``command`` as printed."""
    script = "indexer() { printf '%s\\0' \"$@\"; }; " + command
    done = subprocess.run(["sh", "-c", script], cwd=cwd, capture_output=True, timeout=10)
    assert done.returncode == 0, done.stderr
    return done.stdout.decode().split("\0")[:-1]


def test_each_suggested_command_runs_as_printed(tmp_path: Path) -> None:
    workspace = tmp_path / HOSTILE
    workspace.mkdir()
    said = client(workspace)  # no URL file: "start `indexer serve --workspace W`"
    assert said.returncode == 3, said.stderr
    command = suggested(said.stderr)
    run_indexer = f'indexer() {{ exec {shlex.quote(sys.executable)} -m indexer "$@"; }}; '
    log = (tmp_path / "serve.log").open("w")
    server = subprocess.Popen(
        ["sh", "-c", run_indexer + command],
        cwd=tmp_path,
        env={**os.environ, **QUIET_ENV},
        stdout=subprocess.DEVNULL,
        stderr=log,
        start_new_session=True,
    )
    try:
        url_file = workspace / "indexer.mcp.url"
        url = wait_for(lambda: url_file.exists() and url_file.read_text().strip(), 30)
        ready = lambda: (server_health(url, Workspace(workspace)) or {}).get("index_ready")  # noqa: E731
        wait_for(ready, 30)
        assert client(workspace).returncode == 0  # the server it started is this one's

        other = tmp_path / f"other {HOSTILE}"  # a URL file naming another's server
        other.mkdir()
        shutil.copy(url_file, other / "indexer.mcp.url")
        said = client(other)
        assert said.returncode == 3 and "serves another" in said.stderr, said.stderr
        assert words_run(suggested(said.stderr), tmp_path) == ["serve", "--workspace", str(other)]
    finally:
        os.killpg(server.pid, signal.SIGKILL)  # its URL file stays: one that stopped
        server.wait(10)
        log.close()
    said = client(workspace)
    assert said.returncode == 3 and "is left from one" in said.stderr, said.stderr
    assert words_run(suggested(said.stderr), tmp_path) == ["serve", "--workspace", str(workspace)]

    refused = tmp_path / f"dead {HOSTILE}"  # an indexer at a port nothing answers
    refused.mkdir()
    (refused / "indexer.mcp.url").write_text(f"http://127.0.0.1:{dead_port()}/mcp\n")
    said = client(refused)
    assert said.returncode == 3 and "cannot connect" in said.stderr, said.stderr
    assert words_run(suggested(said.stderr), tmp_path) == ["serve", "--workspace", str(refused)]
    assert not (tmp_path / "pwned").exists()
