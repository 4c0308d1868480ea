"""A proxy set in the environment (``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY``) is for
the outside world: the calls to the indexer, always on this machine, never go through it.

A corporate proxy cannot reach this machine's loopback (``helpers.recording_proxy``
answers 502, as one would), and it would be sent the token. The MCP calls of the agent
client never went through it (their HTTP client has a transport of its own, which
httpx takes for "no proxy"); but the client's check of a refused token did (the
refusal was worded "cannot connect ... is `indexer serve` running?", and the token went
to the proxy), and so did every request of the indexer's own commands (urllib's
``urlopen``): ``indexer status`` said a running server was "not answering".
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest
from helpers.indexer_process import RunningIndexer, start_indexer
from helpers.recording_proxy import RecordingProxy

TOKEN = "tok-" + "p" * 40


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningIndexer]:
    ws = tmp_path_factory.mktemp("proxied") / "ws"
    vault = ws / "memory/languages/en/vault"
    vault.mkdir(parents=True)
    (vault / "fruit.md").write_text("# Fruit\n\nA kiwi a day.\n")
    running = start_indexer(ws, "--token", TOKEN)
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
def proxy() -> Iterator[RecordingProxy]:
    recording = RecordingProxy()
    try:
        yield recording
    finally:
        recording.stop()


def run(proxy: RecordingProxy, *args: str) -> subprocess.CompletedProcess[str]:
    """A command of ours (``agent_client``, ``indexer``) with every proxy variable set."""
    return subprocess.run(
        [sys.executable, "-m", *args],
        env=proxy.env(dict(os.environ)),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_agent_client_calls_the_indexer_directly(
    served: RunningIndexer, proxy: RecordingProxy
) -> None:
    """An event logged (a change), a search and a read, with every proxy variable set:
    each reaches the indexer, and the proxy is asked nothing."""
    ws = str(served.workspace)
    common = ("--workspace", ws, "--lang", "en")
    logged = run(proxy, "agent_client", "event", *common, "--title", "Proxied", "a mango day")
    assert logged.returncode == 0, logged.stderr
    found = run(proxy, "agent_client", "search", *common, "mango")
    assert found.returncode == 0 and "Proxied" in found.stdout, (found.stdout, found.stderr)
    day = found.stdout.split()[0]
    read = run(proxy, "agent_client", "read", *common, day)
    assert read.returncode == 0 and "a mango day" in read.stdout, read.stderr
    assert proxy.asked == []


def test_a_refused_token_is_said_so_and_never_sent_to_the_proxy(
    served: RunningIndexer, proxy: RecordingProxy
) -> None:
    """A token the server refuses: the client asks the server (not the proxy) whether
    it says 401, and says so: "refuses its token", not "is `indexer serve` running?"."""
    token_file = served.workspace / "indexer.mcp.token"
    kept = token_file.read_text()
    token_file.write_text("wrong-" + "w" * 40 + "\n")
    try:
        ws = str(served.workspace)
        said = run(proxy, "agent_client", "search", "--workspace", ws, "--lang", "en", "x")
    finally:
        token_file.write_text(kept)
    assert said.returncode == 3, said.stderr
    assert "answers but refuses its token (HTTP 401)" in said.stderr, said.stderr
    assert proxy.asked == []


def test_the_indexer_s_commands_ask_the_server_directly(
    served: RunningIndexer, proxy: RecordingProxy
) -> None:
    """``indexer status`` finds the server running, ``indexer config-snippet`` gives its
    URL, ``indexer search`` asks it: the proxy is asked nothing (the token neither)."""
    ws = str(served.workspace)
    status = run(proxy, "indexer", "status", "--workspace", ws)
    assert status.returncode == 0 and f"server: running at {served.url}" in status.stdout, (
        status.stdout
    )
    snippet = run(proxy, "indexer", "config-snippet", "--workspace", ws)
    assert snippet.returncode == 0 and served.url in snippet.stdout, snippet.stderr
    search = run(proxy, "indexer", "search", "--workspace", ws, "--lang", "en", "kiwi")
    assert search.returncode == 0 and "fruit.md" in search.stdout, search.stderr
    assert proxy.asked == []
