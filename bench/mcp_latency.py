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
from indexer_process import start_indexer

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


async def run_client(url: str, tool: str, client_no: int, calls: int) -> list[float]:
    samples: list[float] = []
    async with Client(url, timeout=30) as client:
        for i in range(10):  # warm-up
            await client.call_tool(tool, args_for(tool, client_no, -i))
        for i in range(calls):
            started = time.perf_counter()
            await client.call_tool(tool, args_for(tool, client_no, i))
            samples.append((time.perf_counter() - started) * 1e3)
    return samples


async def measure(url: str, tool: str, clients: int) -> tuple[float, float, float]:
    calls = CALLS_SINGLE if clients == 1 else CALLS_PER_CLIENT
    started = time.perf_counter()
    results = await asyncio.gather(*(run_client(url, tool, n, calls) for n in range(clients)))
    elapsed = time.perf_counter() - started
    samples = sorted(s for r in results for s in r)
    p50 = statistics.median(samples)
    p99 = samples[min(len(samples) - 1, int(len(samples) * 0.99))]
    return p50, p99, len(samples) / elapsed


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
                floor = None
                for tool in ("echo", "stat", "read", "write", "append"):
                    p50, p99, rate = await measure(server.url, tool, clients)
                    floor = floor or p50
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
