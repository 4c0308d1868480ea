"""History benchmark: what recording every change costs, in time and in disk.

Run: ``python -m bench.history_bench [--ops N]``. Everything is measured in one run,
as ratios against a floor taken side by side:

- write and append p50 through the vault with the index attached (a tool call's work
  without the protocol), with history and without, taking turns in rounds so that
  machine noise hits both alike; then the same through the in-memory MCP client;
- 8 threads x 200 appends to one day file, and 8 threads appending to 8 files
  (history's one writer connection must not serialize everything), wall time with
  history / without, through the vault alone;
- history storage after 1,000 model-style merges into 100 notes (each merge moves
  ``updated``, adds or extends a section), against the vault's final size; and after
  500 appends to a day file, against that file.

Goals (issue 10): p50 ratios ≤ 1.2; storage ≤ 2x the vault.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from fastmcp import Client

from indexer.core import Core
from indexer.index.service import NoteIndex
from indexer.settings import Settings
from indexer.vault import fsops
from indexer.vault.history.store import HistoryStore
from indexer.vault.sandbox import Sandbox
from indexer.vault.vault import Vault
from indexer.web.mcp import create_server
from shared.workspace import Workspace

ROUND = 20
_WORDS = [
    "".join(random.Random(i).choices("abcdefghijklmnopqrstuvwxyz", k=2 + i % 8)) for i in range(900)
]


def prose(rng: random.Random, words: int) -> str:
    return " ".join(rng.choices(_WORDS, k=words)).capitalize() + "."


@contextmanager
def setup(root: Path, history: bool, *, index: bool = True) -> Iterator[Vault]:
    """A vault (with the index attached), with or without history."""
    ws = Workspace(root)
    store = HistoryStore(ws.history_dir, fsops.etag_of) if history else None
    if store is not None:
        store.open()
    vault = Vault(Sandbox(ws), max_file_bytes=4 << 20, history=store)
    notes = NoteIndex(ws) if index else None
    if notes is not None:
        notes.open()
        vault.index_sync = notes
    try:
        yield vault
    finally:
        if notes is not None:
            notes.close()
        if store is not None:
            store.close()


class Note:
    """A knowledge note growing by model-style merges."""

    def __init__(self, rng: random.Random, number: int) -> None:
        self.rng = rng
        self.title = f"Topic {number}"
        self.sections = [f"## Part {k}\n\n{prose(rng, rng.randint(40, 90))}\n" for k in range(3)]

    def merge(self) -> None:
        roll = self.rng.random()
        if roll < 0.5:
            self.sections.append(f"## Added\n\n{prose(self.rng, self.rng.randint(30, 70))}\n")
        elif roll < 0.8:
            k = self.rng.randrange(len(self.sections))
            self.sections[k] = self.sections[k].rstrip("\n") + " " + prose(self.rng, 25) + "\n"
        else:
            k = self.rng.randrange(len(self.sections))
            self.sections.insert(k, f"## Inserted\n\n{prose(self.rng, 40)}\n")

    def text(self) -> str:
        return f"# {self.title}\n\n" + "\n".join(self.sections)


def event(rng: random.Random, i: int) -> str:
    return f"\n## Event\n\n- at: 2026-11-29T10:{i % 60:02d}:00Z\n\n{prose(rng, 25)}\n"


def p50(samples: list[float]) -> float:
    return statistics.median(samples)


# -- latency -----------------------------------------------------------------------------


def vault_latency(root: Path, ops: int) -> dict[str, list[float]]:
    """(write|append, with|without) -> samples in ms, taken in alternating rounds."""
    samples: dict[str, list[float]] = {}
    rng = random.Random(1)
    with setup(root / "with", True) as on, setup(root / "without", False) as off:
        notes = {name: [Note(random.Random(i), i) for i in range(20)] for name in ("on", "off")}
        vaults = {"on": on, "off": off}
        for name, vault in vaults.items():  # warm-up: the notes exist
            for i, note in enumerate(notes[name]):
                vault.write("en", f"items/n{i}.md", note.text())
            vault.append("en", "events/day.md", "# Day\n")
        for start in range(0, ops, ROUND):
            for name, vault in vaults.items():
                for i in range(start, start + ROUND):
                    note = notes[name][i % 20]
                    note.merge()
                    text = note.text()
                    began = time.perf_counter()
                    vault.write("en", f"items/n{i % 20}.md", text, reason="entry:bench merge")
                    samples.setdefault(f"write {name}", []).append(time.perf_counter() - began)
                    added = event(rng, i)
                    began = time.perf_counter()
                    vault.append("en", "events/day.md", added, reason="entry:bench event")
                    samples.setdefault(f"append {name}", []).append(time.perf_counter() - began)
    return samples


def mcp_latency(root: Path, ops: int) -> dict[str, list[float]]:
    """The same through the in-memory MCP client (the tool stack, without HTTP)."""
    samples: dict[str, list[float]] = {}

    async def run() -> None:
        with setup(root / "mcp-with", True) as on, setup(root / "mcp-without", False) as off:
            vaults = {"on": on, "off": off}
            async with (
                Client(create_server(core(root, on))) as c_on,
                Client(create_server(core(root, off))) as c_off,
            ):
                clients = {"on": c_on, "off": c_off}
                notes = {name: Note(random.Random(7), 7) for name in vaults}
                for client in clients.values():
                    await client.call_tool(
                        "append", {"lang": "en", "path": "events/day.md", "content": "# Day\n"}
                    )
                rng = random.Random(2)
                for start in range(0, ops, ROUND):
                    for name, client in clients.items():
                        for i in range(start, start + ROUND):
                            notes[name].merge()
                            args = {"lang": "en", "path": "items/m.md"}
                            began = time.perf_counter()
                            await client.call_tool("write", {**args, "content": notes[name].text()})
                            samples.setdefault(f"write {name}", []).append(
                                time.perf_counter() - began
                            )
                            args = {"lang": "en", "path": "events/day.md"}
                            began = time.perf_counter()
                            await client.call_tool("append", {**args, "content": event(rng, i)})
                            samples.setdefault(f"append {name}", []).append(
                                time.perf_counter() - began
                            )

    asyncio.run(run())
    return samples


def core(root: Path, vault: Vault) -> Core:
    return Core(Settings(workspace=vault.sandbox.workspace), vault)


# -- concurrency -------------------------------------------------------------------------


def concurrent_appends(root: Path, threads: int, appends: int, files: int) -> dict[str, float]:
    """Wall seconds for ``threads`` x ``appends`` appends over ``files`` files (the vault
    alone: re-indexing a growing day file would hide what history adds)."""
    walls: dict[str, float] = {}
    for name, history in (("off", False), ("on", True), ("off2", False), ("on2", True)):
        with setup(root / f"conc-{files}-{name}", history, index=False) as vault:

            def work(k: int, vault: Vault = vault) -> None:
                path = f"events/day{k % files}.md"
                for i in range(appends):
                    vault.append("en", path, f"- thread {k} append {i}\n")

            pool = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
            began = time.perf_counter()
            for thread in pool:
                thread.start()
            for thread in pool:
                thread.join()
            wall = time.perf_counter() - began
            key = name.rstrip("2")
            walls[key] = min(walls.get(key, wall), wall)  # best of two: less noise
    return walls


# -- storage -----------------------------------------------------------------------------


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def merges_storage(root: Path, notes: int, merges: int) -> dict[str, int]:
    """History and vault sizes after ``merges`` model-style merges into ``notes`` notes."""
    ws = Workspace(root / "merges")
    with setup(ws.root, True) as vault:
        growing = [Note(random.Random(100 + i), i) for i in range(notes)]
        for i, note in enumerate(growing):
            vault.write("en", f"items/n{i:03}.md", note.text())
        for m in range(merges):
            note = growing[m % notes]
            note.merge()
            path = f"items/n{m % notes:03}.md"
            current = vault.read("en", path)
            reason = f"entry:{m:032x} {note.title}"
            vault.write("en", path, note.text(), if_match=current["etag"], reason=reason)
    # closed: the WAL is checkpointed into the file and removed
    return {"vault": folder_bytes(ws.vault_dir("en")), "history": folder_bytes(ws.history_dir)}


def appends_storage(root: Path, appends: int) -> dict[str, int]:
    """History and file sizes after ``appends`` event appends to one day file."""
    ws = Workspace(root / "appends")
    rng = random.Random(3)
    with setup(ws.root, True) as vault:
        vault.append("en", "events/day.md", "# Day\n")
        for i in range(appends):
            vault.append("en", "events/day.md", event(rng, i), reason=f"entry:{i:032x} event")
    return {"vault": folder_bytes(ws.vault_dir("en")), "history": folder_bytes(ws.history_dir)}


# -- report ------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ops", type=int, default=300, help="writes (and appends) per side")
    args = parser.parse_args(argv)
    rows: list[tuple[str, str, str]] = []

    def ratio(label: str, samples: dict[str, list[float]], kind: str) -> None:
        on, off = p50(samples[f"{kind} on"]) * 1e3, p50(samples[f"{kind} off"]) * 1e3
        rows.append((f"{label} {kind} p50 with / without history",
                     f"{on:.2f} / {off:.2f} ms = {on / off:.2f}x", "≤ 1.2x"))  # fmt: skip

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        measured: Callable[[Path, int], dict[str, list[float]]]
        for label, measured in (("vault", vault_latency), ("MCP in-memory", mcp_latency)):
            samples = measured(root, args.ops)
            ratio(label, samples, "write")
            ratio(label, samples, "append")
        for files in (1, 8):
            walls = concurrent_appends(root, 8, 200, files)
            rows.append((
                f"8 threads x 200 appends to {files} file(s), with / without history",
                f"{walls['on']:.2f} / {walls['off']:.2f} s = {walls['on'] / walls['off']:.2f}x",
                "-",
            ))  # fmt: skip
        for label, sizes, goal in (
            ("1,000 merges into 100 notes", merges_storage(root, 100, 1000), "≤ 2x"),
            ("500 appends to a day file", appends_storage(root, 500), "-"),
        ):
            rows.append((
                f"history / vault size after {label}",
                f"{sizes['history'] / 1e3:.0f} KB / {sizes['vault'] / 1e3:.0f} KB = "
                f"{sizes['history'] / sizes['vault']:.2f}x",
                goal,
            ))  # fmt: skip
    print_table(rows)
    return 0


def print_table(rows: list[tuple[str, str, str]]) -> None:
    """``rows`` of (measure, result, goal) as a Markdown table (``undo_bench`` too)."""
    print("| measure | result | goal |\n|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    sys.exit(main())
