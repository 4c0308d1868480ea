"""Memory Writer benchmark: submit() latency, events/s and fallback merges/s end to end.

Run: ``python -m bench.writer_bench [--events N] [--merges N]``. Starts a real
``indexer serve`` on a temporary workspace and prints a Markdown table.
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from agent_client import ClientSettings, CollectingNoticeSink, MemoryEntry, MemoryWriter

QUIET = {
    "FASTMCP_SHOW_SERVER_BANNER": "false",
    "FASTMCP_CHECK_FOR_UPDATES": "off",
    "FASTMCP_LOG_LEVEL": "ERROR",
}


def start_indexer(workspace: Path) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "indexer", "serve", "--workspace", str(workspace)],
        env={**os.environ, **QUIET},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while not (workspace / "indexer.mcp.url").exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("indexer did not start")
        time.sleep(0.05)
    return proc


def event(i: int, day: datetime | None = None) -> MemoryEntry:
    entry = MemoryEntry("en", "event", f"event {i}", f"something happened ({i})", ["bench"])
    if day is not None:
        entry.timestamp = day
    return entry


def knowledge(i: int, round_: int) -> MemoryEntry:
    return MemoryEntry(
        "en",
        "knowledge",
        f"Topic {i}",
        f"fact {round_} about topic {i}",
        ["bench"],
        datetime(2026, 11, 29, tzinfo=UTC),
    )


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run(events: int, merges: int) -> list[tuple[str, str, str]]:
    rows: list[tuple[str, str, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        proc = start_indexer(ws)
        try:
            settings = ClientSettings(workspace=ws, tz=UTC)
            sink = CollectingNoticeSink()
            writer = MemoryWriter(settings, sink)

            # 1. submit() latency, one entry per call, while the thread is consuming
            latencies = []
            for i in range(events):
                entry = [event(i)]
                started = time.perf_counter()
                writer.submit(entry)
                latencies.append(time.perf_counter() - started)
            assert writer.flush(600)
            rows.append(("submit() latency p50", f"{pct(latencies, 0.5) * 1e6:.1f} µs", "≤ 100 µs"))
            rows.append(
                ("submit() latency p99", f"{pct(latencies, 0.99) * 1e6:.1f} µs", "≤ 100 µs")
            )

            # 2. events end to end: one batch of N (one connection), then N one-entry batches
            started = time.perf_counter()
            writer.submit([event(i) for i in range(events)])
            assert writer.flush(600)
            rate = events / (time.perf_counter() - started)
            rows.append((f"events appended, 1 batch of {events}", f"{rate:.0f} /s", "≥ 150 /s"))
            started = time.perf_counter()
            for i in range(events):
                writer.submit([event(i)])
            assert writer.flush(600)
            rate = events / (time.perf_counter() - started)
            rows.append((f"events appended, {events} batches of 1", f"{rate:.0f} /s", "-"))
            # the same batch into a day file of its own (the ones above keep growing one)
            day = datetime(2020, 1, 1, 12, tzinfo=UTC)
            started = time.perf_counter()
            writer.submit([event(i, day) for i in range(events)])
            assert writer.flush(600)
            rate = events / (time.perf_counter() - started)
            rows.append(
                (f"events appended, 1 batch of {events}, new day file", f"{rate:.0f} /s", "-")
            )

            # 3. fallback knowledge merges: creates, then appends to the same notes
            for round_, label in ((0, "new notes"), (1, "merges into existing notes")):
                started = time.perf_counter()
                writer.submit([knowledge(i, round_) for i in range(merges)])
                assert writer.flush(600)
                rate = merges / (time.perf_counter() - started)
                rows.append((f"fallback knowledge: {label}", f"{rate:.0f} /s", "-"))
            writer.close()
            failed = [n for n in sink.notices if not n.ok]
            if failed:
                raise RuntimeError(f"{len(failed)} entries failed, e.g. {failed[0].error}")
            mean = statistics.mean(latencies) * 1e6
            rows.append(("submit() latency mean", f"{mean:.1f} µs", "-"))
        finally:
            proc.terminate()
            proc.wait(30)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=500)
    parser.add_argument("--merges", type=int, default=100)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    rows = run(args.events, args.merges)
    print("| measure | result | goal |\n|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
