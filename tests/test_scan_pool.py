"""Long scans wait for their own threads; every other call keeps its latency; a scan
whose caller gave up stops.

45 heavy greps (no literal the index could use: every note is read) in flight at once,
then a ``write``: it must not wait for a grep to finish. Each grep's time budget counts
from its call, so the queued greps end within the budget too.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from pathlib import Path

from fastmcp import Client
from helpers.opened_files import files_opened

from indexer.core import Core
from indexer.scans import ScanPool
from indexer.settings import Settings
from indexer.vault.no_wait import abandoned_when
from indexer.vault.sandbox import Sandbox
from indexer.vault.vault import Vault
from indexer.web.mcp import create_server
from shared.workspace import Workspace

HEAVY = r"[a-z]+\s[a-z]+\s\d"
WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
BUDGET = 3.0


def make_notes(folder: Path) -> None:
    rng = random.Random(3)
    folder.mkdir(parents=True)
    for n in range(600):
        lines = [" ".join(rng.choices(WORDS, k=8)) for _ in range(800)]
        (folder / f"n{n}.md").write_text(f"# note {n}\n" + "\n".join(lines) + "\n")


async def test_a_write_does_not_wait_for_45_heavy_greps(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "ws")
    make_notes(ws.vault_dir("en") / "items")
    vault = Vault(Sandbox(ws), max_file_bytes=1 << 20)
    vault.grep_max_seconds = BUDGET
    core = Core(Settings(workspace=ws), vault)  # its scan pool: 2 threads
    async with Client(create_server(core)) as client:
        started = time.monotonic()
        greps = [
            asyncio.create_task(client.call_tool("grep", {"lang": "en", "pattern": HEAVY}))
            for _ in range(45)
        ]
        await asyncio.sleep(0.5)
        before = time.monotonic()
        await client.call_tool("write", {"lang": "en", "path": "w.md", "content": "# w\n"})
        waited = time.monotonic() - before
        results = await asyncio.gather(*greps)
        took = time.monotonic() - started
    # (bounds with room for a loaded machine: a write behind a grep waits its whole
    # budget, and 45 greps queued on 2 threads without one take many budgets)
    assert waited < BUDGET / 2, f"the write waited {waited:.2f} s behind the greps"
    assert took < BUDGET + 5.0, f"the greps took {took:.1f} s (budget {BUDGET} s each)"
    assert all(r.structured_content is not None for r in results)


async def test_a_cancelled_grep_stops_reading(tmp_path: Path) -> None:
    """A client that cancels a grep (or goes away) cancels the scan's await: the grep
    stops at its next note, and its thread is free for the scans queued behind it. It
    read every note on, and a grep after it waited for its end."""
    ws = Workspace(tmp_path / "ws")
    make_notes(ws.vault_dir("en") / "items")
    vault = Vault(Sandbox(ws), max_file_bytes=1 << 20)
    pool = ScanPool(threads=1, told=abandoned_when)
    notes = [f"n{n}.md" for n in range(600)]
    with files_opened() as opened:
        deadline = time.monotonic() + 60
        grep = asyncio.create_task(pool.run(vault.grep, "en", HEAVY, deadline=deadline))
        while sum(name in notes for name in opened) < 3:
            await asyncio.sleep(0.005)
        grep.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await grep
        at_cancel = sum(name in notes for name in opened)
        await asyncio.sleep(0.5)  # (a grep not told would go on reading meanwhile)
        read = sum(name in notes for name in opened)
    assert read <= at_cancel + 1, f"the cancelled grep read {read - at_cancel} notes on"
    assert read < len(notes) // 2, f"the cancelled grep read {read} of {len(notes)} notes"
