"""Three runs of ``agent-client remember`` at once over entries killed clients left:
the run that took the killed entry finished it while a third run, which had found its
record held as it swept for orphans, was busy with another killed entry; when the
third came to the same entry, the record was gone and it merged the entry afresh, a
second time under a second id. Each entry is merged once: the third waits for the
record it saw held and tells its outcome."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.agent_stack import Stack, agent_stack, entry_ids
from helpers.indexer_process import vault_dir, wait_for
from helpers.llm_stub import Message, final, tool_call

pytestmark = pytest.mark.e2e

FACTS = {
    "Ночной поезд": "Поезд в Казань уходит в 23:40 с третьего пути.",
    "駐車場": "駐車場は地下二階、区画はB-17です。",
}
TRAIN, PARKING = FACTS


def slug(title: str) -> str:
    return str(sum(map(ord, title)))  # (any script: a name of digits)


class Gates:
    """The stub's script: read the entry's note, write it, confirm; an answer may be
    held back at (title, tool results so far) until it is let go."""

    def __init__(self) -> None:
        self.at: dict[tuple[str, int], tuple[threading.Event, threading.Event]] = {}

    def hold(self, title: str, done: int) -> tuple[threading.Event, threading.Event]:
        self.at[(title, done)] = gate = (threading.Event(), threading.Event())
        return gate

    def __call__(self, request: dict[str, Any], turn: int) -> Message:
        said = " ".join(str(m.get("content")) for m in request["messages"] if m["role"] == "user")
        title = next(t for t in FACTS if FACTS[t] in said)
        done = sum(m["role"] == "tool" for m in request["messages"])
        gate = self.at.pop((title, done), None)
        if gate is not None:
            gate[0].set()
            gate[1].wait(60)
        note = f"items/{slug(title)}.md"
        if done == 0:
            return tool_call("read", path=note)
        if done == 1:
            return tool_call("write", path=note, content=f"# {title}\n\n{FACTS[title]}\n")
        return final([note], f"Noted {title}.")


@pytest.fixture
def gates() -> Gates:
    return Gates()


@pytest.fixture
def stack(tmp_path: Path, gates: Gates) -> Iterator[Stack]:
    yield from agent_stack(tmp_path / "ws", gates)


def remember(title: str, env: dict[str, str]) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "agent_client", "remember", "--title", title, FACTS[title]]
    return subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def held_run(
    gates: Gates, title: str, done: int, env: dict[str, str]
) -> tuple[subprocess.Popen[str], threading.Event]:
    """``remember title`` with its merge held at ``done`` tool results: the run, and
    the event that lets the answer go."""
    held, release = gates.hold(title, done)
    process = remember(title, env)
    if not held.wait(60):
        process.kill()
        raise AssertionError(process.communicate(timeout=10))
    return process, release


def killed(process: subprocess.Popen[str], release: threading.Event) -> None:
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=10)
    release.set()


def test_a_third_run_waits_for_the_entry_it_saw_held(stack: Stack, gates: Gates) -> None:
    server, stub, env = stack
    stub.threaded = True  # (the runs' merges held back one at a time, the others answered)
    parking, parking_go = held_run(gates, PARKING, 1, env)  # alive: its record held
    killed(*held_run(gates, TRAIN, 2, env))  # its note written: a half merge left
    second, second_go = held_run(gates, TRAIN, 0, env)  # took the train's record
    killed(parking, parking_go)  # the parking entry is an orphan now
    third_at, third_go = gates.hold(PARKING, 0)
    third = remember(TRAIN, env)  # the train's record held; it takes the parking one
    try:
        assert third_at.wait(60), third.communicate(timeout=5)
        second_go.set()
        out, err = second.communicate(timeout=120)
        assert second.returncode == 0 and f"Noted {TRAIN}." in out, out + err
    finally:
        second_go.set()
        third_go.set()
    out, err = third.communicate(timeout=120)
    assert third.returncode == 0, err
    assert f"Noted {TRAIN}." in out and "a stopped client left" in err, out + err
    vault = vault_dir(server, "en")
    for title, fact in FACTS.items():
        text = (vault / f"items/{slug(title)}.md").read_text()
        assert text.count(fact) == 1 and text.endswith(f"# {title}\n\n{fact}\n"), text
        assert len(set(entry_ids(server, f"items/{slug(title)}.md"))) == 1, title
    wait_for(lambda: not list((server.workspace / ".agent-client").rglob("*.json")), 5)
