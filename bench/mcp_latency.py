"""MCP tool latency over HTTP against a real ``indexer serve``, beside an ``echo`` floor.

Prints p50/p99 (ms) and calls/s of stat, read (2 KB note), write and append with 1 and 8
concurrent clients; each tool's p50 is also given as a multiple of echo's p50 measured in
the same run (the machine is shared and noisy, so only ratios are comparable).
Goals (issue 2): read/stat p50 ≤ 1.3× echo, write/append p50 ≤ 3× echo.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from fastmcp import Client

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from helpers.indexer_process import start_indexer

CALLS_SINGLE = int(os.environ.get("BENCH_CALLS", "400"))
CALLS_PER_CLIENT = int(os.environ.get("BENCH_CALLS_PER_CLIENT", "100"))
NOTE = "# Bench note\n\n" + ("Lorem ipsum dolor sit amet, consectetur adipiscing. " * 40)[:2000]


def args_for(tool: str, client_no: int, i: int) -> dict:
    if tool == "echo":
        return {"text": "x"}
    if tool in ("stat", "read"):
        return {"lang": "en", "path": "items/bench.md"}
    if tool == "write":
        return {"lang": "en", "path": f"items/w{client_no}.md", "content": f"{NOTE}\n{i}\n"}
    return {"lang": "en", "path": f"events/a{client_no}.md", "content": f"## Event {i}\nok\n"}


TOOLS = ("echo", "stat", "read", "write", "append")
ROUND = 20  # calls of one tool in a row; tools take turns so noise hits them all alike


async def run_client(url: str, client_no: int, calls: int) -> dict[str, list[float]]:
    """``calls`` calls of every tool, interleaved in rounds; latency samples per tool."""
    samples: dict[str, list[float]] = {tool: [] for tool in TOOLS}
    async with Client(url, timeout=30) as client:
        for tool in TOOLS:  # warm-up
            for i in range(5):
                await client.call_tool(tool, args_for(tool, client_no, -i - 1))
        for start in range(0, calls, ROUND):
            for tool in TOOLS:
                for i in range(start, min(start + ROUND, calls)):
                    began = time.perf_counter()
                    await client.call_tool(tool, args_for(tool, client_no, i))
                    samples[tool].append((time.perf_counter() - began) * 1e3)
    return samples


async def measure(url: str, clients: int) -> dict[str, tuple[float, float, float]]:
    """tool -> (p50 ms, p99 ms, calls/s while that tool's calls ran, all clients together)."""
    calls = CALLS_SINGLE if clients == 1 else CALLS_PER_CLIENT
    results = await asyncio.gather(*(run_client(url, n, calls) for n in range(clients)))
    figures = {}
    for tool in TOOLS:
        samples = sorted(s for r in results for s in r[tool])
        p50 = statistics.median(samples)
        p99 = samples[min(len(samples) - 1, int(len(samples) * 0.99))]
        busy = sum(samples) / 1e3 / clients  # seconds each client spent on this tool
        figures[tool] = (p50, p99, len(samples) / busy)
    return figures


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        note = ws / "memory/languages/en/vault/items/bench.md"
        note.parent.mkdir(parents=True)
        note.write_text(f"---\ntitle: Bench note\n---\n{NOTE}\n")
        server = start_indexer(ws, env={"INDEXER_ECHO_TOOL": "1"})
        try:
            rows = []
            for clients in (1, 8):
                figures = await measure(server.url, clients)
                floor = figures["echo"][0]
                for tool, (p50, p99, rate) in figures.items():
                    rows.append((tool, clients, p50, p99, rate, p50 / floor))
        finally:
            server.stop()
    print("\nMCP latency over HTTP (json_response, protocol 2026-07-28, one session per client)")
    print(f"{'tool':<8}{'clients':>8}{'p50 ms':>9}{'p99 ms':>9}{'calls/s':>9}{'p50/echo':>10}")
    for tool, clients, p50, p99, rate, ratio in rows:
        print(f"{tool:<8}{clients:>8}{p50:>9.2f}{p99:>9.2f}{rate:>9.0f}{ratio:>9.2f}x")
    print("goals: read/stat p50 <= 1.3x echo; write/append p50 <= 3x echo")


if __name__ == "__main__":
    asyncio.run(main())
