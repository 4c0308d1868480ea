"""Long scans wait for their own threads; every other call keeps its latency.

45 heavy greps (no literal the index could use: every note is read) in flight at once,
then a ``write``: it must not wait for a grep to finish. Each grep's time budget counts
from its call, so the queued greps end within the budget too.
"""

from __future__ import annotations

import asyncio
import random
import time
from pathlib import Path

from fastmcp import Client

from indexer.core import Core
from indexer.settings import Settings
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
