"""Write latency while many clients run heavy greps, against a real ``indexer serve``.

A vault of 300 notes of 40 KB; each grep client loops on a pattern with no literal of
3+ characters (the index cannot narrow the files: every note is read and matched).
Prints the p50/p90 of ``write`` with no grep running (the floor) and with N grep
clients, and the ratio to the floor (the machine is shared and noisy: compare ratios).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from fastmcp import Client

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from helpers.indexer_process import start_indexer

NOTES = 300
WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india"]
HEAVY = r"[a-z]+\s[a-z]+\s\d"  # no literal: every note is scanned


def make_vault(root: Path) -> None:
    rng = random.Random(7)
    folder = root / "memory/languages/en/vault/items"
    folder.mkdir(parents=True)
    for n in range(NOTES):
        lines = [" ".join(rng.choices(WORDS, k=8)) for _ in range(800)]
        (folder / f"n{n}.md").write_text(f"# note {n}\n" + "\n".join(lines) + "\n")


async def write_latencies(client: Client, count: int) -> list[float]:
    times = []
    for i in range(count):
        started = time.perf_counter()
        await client.call_tool("write", {"lang": "en", "path": "w.md", "content": f"# w\n{i}\n"})
        times.append(time.perf_counter() - started)
        await asyncio.sleep(0.05)
    return times


async def grep_loop(url: str, stop: asyncio.Event, done: list[int]) -> None:
    async with Client(url, timeout=120) as client:
        while not stop.is_set():
            await client.call_tool("grep", {"lang": "en", "pattern": HEAVY, "limit": 10_000})
            done[0] += 1


async def measure(url: str, greps: int, writes: int) -> tuple[list[float], int]:
    stop = asyncio.Event()
    done = [0]
    loops = [asyncio.create_task(grep_loop(url, stop, done)) for _ in range(greps)]
    await asyncio.sleep(2.0 if greps else 0)  # let the greps pile up
    async with Client(url, timeout=120) as client:
        times = await write_latencies(client, writes)
    stop.set()
    await asyncio.gather(*loops)
    return times, done[0]


def row(name: str, times: list[float], floor: float, greps_done: int) -> str:
    p50 = statistics.median(times)
    p90 = statistics.quantiles(times, n=10)[-1]
    return f"{name:<22} {p50 * 1000:>9.1f} {p90 * 1000:>9.1f} {p50 / floor:>8.1f}x {greps_done:>7}"


async def main_async(greps: int, writes: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        make_vault(ws)
        server = start_indexer(ws)
        try:
            async with Client(server.url) as client:  # warm up, and one grep's time
                await client.call_tool("status", {})
                started = time.perf_counter()
                await client.call_tool("grep", {"lang": "en", "pattern": HEAVY, "limit": 10_000})
                alone = time.perf_counter() - started
            floor_times, _ = await measure(server.url, 0, writes)
            loaded, done = await measure(server.url, greps, writes)
        finally:
            server.stop()
    floor = statistics.median(floor_times)
    print(f"{NOTES} notes of 40 KB; one heavy grep alone takes {alone:.2f} s")
    print(f"{'write latency':<22} {'p50 ms':>9} {'p90 ms':>9} {'vs floor':>9} {'greps':>7}")
    print(row("no grep running", floor_times, floor, 0))
    print(row(f"{greps} grep clients", loaded, floor, done))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--greps", type=int, default=45, help="concurrent grep clients")
    parser.add_argument("--writes", type=int, default=20, help="writes measured per phase")
    args = parser.parse_args()
    asyncio.run(main_async(args.greps, args.writes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
