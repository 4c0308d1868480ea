"""REST read vs MCP read on one real ``indexer serve``, and the page's first-load size.

Both clients keep one connection (httpx2 for REST, one fastmcp session for MCP) and read
the same 2 KB note, taking turns in rounds so that machine noise hits both alike.
Goals (issue 13): REST read p50 <= MCP read p50 (less protocol to do); the page's
first load (HTML + JS + CSS) <= 200 KB.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx2
from fastmcp import Client

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from indexer_process import start_indexer

CALLS = int(os.environ.get("BENCH_CALLS", "400"))
ROUND = 20
NOTE = "# Bench note\n\n" + ("Lorem ipsum dolor sit amet, consectetur adipiscing. " * 40)[:2000]
PAGE_FILES = ("/ui/", "/ui/app.js", "/ui/app.css")
PAGE_BUDGET = 200 * 1024


async def measure(base: str, mcp_url: str) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {"rest": [], "mcp": []}
    args = {"lang": "en", "path": "items/bench.md"}
    async with httpx2.AsyncClient(base_url=base) as http, Client(mcp_url, timeout=30) as mcp:

        async def rest_read() -> None:
            response = await http.get("/api/v1/en/notes/items/bench.md")
            response.raise_for_status()

        async def mcp_read() -> None:
            await mcp.call_tool("read", args)

        calls = {"rest": rest_read, "mcp": mcp_read}
        for call in calls.values():  # warm-up
            for _ in range(10):
                await call()
        for _ in range(0, CALLS, ROUND):
            for name, call in calls.items():
                for _ in range(ROUND):
                    began = time.perf_counter()
                    await call()
                    samples[name].append((time.perf_counter() - began) * 1e3)
    return samples


def page_sizes(base: str) -> dict[str, int]:
    with httpx2.Client(base_url=base) as http:
        return {path: len(http.get(path).content) for path in PAGE_FILES}


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        note = ws / "memory/languages/en/vault/items/bench.md"
        note.parent.mkdir(parents=True)
        note.write_text(f"---\ntitle: Bench note\n---\n{NOTE}\n")
        server = start_indexer(ws)
        base = server.url.removesuffix("/mcp")
        try:
            samples = asyncio.run(measure(base, server.url))
            sizes = page_sizes(base)
        finally:
            server.stop()
    print("\nREST vs MCP read of a 2 KB note (one connection each, interleaved rounds)")
    print(f"{'client':<8}{'p50 ms':>9}{'p99 ms':>9}{'calls':>7}")
    p50 = {}
    for name, values in samples.items():
        values.sort()
        p50[name] = statistics.median(values)
        p99 = values[min(len(values) - 1, int(len(values) * 0.99))]
        print(f"{name:<8}{p50[name]:>9.2f}{p99:>9.2f}{len(values):>7}")
    ratio = p50["rest"] / p50["mcp"]
    total = sum(sizes.values())
    print(f"REST p50 / MCP p50 = {ratio:.2f}x (goal <= 1.0)")
    print("page first load: " + ", ".join(f"{p} {n / 1024:.1f} KB" for p, n in sizes.items()))
    print(f"page first load total {total / 1024:.1f} KB (goal <= {PAGE_BUDGET // 1024} KB)")
    return 0 if ratio <= 1.0 and total <= PAGE_BUDGET else 1


if __name__ == "__main__":
    sys.exit(main())
