"""``kill -9`` of ``agent-client remember`` in the middle of a model's merge, then a run
again: the entry is merged once (its notes' bytes, their history's entry ids), whether
the kill came before the model answered, between its tool calls or after its last
write; and two clients started at once after a kill merge the entry left once.

The model is the OpenAI-compatible stub; its script is a function of the request, so
each merge (the first, a recovery, a new entry) runs the same steps: read the entry's
note, write it, write a second note, confirm.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.agent_stack import Stack, agent_stack, entry_ids, hold_at, run_here
from helpers.indexer_process import RunningIndexer, start_indexer, vault_dir, wait_for
from helpers.llm_stub import LLMStub, Message, final, tool_call

pytestmark = pytest.mark.e2e

FACTS = {
    "Staging server": "The staging server moved to host quokka-7 in rack twelve.",
    "Build cache": "The build cache lives on wombat-3 and is purged on Sundays.",
    "Rack map": "Rack twelve holds the numbat switches and the tape library.",
}


def slug(title: str) -> str:
    return title.lower().replace(" ", "-")


def merge_step(request: dict[str, Any], turn: int) -> Message:
    """Read the entry's note, write it, write the index note, confirm: by the tool
    results the request holds, so every merge runs the same steps."""
    prompt = " ".join(str(m.get("content")) for m in request["messages"] if m["role"] == "user")
    title = next(t for t in FACTS if FACTS[t] in prompt)
    note, index = f"items/{slug(title)}.md", f"items/{slug(title)}-index.md"
    done = sum(m["role"] == "tool" for m in request["messages"])
    if done == 0:
        return tool_call("read", path=note)
    if done == 1:
        return tool_call("write", path=note, content=f"# {title}\n\n{FACTS[title]}\n")
    if done == 2:
        return tool_call("write", path=index, content=f"- {title}: {FACTS[title]}\n")
    return final([note, index], f"Noted {title}.")


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[Stack]:
    yield from agent_stack(tmp_path / "ws", merge_step)


def remember(title: str, env: dict[str, str]) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "agent_client", "remember", "--title", title, FACTS[title]]
    return subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def files_open(process: subprocess.Popen[str]) -> set[Path]:
    """The files ``process`` has open now (none once it is gone), by ``/proc``."""
    found = set()
    with contextlib.suppress(OSError):
        for fd in Path(f"/proc/{process.pid}/fd").iterdir():
            with contextlib.suppress(OSError):
                found.add(Path(os.readlink(fd)))
    return found


def remember_here(title: str, env: dict[str, str]) -> tuple[int, str, str]:
    """``remember`` run in this process (``run_here``), where no kill nor a run beside it
    needs a process of its own: its status, stdout and stderr."""
    return run_here(env, "remember", "--title", title, FACTS[title])


def kill_at_turn(stub: LLMStub, env: dict[str, str], title: str, turn: int) -> None:
    """Run ``remember`` and kill it (-9) while the model's answer to request ``turn``
    of its merge is held back (what it wrote before that has landed)."""
    held, release = hold_at(stub, turn, merge_step)
    process = remember(title, env)
    try:
        assert held.wait(60), process.communicate(timeout=5)
        time.sleep(0.2)
    finally:
        process.send_signal(signal.SIGKILL)
        process.communicate(timeout=10)
        release.set()
    stub.run(merge_step)


def indexer_stopped_mid_merge(server: RunningIndexer, stub: LLMStub, env: dict[str, str]) -> str:
    """Run ``remember`` and stop the indexer while the model's answer after the entry's
    note was written is held back: the run's stderr (it exited 3, the entry kept)."""
    held, release = hold_at(stub, 2, merge_step)
    first = remember("Staging server", env)
    try:
        assert held.wait(60), first.communicate(timeout=5)
        server.stop()
    finally:
        release.set()
    _out, err = first.communicate(timeout=120)
    assert first.returncode == 3 and "kept" in err, err
    stub.run(merge_step)
    return err


def check_merged_once(server: RunningIndexer, env: dict[str, str], title: str) -> None:
    vault = vault_dir(server, "en")
    note, index = vault / f"items/{slug(title)}.md", vault / f"items/{slug(title)}-index.md"
    assert note.read_text().count(FACTS[title]) == 1, note.read_text()
    assert index.read_text().count(FACTS[title]) == 1, index.read_text()
    written = entry_ids(server, f"items/{slug(title)}.md")
    written += entry_ids(server, f"items/{slug(title)}-index.md")
    assert len(set(written)) == 1, written  # one entry wrote them (a recovery undid first)
    others = [p for p in (vault / "items").glob("*.md") if FACTS[title] in p.read_text()]
    assert sorted(others) == sorted([note, index])


@pytest.mark.parametrize("turn", [0, 2, 3], ids=["before-answer", "between-calls", "after-write"])
def test_a_killed_remember_run_again_merges_once(stack: Stack, turn: int) -> None:
    server, stub, env = stack
    kill_at_turn(stub, env, "Staging server", turn)
    code, _out, err = remember_here("Staging server", env)
    assert code == 0, err
    check_merged_once(server, env, "Staging server")


def test_another_command_finishes_the_killed_entry(
    stack: Stack,
) -> None:
    """The entry a killed client left is not lost: the next remember (of another
    entry) merges it too, once, and says so."""
    server, stub, env = stack
    kill_at_turn(stub, env, "Staging server", 2)
    code, out, err = remember_here("Build cache", env)
    assert code == 0, err
    assert "Staging server" in out + err
    check_merged_once(server, env, "Staging server")
    check_merged_once(server, env, "Build cache")


