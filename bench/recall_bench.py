"""Recall vs search, and the maintenance due check (``make bench``; not a test).

1. On a synthetic 10,000-note vault (``bench/gen_vault.py``, plus a USER.md, a
   PROJECT.md and folder abstracts), ``recall`` (natural-language query, default budget
   of 1,500 tokens) against ``search`` (the query's words) through MCP on one real
   ``indexer serve``, taking turns in rounds so that machine noise hits both alike; the
   same pair in-process (``Recall.recall`` vs ``NoteIndex.search``) shows the work
   without the protocol. Goal (issue 12): recall p50 <= 2x search p50.
2. The due check of both maintenance tasks for 100 vaults (30 day files of events
   each) when nothing changed since their last success, cold (a fresh process: every
   events file is read and hashed) and warm (the daemon's case: the stat cache), beside
   a floor: a bare walk + stat of the same files. Goal: <= 1 s.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script (bench/__main__.py does that)
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from bench.gen_vault import generate
from bench.index_search import start_server
from bench.vault_queries import pick_queries

ROUND = 10


def add_resident(vault: Path) -> None:
    """USER.md, PROJECT.md and .overview.md files, as maintenance and summaries write."""
    (vault / "USER.md").write_text(
        "---\ntitle: User profile\n---\n# User profile\n\n## Preferences\n\n"
        + "".join(
            f"- Preference {i}: short answers, examples, British spelling.\n" for i in range(20)
        )
    )
    (vault / "PROJECT.md").write_text(
        "---\ntitle: Project\n---\n# Project\n\n## Active threads\n\n"
        + "".join(
            f"- Thread {i}: migrate the grammar notes, review the verbs.\n" for i in range(30)
        )
    )
    folders = [vault, *sorted(p for p in (vault / "items").iterdir() if p.is_dir())]
    for folder in folders:
        (folder / ".overview.md").write_text(
            f"---\ntype: summary\nabstract: notes about {folder.name}, grammar and travel\n---\n"
        )


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def pairs_for(queries: dict[str, str]) -> dict[str, tuple[str, str]]:
    """(search query, recall query) pairs: a word, two words, a CJK word."""
    word, phrase = queries["english"], queries["phrase"].strip('"')
    other = phrase.split()[-1]
    return {
        "word": (word, f"What do my notes say about {word}?"),
        "two words": (f"{word} {other}", f"What did we decide about the {word} and {other}?"),
        "CJK word": (queries["cjk4"], f"关于{queries['cjk4']}我们说了什么？"),
    }


async def through_mcp(url: str, pairs: dict[str, tuple[str, str]], rounds: int) -> dict:
    import fastmcp

    samples: dict[str, list[float]] = {}
    sizes: dict[str, int] = {}
    async with fastmcp.Client(url, timeout=120) as client:
        while not (await client.call_tool("status", {})).structured_content["index_ready"]:
            await asyncio.sleep(0.2)
        calls = {}
        for kind, (search, recall) in pairs.items():
            calls[f"search {kind}"] = ("search", {"lang": "en", "query": search})
            calls[f"recall {kind}"] = ("recall", {"lang": "en", "query": recall})
        for name, (tool, args) in calls.items():  # warm-up
            result = await client.call_tool(tool, args)
            if tool == "recall":
                sizes[name] = result.structured_content["tokens"]
        for _ in range(0, rounds, ROUND):
            for name, (tool, args) in calls.items():
                for _ in range(ROUND):
                    began = time.perf_counter()
                    await client.call_tool(tool, args)
                    samples.setdefault(name, []).append(time.perf_counter() - began)
    return {"samples": samples, "tokens": sizes}


def in_process(
    root: Path, pairs: dict[str, tuple[str, str]], rounds: int
) -> dict[str, list[float]]:
    from indexer.index.service import NoteIndex
    from indexer.jobs.recall import Recall
    from indexer.vault.sandbox import Sandbox
    from indexer.vault.vault import Vault
    from shared.workspace import Workspace

    ws = Workspace(root)
    index = NoteIndex(ws)
    index.open()  # as the daemon holds it (the server has stopped): caches are on
    recall = Recall(Vault(Sandbox(ws), max_file_bytes=4 << 20), index)
    calls: dict[str, Callable[[], Any]] = {}
    for kind, (search, query) in pairs.items():
        calls[f"search {kind}"] = functools.partial(index.search, "en", search)
        calls[f"recall {kind}"] = functools.partial(recall.recall, "en", query)
    samples: dict[str, list[float]] = {}
    for call in calls.values():
        call()
    for _ in range(0, rounds, ROUND):
        for name, call in calls.items():
            for _ in range(ROUND):
                began = time.perf_counter()
                call()
                samples.setdefault(name, []).append(time.perf_counter() - began)
    index.close()
    return samples


# -- the due check -----------------------------------------------------------------------


def lang_ids(count: int) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return [a + b for a in letters for b in letters][:count]


def make_vaults(root: Path, count: int, days: int = 30) -> None:
    marker = root / "due-vaults.txt"
    if marker.exists() and marker.read_text() == f"{count} {days}":
        return
    for lang in lang_ids(count):
        for day in range(1, days + 1):
            path = root / "memory/languages" / lang / "vault/events/2026/11" / f"{day:02d}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            sections = "".join(
                f"\n## Event\n\n- time: 2026-11-{day:02d}T1{n}:00:00Z\n\nEvent {n} of {lang}.\n"
                for n in range(4)
            )
            path.write_text(f"---\ntype: events\n---\n# Events 2026-11-{day:02d}\n{sections}")
    marker.write_text(f"{count} {days}")


def due_check(root: Path, count: int) -> dict[str, float]:
    from indexer.jobs.llm import JobModel, ModelSettings
    from indexer.jobs.maintenance import TASKS, Maintenance, MaintenanceSettings
    from indexer.jobs.maintenance_state import StateFile, TaskState
    from indexer.settings import default_prompts_dir
    from indexer.vault.sandbox import Sandbox
    from indexer.vault.vault import Vault
    from shared.timestamps import format_timestamp
    from shared.workspace import Workspace

    make_vaults(root, count)
    ws = Workspace(root)
    settings = MaintenanceSettings(enabled=frozenset(TASKS))
    never_called = JobModel(ModelSettings(model="none", base_url="http://127.0.0.1:9/v1"))

    def fresh() -> Maintenance:
        return Maintenance(
            settings,
            state=StateFile(ws.maintenance_state),
            vault=Vault(Sandbox(ws), max_file_bytes=4 << 20),
            index=None,
            model=never_called,
            prompts_dir=default_prompts_dir(),
        )

    seed = fresh()
    now = format_timestamp(datetime.now(UTC).replace(microsecond=0))
    for lang in seed.langs():  # as if every task had just succeeded on these inputs
        done = TaskState("none", now, now, seed.digests.digest(lang))
        for task in TASKS:
            seed.state.update(lang, task, functools.partial(_same, done))

    def all_checks(maintenance: Maintenance) -> float:
        began = time.perf_counter()
        outcomes = asyncio.run(maintenance.run_due(backoff=True))
        assert len(outcomes) == 2 * count and all(o.action == "skip" for o in outcomes)
        return time.perf_counter() - began

    cold = statistics.median(all_checks(fresh()) for _ in range(3))
    warm_one = fresh()
    all_checks(warm_one)
    warm = statistics.median(all_checks(warm_one) for _ in range(5))

    def walk() -> float:
        began = time.perf_counter()
        for lang in lang_ids(count):
            for folder, _, files in os.walk(ws.vault_dir(lang) / "events"):
                for name in files:
                    os.stat(os.path.join(folder, name))
        return time.perf_counter() - began

    floor = statistics.median(walk() for _ in range(5))
    return {"cold": cold, "warm": warm, "floor": floor}


def _same(state: Any, _old: Any) -> Any:
    return state


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recall-notes", type=int, default=10_000)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/vault-memory-bench-recall"))
    parser.add_argument("--recall-rounds", type=int, default=200)
    parser.add_argument("--vaults", type=int, default=100)
    args, _ = parser.parse_known_args()  # bench/__main__.py passes every script its flags

    root = args.workdir / f"n{args.recall_notes}"
    vault = generate(root, args.recall_notes)
    add_resident(vault)
    pairs = pairs_for(pick_queries(vault))
    print(f"queries: {pairs}", file=sys.stderr)
    proc, url = start_server(root)
    try:
        mcp = asyncio.run(through_mcp(url, pairs, args.recall_rounds))
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    local = in_process(root, pairs, args.recall_rounds)
    due = due_check(args.workdir / "due", args.vaults)

    print(f"\nrecall vs search, {args.recall_notes:,} notes (p50 / p99 ms; ratio of p50s)")
    print(f"{'query':<11}{'via':<12}{'search':>15}{'recall':>15}{'ratio':>7}  goal <= 2x")
    for kind in pairs:
        for via, samples in (("MCP", mcp["samples"]), ("in-process", local)):
            s, r = samples[f"search {kind}"], samples[f"recall {kind}"]
            ratio = statistics.median(r) / statistics.median(s)
            cells = [
                f"{statistics.median(x) * 1e3:.1f} / {percentile(x, 0.99) * 1e3:.1f}"
                for x in (s, r)
            ]
            print(f"{kind:<11}{via:<12}{cells[0]:>15}{cells[1]:>15}{ratio:>6.2f}x")
    print(f"(recall blocks: {mcp['tokens']} tokens of 1500)")
    print(f"\ndue check of 2 tasks x {args.vaults} vaults, nothing changed (s)")
    print(f"  warm (daemon) {due['warm']:.3f}   cold (new process) {due['cold']:.3f}   "
          f"floor walk+stat {due['floor']:.3f}   goal <= 1 s")  # fmt: skip


if __name__ == "__main__":
    main()
