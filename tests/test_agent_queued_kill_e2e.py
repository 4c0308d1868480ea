"""``kill -9`` of a host whose writer has entries queued behind the one being merged:
the queued entries were lost with the process (only a started entry had a record on
disk). Each is recorded at submit, held by the submitting process, so the next run
merges every one, once (the notes' bytes, their history's entry ids)."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.agent_stack import Stack, agent_stack, entry_ids, hold_at, run_here
from helpers.indexer_process import vault_dir, wait_for
from helpers.llm_stub import Message, final, tool_call

pytestmark = pytest.mark.e2e

FACTS = {  # the first is merged when the host is killed; the five after it are queued
    "Staging server": "The staging server moved to host quokka-7 in rack twelve.",
    "Build cache": "The build cache lives on wombat-3 and is purged on Sundays.",
    "Rack map": "Rack twelve holds the numbat switches and the tape library.",
    "Ночной поезд": "Поезд в Казань уходит в 23:40 с третьего пути.",
    "駐車場": "駐車場は地下二階、区画はB-17です。",
    "Backup key": "The backup key is in the blue envelope in drawer two.",
}
LATER = ("Printer", "The printer on floor three takes A3 only from tray two.")
ALL = {**FACTS, LATER[0]: LATER[1]}

HOST = """
import sys, time
from agent_client.settings import ClientSettings
from agent_client.writer import MemoryWriter
from shared.models import MemoryEntry
pairs = zip(sys.argv[1::2], sys.argv[2::2], strict=True)
writer = MemoryWriter(ClientSettings.resolve())
writer.submit([MemoryEntry("en", "knowledge", title, fact) for title, fact in pairs])
print("queued", flush=True)
time.sleep(120)
"""


def slug(title: str) -> str:
    return str(sum(map(ord, title)))  # (any script: a name of digits)


def merge_step(request: dict[str, Any], turn: int) -> Message:
    """Read the entry's note, write it, confirm: by the tool results the request holds."""
    prompt = " ".join(str(m.get("content")) for m in request["messages"] if m["role"] == "user")
    title = next(t for t in ALL if ALL[t] in prompt)
    note = f"items/{slug(title)}.md"
    done = sum(m["role"] == "tool" for m in request["messages"])
    if done == 0:
        return tool_call("read", path=note)
    if done == 1:
        return tool_call("write", path=note, content=f"# {title}\n\n{ALL[title]}\n")
    return final([note], f"Noted {title}.")


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[Stack]:
    yield from agent_stack(tmp_path / "ws", merge_step)


def test_entries_queued_behind_a_killed_merge_are_merged_once_each(
    stack: Stack,
) -> None:
    server, stub, env = stack
    held, release = hold_at(stub, 1, merge_step)  # (the first entry's note read)
    command = [sys.executable, "-c", HOST, *(word for pair in FACTS.items() for word in pair)]
    host = subprocess.Popen(
        command, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        assert host.stdout is not None and host.stdout.readline() == "queued\n"
        assert held.wait(60)
    finally:
        host.send_signal(signal.SIGKILL)
        _out, err = host.communicate(timeout=10)
        release.set()
    assert "Traceback" not in err, err
    stub.run(merge_step)
    code, _out, err = run_here(env, "remember", "--title", *LATER)  # (no process: none killed)
    assert code == 0, err
    assert err.count("a stopped client left") == len(FACTS), err
    vault = vault_dir(server, "en")
    for title, fact in ALL.items():
        note = vault / f"items/{slug(title)}.md"
        text = note.read_text()
        assert text.count(fact) == 1 and text.endswith(f"# {title}\n\n{fact}\n"), text
        assert len(set(entry_ids(server, f"items/{slug(title)}.md"))) == 1, title
    wait_for(lambda: not list((server.workspace / ".agent-client").rglob("*.json")), 5)