def test_two_clients_at_once_finish_the_killed_entry_once(
    stack: Stack,
) -> None:
    """Each looks for what killed clients left: one takes the entry, the other passes it."""
    server, stub, env = stack
    kill_at_turn(stub, env, "Staging server", 3)
    both = [remember("Build cache", env), remember("Rack map", env)]
    said = ""
    for process in both:
        _out, err = process.communicate(timeout=180)
        assert process.returncode == 0, err
        said += err
    assert said.count("a stopped client left (Staging server)") == 1, said
    for title in FACTS:
        check_merged_once(server, env, title)
    wait_for(lambda: not list((server.workspace / ".agent-client").rglob("*.json")), 5)


def test_the_command_run_again_while_another_finishes_it_merges_once(
    stack: Stack,
) -> None:
    """Run again twice: the first run takes the killed entry and merges it (its model
    slow); the second, started meanwhile, found its record held, took its own entry
    for a new one and merged the fact a second time under another id. It waits for the
    first and tells its outcome."""
    server, stub, env = stack
    kill_at_turn(stub, env, "Staging server", 2)
    held, release = threading.Event(), threading.Event()

    def slow(request: dict[str, Any], number: int) -> Message:
        if not held.is_set():  # (the first run's first request)
            held.set()
            release.wait(60)
        return merge_step(request, number)

    stub.run(slow)
    (record,) = (server.workspace / ".agent-client/inflight").resolve().glob("*.json")
    first = remember("Staging server", env)
    try:
        assert held.wait(60), first.communicate(timeout=5)
        second = remember("Staging server", env)
        # (it has found the record held, open to wait on it, and looks no more)
        wait_for(lambda: record in files_open(second) or second.poll() is not None, 60)
    finally:
        release.set()
    out, err = second.communicate(timeout=120)
    assert second.returncode == 0, err
    assert "Noted Staging server." in out, out + err
    _out, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    check_merged_once(server, env, "Staging server")
    wait_for(lambda: not list((server.workspace / ".agent-client").rglob("*.json")), 5)


def test_a_run_that_finishes_killed_entries_has_time_for_each(
    stack: Stack,
) -> None:
    """The CLI waited one entry's time (the model's timeout and four calls) for the
    whole run: a run that first finished two killed clients' entries said "the writer
    did not finish in time" of its own, merged after them. Each entry has that time."""
    server, stub, env = stack
    asked, release = threading.Semaphore(0), threading.Event()

    def holding(request: dict[str, Any], number: int) -> Message:
        asked.release()
        release.wait(30)
        return merge_step(request, number)

    stub.run(holding)
    stub.threaded = True  # (the first's held answer let no other request in for 30 s)
    killed = [remember("Staging server", env), remember("Build cache", env)]  # two clients
    try:  # killed, each mid-merge (started at once: each Python start is seconds at load)
        for _ in killed:
            assert asked.acquire(timeout=60), [p.communicate(timeout=5) for p in killed]
    finally:
        for process in killed:
            process.send_signal(signal.SIGKILL)
            process.communicate(timeout=10)
        release.set()

    def slow(request: dict[str, Any], number: int) -> Message:
        time.sleep(1.5)  # four requests a merge: 6 s, of the 10 (+ 4) s an entry may take
        return merge_step(request, number)  # (three entries: 18 s, past one entry's 14 s)

    stub.run(slow)
    timed = {**env, "AGENT_CLIENT_LLM_TIMEOUT": "10", "AGENT_CLIENT_CALL_TIMEOUT": "1"}
    started = time.monotonic()
    code, out, err = remember_here("Rack map", timed)
    took = time.monotonic() - started
    assert code == 0, f"{err} after {took:.1f} s"
    assert "Noted Rack map." in out and err.count("a stopped client left") == 2, err
    for title in FACTS:
        check_merged_once(server, env, title)


@pytest.mark.parametrize("again", ["same", "other"])
def test_an_entry_whose_indexer_went_away_mid_merge_is_kept_and_merged_once(
    stack: Stack, again: str
) -> None:
    """The indexer stopped mid-merge (a note written, the model slow) and not back when
    the run ended: the entry was dropped, the note half merged. It is kept on disk; once
    the indexer runs, the command run again (or another entry's) takes back what landed
    and merges it once."""
    server, stub, env = stack
    err = indexer_stopped_mid_merge(server, stub, env)
    assert "remember" in err, err
    assert len(list((server.workspace / ".agent-client/inflight").glob("*.json"))) == 1
    restarted = start_indexer(server.workspace)
    try:
        code, out, err = remember_here("Staging server" if again == "same" else "Build cache", env)
        assert code == 0, err
        check_merged_once(restarted, env, "Staging server")
        if again == "same":
            assert "Noted Staging server." in out, out + err
        else:
            assert "a stopped client left (Staging server)" in err, err
            check_merged_once(restarted, env, "Build cache")
        assert not list((server.workspace / ".agent-client").rglob("*.json"))
    finally:
        restarted.stop()


def test_a_kept_entry_run_again_while_its_indexer_is_down_stays_kept(
    stack: Stack,
) -> None:
    """The command run again at once, as the kept entry's message says, while the
    indexer is still down: the rerun took the record as its own entry's, found no
    indexer and removed it, so the half merge stayed and nobody was told of it."""
    server, stub, env = stack
    indexer_stopped_mid_merge(server, stub, env)
    records = server.workspace / ".agent-client/inflight"
    code, _out, err = remember_here("Staging server", env)  # (still down)
    assert code == 3, err
    assert len(list(records.glob("*.json"))) == 1, err
    restarted = start_indexer(server.workspace)
    try:
        code, out, err = remember_here("Staging server", env)
        assert code == 0 and "Noted Staging server." in out, out + err
        check_merged_once(restarted, env, "Staging server")
        assert not list(records.glob("*.json"))
    finally:
        restarted.stop()
