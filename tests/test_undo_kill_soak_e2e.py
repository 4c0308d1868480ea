"""``kill -9`` of a real ``indexer serve`` at a random moment of an undo done in batches
(``undo_batches``, ``Recorder.begin_many``), then a restart: history agrees with the
files, the index equals one rebuilt from the vault, and the undo run again (killed
again, at times) ends with every note back as it was, or says "already undone" only
when that is true.

Two kinds of entry: a folder move (files renamed back in pairs) and appends to many
notes (texts written back). The batches are made small in the server's process (a
``sitecustomize`` on its path sets ``BATCH_FILES``), so that an undo runs many of them
and a kill falls inside one; each kill comes once a random count of notes is back.
``SOAK_ROUNDS`` sets the rounds of each kind (1 unless set), each killed up to 3 times.
The summaries job runs as a server's does (a folder move carries theirs, as its moves).
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
from contextlib import suppress
from pathlib import Path

import pytest
from helpers.history import check_history_consistent
from helpers.indexer_process import RunningIndexer, start_indexer
from helpers.rebuilt_index import check_index_is_a_rebuild

from shared.workspace import Workspace

ROUNDS = int(os.environ.get("SOAK_ROUNDS", "1"))
FOLDERS = ["ไทย", "中文", "latin", "عربي ملف", "Ünï code"]
SMALL_BATCHES = "import indexer.vault.undo_batches as b\nb.BATCH_FILES = 40\n"


def server_env(tmp_path: Path) -> dict[str, str]:
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(SMALL_BATCHES)
    return {"PYTHONPATH": str(site)}


def make_notes(vault: Path, count: int) -> dict[str, bytes]:
    """``count`` notes spread over the folders; their bytes by path."""
    made: dict[str, bytes] = {}
    for n in range(count):
        rel = f"topics/{FOLDERS[n % len(FOLDERS)]}/n{n}.md"
        path = vault / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        data = f"# Note {n}\n\nquince {n} words\n".encode()
        path.write_bytes(data)
        made[rel] = data
    return made


def notes_on_disk(vault: Path) -> dict[str, bytes]:
    return {
        p.relative_to(vault).as_posix(): p.read_bytes()
        for p in vault.rglob("*.md")
        if not p.name.startswith(".")
    }


async def call(server: RunningIndexer, tool: str, **args: object) -> dict:
    async with server.client(timeout=300) as client:
        result = await client.call_tool(tool, args, raise_on_error=False)
    text = result.content[0].text if result.content else ""  # type: ignore[union-attr]
    return {"error": result.is_error, "text": text, "data": result.structured_content}


def notes_back(vault: Path, before: dict[str, bytes]) -> int:
    """How many notes hold their bytes from before the entry (for the failure message)."""
    now = notes_on_disk(vault)
    return sum(now.get(rel) == data for rel, data in before.items())


def count_back(vault: Path, before: dict[str, bytes]) -> int:
    """How many notes hold their bytes from before the entry (by size: cheap to poll)."""
    back = 0
    for rel, data in before.items():
        with suppress(OSError):
            back += (vault / rel).stat().st_size == len(data)
    return back


class BackCounter:
    """``count_back`` polled while an undo brings notes back: a note found back is not
    looked at again (the undo only brings notes back), and one whose name its folder
    does not list is not stat'ed. Each poll stat'ed all 3,000 notes of the move
    (70-115 ms at load, a core taken from the server doing the undo)."""

    def __init__(self, vault: Path, before: dict[str, bytes]) -> None:
        self.vault, self.back = vault, 0
        self.waiting: dict[str, dict[str, int]] = {}  # folder -> name -> size before
        for rel, data in before.items():
            folder, _, name = rel.rpartition("/")
            self.waiting.setdefault(folder, {})[name] = len(data)

    def __call__(self) -> int:
        for folder, sizes in self.waiting.items():
            try:
                listed = os.listdir(self.vault / folder)
            except OSError:
                continue
            for name in [n for n in listed if n in sizes]:
                with suppress(OSError):
                    if (self.vault / folder / name).stat().st_size == sizes[name]:
                        del sizes[name]
                        self.back += 1
        return self.back


async def undo_killed_at(
    server: RunningIndexer, entry: str, vault: Path, before: dict[str, bytes], at: int
) -> dict | None:
    """The undo's answer, or None when the kill came first: once ``at`` notes are back
    (the moment within the undo, whatever the machine's speed)."""
    back = BackCounter(vault, before)
    task = asyncio.ensure_future(call(server, "undo", lang="en", entry_id=entry))
    while not task.done() and back() < at:
        await asyncio.sleep(0.002)
    server.process.send_signal(signal.SIGKILL)
    server.process.wait()
    if task.done():
        return task.result()
    with suppress(BaseException):
        await asyncio.wait_for(task, 30)
    return None


def stopped_and_checked(server: RunningIndexer, scratch: Path) -> None:
    assert server.stop() == 0, server.log()
    assert check_history_consistent(server.workspace)
    check_index_is_a_rebuild(server.workspace, scratch)


async def soak_round(tmp_path: Path, kind: str, count: int, seed: int) -> list[str]:
    """One entry made, its undo killed (up to 3 times), checked after each restart that
    follows a kill and once the undo finished (and "again" changed nothing);
    what each try did, for the failure message."""
    rng = random.Random(seed)
    workspace = tmp_path / f"ws-{kind}-{seed}"
    vault = Workspace(workspace).vault_dir("en")
    vault.mkdir(parents=True)
    before = make_notes(vault, count)
    env = server_env(tmp_path)
    server = start_indexer(workspace, env=env, timeout=120)
    if kind == "move":
        moved = await call(
            server,
            "move",
            lang="en",
            path="topics",
            new_path="archive/topics",
            reason="entry:e1 tidy",
        )
        assert not moved["error"], moved
    else:
        async with server.client(timeout=60) as client:
            for rel in before:
                await client.call_tool(
                    "append",
                    {
                        "lang": "en",
                        "path": rel,
                        "content": "\nmore words\n",
                        "reason": "entry:e1 add",
                    },
                )
    said: list[str] = []
    answer = None
    for attempt in range(4):
        delay = rng.randint(count_back(vault, before), count)  # (notes back at the kill)
        if attempt < 3:
            answer = await undo_killed_at(server, "e1", vault, before, delay)
        else:
            answer = await call(server, "undo", lang="en", entry_id="e1")
            server.stop()
        said.append(f"try {attempt} at {delay} back: {answer and answer['text'][:120]}")
        server = start_indexer(workspace, env=env, timeout=120)  # (recovers, reconciles)
        if answer is not None:  # (finished: checked below, once "again" changed nothing)
            break
        stopped_and_checked(server, tmp_path / "scratch")
        said[-1] += f" ({notes_back(vault, before)} back)"
        server = start_indexer(workspace, env=env, timeout=120)
    again = await call(server, "undo", lang="en", entry_id="e1")
    assert server.stop() == 0, server.log()
    said[-1] += f" ({notes_back(vault, before)} back)"
    assert answer is not None, said
    assert not answer["error"] or "already undone" in answer["text"], said
    said.append(f"then: {again['text'][:120]}")
    assert again["error"] and "already undone" in again["text"], said
    assert notes_on_disk(vault) == before, said
    assert not (vault / "archive").exists(), said  # (the folders the entry made: gone)
    assert check_history_consistent(workspace)
    check_index_is_a_rebuild(workspace, tmp_path / "scratch")
    return said


@pytest.mark.timeout(600)
@pytest.mark.parametrize("seed", range(ROUNDS))
@pytest.mark.parametrize("kind,count", [("move", 3000), ("append", 600)])
async def test_an_undo_killed_at_random_moments_is_recovered_and_finished(
    tmp_path: Path, kind: str, count: int, seed: int
) -> None:
    said = await soak_round(tmp_path, kind, count, seed)
    print(kind, seed, said)
