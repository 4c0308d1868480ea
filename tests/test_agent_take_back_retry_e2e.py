"""A dead writer's entry run again, its take-back cut off by the indexer going away, then
tried on the indexer the URL file names next: the take-back is tried again there before
the merge. It was skipped (the entry's "left" mark was spent on the first try), and the
entry merged on top of the dead writer's half merge: its text twice in the note.

The indexer "restarts on another port" through a TCP relay the URL file names first: the
relay drops the connection at the ``undo`` call and the URL file then names the indexer
itself (a network fault, not a change to our code).
"""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.agent_stack import Stack, agent_stack, hold_at, run_here
from helpers.indexer_process import vault_dir
from helpers.llm_stub import Message, final, tool_call

pytestmark = pytest.mark.e2e

TITLE, FACT = "Staging server", "The staging server moved to host quokka-7 in rack twelve."
NOTE, INDEX = "items/staging-server.md", "items/staging-server-index.md"


def appending_step(request: dict[str, Any], turn: int) -> Message:
    """Read the note, write it with the fact added to what the read found, write the
    index note, confirm: a merge on top of a merge shows as the fact twice."""
    tools = [str(m.get("content")) for m in request["messages"] if m["role"] == "tool"]
    if not tools:
        return tool_call("read", path=NOTE)
    if len(tools) == 1:
        try:
            found = str(json.loads(tools[0])["content"])
        except (ValueError, KeyError, TypeError):  # (not there yet: an error's words)
            found = f"# {TITLE}\n"
        return tool_call("write", path=NOTE, content=f"{found.rstrip()}\n\n{FACT}\n")
    if len(tools) == 2:
        return tool_call("write", path=INDEX, content=f"- {TITLE}: {FACT}\n")
    return final([NOTE, INDEX], f"Noted {TITLE}.")


class DroppingRelay:
    """Relays TCP to ``target`` (its own address in the Host header made the target's);
    at the first request naming the ``undo`` tool it drops the connection unsent and
    writes ``then`` into ``url_file``."""

    def __init__(self, target: tuple[str, int], url_file: Path, then: str) -> None:
        self.target, self.url_file, self.then = target, url_file, then
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.dropped = threading.Event()
        self.own = f"127.0.0.1:{self.port}".encode()
        self.theirs = f"{target[0]}:{target[1]}".encode()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.target)
            threading.Thread(target=self._pump, args=(client, server, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, False), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, upstream: bool) -> None:
        try:
            while data := source.recv(65536):
                if upstream and not self.dropped.is_set() and b'"undo"' in data:
                    self.url_file.write_text(self.then)
                    self.dropped.set()
                    break
                if upstream:  # (the Host the indexer serves: it refuses others, 421)
                    data = data.replace(self.own, self.theirs)
                sink.sendall(data)
        except OSError:
            pass
        for end in (source, sink):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)
            end.close()

    def close(self) -> None:
        self.listener.close()


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[Stack]:
    yield from agent_stack(tmp_path / "ws", appending_step)


def remember(env: dict[str, str]) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "agent_client", "remember", "--title", TITLE, FACT]
    return subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def test_a_take_back_cut_off_is_tried_again_on_the_next_indexer(
    stack: Stack,
) -> None:
    server, stub, env = stack
    held, release = hold_at(stub, 2, appending_step)  # (the note written, not the index)
    first = remember(env)
    try:
        assert held.wait(60), first.communicate(timeout=5)
        time.sleep(0.2)
    finally:
        first.send_signal(signal.SIGKILL)
        first.communicate(timeout=10)
        release.set()
    note = vault_dir(server, "en") / NOTE
    assert note.read_text().count(FACT) == 1  # (the dead writer's half merge)
    stub.run(appending_step)
    url_file = server.workspace / "indexer.mcp.url"
    real = url_file.read_text()
    host, port = real.strip().removeprefix("http://").split("/")[0].rsplit(":", 1)
    relay = DroppingRelay((host, int(port)), url_file, real)
    try:
        url_file.write_text(f"http://127.0.0.1:{relay.port}/mcp\n")
        # (the same command again, the dead writer's entry; in this process: none killed)
        code, out, err = run_here(env, "remember", "--title", TITLE, FACT)
    finally:
        relay.close()
        url_file.write_text(real)
    assert relay.dropped.is_set(), err
    assert code == 0, out + err
    assert note.read_text().count(FACT) == 1, note.read_text()
    index = vault_dir(server, "en") / INDEX
    assert index.read_text().count(FACT) == 1, index.read_text()
    assert not list((server.workspace / ".agent-client").rglob("*.json"))
