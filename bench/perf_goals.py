"""Performance round 2 (issue 15): every goal in one run, each as a ratio to a floor.

Run: ``python -m bench.perf_goals [--long]``. The short form (``make bench``) uses a
10,000-note vault; ``--long`` (``make bench-long``) the 100,000-note one of the issue.
Vaults are generated once (``bench/gen_vault.py``) and cached in ``--workdir`` with
their index, so a second run starts at once. Floors measured in the same run: the MCP
``echo`` tool (one client and eight), ``rg`` over the same files, the interpreter's
own start and its import of what serving needs (fastmcp's server, the MCP SDK, uvicorn).

1. appends: p50 of ``append`` to a 1 KiB file and to a 1 MiB file beside ``echo``,
   taking turns in rounds (the small file is written back to 1 KiB every round);
   8 clients x 100 appends to one file (appends/s).
2. concurrent writes: ``write`` p50 with 8 clients (each its own 2 KB note) beside
   ``echo`` p50 with 8 clients; and the server's CPU and its threads' context switches
   a call of each (``proc_stats``: steadier than the p50s on a loaded machine).
3. events end to end: the real ``MemoryWriter``, batches of one event (events/s), and
   the tool calls each event cost (counted in the server's DEBUG log); then the one
   call the server needs per event (``append(create=False)`` on the day file), for
   the client change this bench recommends.
4. search and grep at N notes: p50 of words, a phrase, 2- and 4-character CJK and
   Thai queries beside ``echo``, each followed by SQLite's own top 10 by BM25 of that
   query (read-only, after the server stopped; its ratio is the search's to echo plus
   it); grep of a selective literal beside ``rg -F``.
5. start-up: exec to the URL file, and exec to the first tool answer, on an empty
   workspace and on the N-note one (index present: a restart; and without one); the
   ratio is to the import floor.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script (bench/__main__.py does that)
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fastmcp import Client

from bench.bench_server import Server, p50, ratio, serving, timed, wait_quiet, wait_ready
from bench.gen_vault import generate
from bench.proc_stats import Use, use_of
from bench.vault_queries import pick_queries, rg_time, sqlite_top10_ms

ROUND = 20
NOTE = "# Bench note\n\n" + ("Lorem ipsum dolor sit amet, consectetur adipiscing. " * 40)[:2000]
EVENT = "\n## Event\n\n- time: 2026-11-29T10:00:00+00:00\n\nsomething happened ({i})\n"
Row = tuple[str, str, str, str]  # figure, value (floor), ratio, goal


# -- 1, 2: appends and writes ------------------------------------------------------------


def day_text(size: int) -> str:
    """A day file of ``size`` bytes: a preamble and event sections."""
    parts = ["---\ntitle: Events\ntype: events\ntags: [events]\n---\n# Events\n"]
    total, i = len(parts[0]), 0
    while total < size:
        section = EVENT.format(i=i) + f"word{i % 997} text{i % 113} more words here.\n"
        parts.append(section)
        total += len(section)
        i += 1
    return "".join(parts)[:size].rsplit("\n", 1)[0] + "\n"


async def appends_and_writes(root: Path, calls: int) -> tuple[list[Row], dict[str, float]]:
    rows: list[Row] = []
    figures: dict[str, float] = {}
    small, big = day_text(1024), day_text(1 << 20)
    async with serving(root / "appends") as (_, client):
        en = {"lang": "en"}
        await client.call_tool("write", {**en, "path": "events/small.md", "content": small})
        await client.call_tool("write", {**en, "path": "events/big.md", "content": big})
        samples: dict[str, list[float]] = {"echo": [], "small": [], "big": []}
        calls_of = {
            "echo": lambda i: client.call_tool("echo", {"text": "x"}),
            "small": lambda i: client.call_tool(
                "append", {**en, "path": "events/small.md", "content": EVENT.format(i=i)}
            ),
            "big": lambda i: client.call_tool(
                "append", {**en, "path": "events/big.md", "content": EVENT.format(i=i)}
            ),
        }
        for call in calls_of.values():  # warm-up
            for i in range(5):
                await call(i)
        for start in range(0, calls, ROUND):
            await client.call_tool("write", {**en, "path": "events/small.md", "content": small})
            for name, call in calls_of.items():
                for i in range(start, start + ROUND):
                    samples[name].append(await timed(lambda: call(i)))  # noqa: B023
        echo, small_p50, big_p50 = (p50(samples[k]) for k in ("echo", "small", "big"))
        figures.update(echo1=echo, append_small=small_p50, append_big=big_p50)
        rows += [
            ("echo p50 ms, 1 client (floor)", f"{echo:.2f}", "1.00x", ""),
            ("append p50 ms, 1 KiB file", f"{small_p50:.2f}", ratio(small_p50, echo), "<= 3x echo"),
            ("append p50 ms, 1 MiB file", f"{big_p50:.2f}", ratio(big_p50, echo), "<= 3x echo"),
            (
                "append p50 1 MiB / 1 KiB",
                f"{big_p50:.2f} / {small_p50:.2f}",
                ratio(big_p50, small_p50),
                "<= 1.5x",
            ),
        ]

    async with serving(root / "concurrent") as (server, _):
        url = server.wait_url()

        async def client_loop(n: int, tool: str, count: int, ready: asyncio.Barrier) -> list[float]:
            out = []
            async with Client(url, timeout=120) as c:
                for i in range(-3, count):
                    if i == 0:
                        await ready.wait()  # connected and warmed up: the clock starts
                    args: dict[str, Any]
                    if tool == "echo":
                        args = {"text": "x"}
                    elif tool == "write":
                        args = {**en, "path": f"items/w{n}.md", "content": f"{NOTE}\n{i}\n"}
                    else:
                        args = {**en, "path": "events/day.md", "content": EVENT.format(i=i)}
                    took = await timed(lambda: c.call_tool(tool, args))  # noqa: B023
                    if i >= 0:
                        out.append(took)
            return out

        uses: dict[str, list[Use]] = {"echo": [], "write": []}

        async def eight(tool: str, count: int) -> tuple[list[float], float]:
            """Latencies, and the wall time from when all 8 are connected and warm (the
            server's CPU and switches a call go to ``uses``)."""
            ready = asyncio.Barrier(9)
            loops = asyncio.gather(*(client_loop(n, tool, count, ready) for n in range(8)))
            await ready.wait()
            began, before = time.perf_counter(), use_of(server.proc.pid)
            got = await loops
            wall, after = time.perf_counter() - began, use_of(server.proc.pid)
            if before is not None and after is not None and tool in uses:
                uses[tool].append(after.per_call(before, 8 * count))
            return [s for r in got for s in r], wall

        echo8: list[float] = []
        write8: list[float] = []
        for _ in range(max(1, calls // 100)):  # take turns, so noise hits both alike
            echo8 += (await eight("echo", 50))[0]
            write8 += (await eight("write", 50))[0]
        appended, wall = await eight("append", 100)
        rate = len(appended) / wall
        echo8_p50, write8_p50 = p50(echo8), p50(write8)
        figures.update(echo8=echo8_p50, write8=write8_p50, append8_rate=rate)
        rows += [
            ("echo p50 ms, 8 clients (floor)", f"{echo8_p50:.2f}", "1.00x", ""),
            (
                "write p50 ms, 8 clients",
                f"{write8_p50:.2f}",
                ratio(write8_p50, echo8_p50),
                "<= 3x echo",
            ),
            ("8 clients x 100 appends, one file", f"{rate:.0f} /s", "", ">= 150 /s"),
        ]
        rows += server_use_rows(uses)
    return rows, figures


def server_use_rows(uses: dict[str, list[Use]]) -> list[Row]:
    """The server's CPU ms a call, and its threads' switches a call (voluntary +
    preempted), for echo and write with 8 clients: steadier than their p50s under load."""
    if not uses["echo"] or not uses["write"]:
        return []
    echo, write = (
        Use(*(statistics.median(getattr(u, f.name) for u in uses[tool]) for f in fields(Use)))
        for tool in ("echo", "write")
    )
    return [
        (
            "server CPU ms a call, 8 clients: write / echo",
            f"{write.cpu * 1e3:.2f} / {echo.cpu * 1e3:.2f}",
            ratio(write.cpu, echo.cpu),
            "",
        ),
        (
            "server switches a call: write / echo",
            f"{write.voluntary:.1f}+{write.involuntary:.1f}"
            f" / {echo.voluntary:.1f}+{echo.involuntary:.1f}",
            "",
            "",
        ),
    ]


# -- 3: events end to end ----------------------------------------------------------------


def tool_calls(log: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for line in log.splitlines():
        if " tool=" in line:
            name = line.split(" tool=", 1)[1].split(" ", 1)[0]
            counts[name] = counts.get(name, 0) + 1
    return counts


async def events(root: Path, count: int) -> tuple[list[Row], dict[str, float]]:
    from agent_client import ClientSettings, CollectingNoticeSink, MemoryEntry, MemoryWriter

    ws = root / "events"
    server = Server(ws, "--log-level", "DEBUG")
    rows: list[Row] = []
    try:
        url = server.wait_url()
        settings = ClientSettings(workspace=ws, tz=UTC)
        sink = CollectingNoticeSink()
        writer = MemoryWriter(settings, sink)
        when = datetime(2026, 11, 29, 12, tzinfo=UTC)

        def entry(i: int) -> MemoryEntry:
            return MemoryEntry("en", "event", f"event {i}", f"something happened ({i})", [], when)

        writer.submit([entry(-1)])  # connects, writes the day file's preamble
        assert writer.flush(120)
        before = tool_calls(server.log())
        started = time.perf_counter()
        for i in range(count):
            writer.submit([entry(i)])
        assert writer.flush(600)
        rate = count / (time.perf_counter() - started)
        writer.close()
        failed = [n for n in sink.notices if not n.ok]
        if failed:
            raise RuntimeError(f"{len(failed)} events failed, e.g. {failed[0].error}")
        after = tool_calls(server.log())
        spent = {k: after.get(k, 0) - before.get(k, 0) for k in after}
        per_event = sum(spent.values()) / count
        shown = ", ".join(f"{k} {v / count:g}" for k, v in sorted(spent.items()) if v)
        # What the server can do per event: one append on the day file, one session.
        day = "events/2026/11/29.md"
        async with Client(url, timeout=120) as client:
            args = {"lang": "en", "path": day, "create": False}
            began = time.perf_counter()
            for i in range(count):
                content = EVENT.format(i=i)
                await client.call_tool("append", {**args, "content": content})
            one_call = count / (time.perf_counter() - began)
    finally:
        server.stop()
    rows += [
        (
            "events/s, MemoryWriter, batches of 1",
            f"{rate:.0f} /s",
            "",
            ">= 50 /s",
        ),
        ("MCP calls per event (client today)", f"{per_event:.2f} ({shown})", "", "<= 3"),
        ("events/s, 1 append per event (recommended)", f"{one_call:.0f} /s", "", ">= 50 /s"),
    ]
    return rows, {"events_rate": rate, "calls_per_event": per_event, "one_call_rate": one_call}


# -- 4: search and grep at N notes -------------------------------------------------------

GREP_TURNS = 15

KINDS = (
    ("english", "word"),
    ("phrase", "phrase"),
    ("cjk2", "2-char CJK"),
    ("cjk4", "4-char CJK"),
    ("thai3", "3-char Thai"),
    ("thai6", "6-char Thai"),
)


async def search_and_grep(
    root: Path, vault: Path, notes: int, rounds: int
) -> tuple[list[Row], dict[str, float]]:
    queries = pick_queries(vault)
    rows: list[Row] = []
    figures: dict[str, float] = {}
    async with serving(root) as (server, client):
        await wait_ready(client)
        await wait_quiet(server)
        samples: dict[str, list[float]] = {"echo": []}
        calls: dict[str, Callable[[], Awaitable[Any]]] = {
            "echo": lambda: client.call_tool("echo", {"text": "x"})
        }

        def search(query: str) -> Callable[[], Awaitable[Any]]:
            return lambda: client.call_tool("search", {"lang": "en", "query": query})

        for kind, _ in KINDS:
            samples[kind] = []
            calls[kind] = search(queries[kind])
        for call in calls.values():
            for _ in range(3):
                await call()
        for _ in range(0, rounds, ROUND):
            for name, call in calls.items():
                for _ in range(ROUND):
                    samples[name].append(await timed(call))
        grep_args = {"lang": "en", "pattern": queries["rare"], "fixed": True, "limit": 10000}
        grep: list[float] = []
        rg_runs: list[float] = []
        matches, rg_count = 0, 0
        await client.call_tool("grep", grep_args)  # the first builds the map of indexed notes
        for _ in range(GREP_TURNS):  # grep and rg take turns, so drift hits both alike
            began = time.perf_counter()
            result = await client.call_tool("grep", grep_args)
            grep.append(time.perf_counter() - began)
            matches = len(result.structured_content["matches"])
            rg_run, rg_count = rg_time(vault, queries["rare"], runs=1)
            if rg_run is not None:
                rg_runs.append(rg_run)
    echo = p50(samples["echo"])
    figures["echo_search"] = echo
    rows.append((f"echo p50 ms (floor), N={notes:,}", f"{echo:.2f}", "1.00x", ""))
    for kind, label in KINDS:
        value = p50(samples[kind])
        figures[f"search_{kind}"] = value
        figure = f"search {label} p50 ms [{queries[kind]}]"
        rows.append((figure, f"{value:.2f}", ratio(value, echo), "<= 2x"))
        # The floor under it: SQLite's own top 10 by BM25 (after the server stopped).
        floor = sqlite_top10_ms(root / ".indexer" / "index.sqlite", queries[kind], rounds)
        figures[f"sqlite_{kind}"] = floor
        rows.append(
            ("  SQLite alone: top 10 by BM25 ms", f"{floor:.2f}", ratio(value, echo + floor), "-")
        )
    rg = statistics.median(rg_runs) if rg_runs else None
    grep_ms = p50(grep)
    figures["grep"] = grep_ms
    if rg is None:
        rows.append(("grep literal ms (rg missing)", f"{grep_ms:.1f}", "-", "<= rg"))
    else:
        figures["rg"] = rg * 1000
        rows.append(
            (
                f"grep literal ms (rg), {matches}/{rg_count} lines",
                f"{grep_ms:.1f} ({rg * 1000:.1f})",
                ratio(grep_ms, rg * 1000),
                "<= 1x rg",
            )
        )
    return rows, figures


# -- 5: start-up -------------------------------------------------------------------------


async def start_once(workspace: Path) -> tuple[float, float, float]:
    """Seconds from exec to the URL file, to the first tool answer, and from SIGTERM
    to the process's exit (a restart waits for it; so does every end-to-end test)."""
    server = Server(workspace)
    try:
        url = server.wait_url(timeout=120)
        to_url = time.perf_counter() - server.started
        async with Client(url, timeout=120) as client:
            await client.call_tool("echo", {"text": "x"})
        to_answer = time.perf_counter() - server.started
    finally:
        stopping = time.perf_counter()
        server.stop()
    return to_url, to_answer, time.perf_counter() - stopping


def interpreter_start(code: str = "pass") -> float:
    """Median seconds for a fresh interpreter to run ``code``."""
    runs = []
    for _ in range(5):
        began = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        runs.append(time.perf_counter() - began)
    return statistics.median(runs)


# What serving cannot start without: the MCP server's own import (pydantic models of the
# MCP SDK) and uvicorn, with the collector off as ``indexer serve`` has it. A start's
# figure minus this is the indexer's own start-up.
SERVER_IMPORTS = (
    "import gc; gc.disable(); import fastmcp.server.server, uvicorn, starlette.applications"
)


async def startup(root: Path, vault_ws: Path, notes: int, runs: int) -> list[Row]:
    floor = interpreter_start()
    imports = interpreter_start(SERVER_IMPORTS)
    rows: list[Row] = [
        ("python -c pass s (floor)", f"{floor:.3f}", "", ""),
        ("python: import fastmcp server, uvicorn s (floor)", f"{imports:.3f}", "", ""),
    ]
    empty = root / "empty"
    cases: list[tuple[str, Path, str, Callable[[], None]]] = [
        ("empty workspace", empty, "<= 1.0 s", lambda: None),
        (f"{notes:,} notes, index present", vault_ws, "<= 1.5 s", lambda: None),
    ]
    copy = root / "fresh"
    if notes <= 10_000:  # a first start needs its own copy of the vault (and no index)

        def no_index() -> None:
            shutil.rmtree(copy / ".indexer", ignore_errors=True)

        if not copy.exists():
            shutil.copytree(vault_ws / "memory", copy / "memory")
        cases.append((f"{notes:,} notes, no index yet", copy, "<= 1.5 s", no_index))
    if not (vault_ws / ".indexer" / "index.sqlite").exists():
        async with serving(vault_ws) as (_, client):  # a restart is what is measured
            await wait_ready(client)
    for label, workspace, goal, prepare in cases:
        urls, answers, stops = [], [], []
        for _ in range(runs):
            prepare()
            to_url, to_answer, to_exit = await start_once(workspace)
            urls.append(to_url)
            answers.append(to_answer)
            stops.append(to_exit)
        url_s, answer_s = statistics.median(urls), statistics.median(answers)
        rows.append(
            (f"start {label}: exec->URL file s", f"{url_s:.2f}", ratio(url_s, imports), goal)
        )
        rows.append((f"start {label}: exec->first answer s", f"{answer_s:.2f}", "", "-"))
        stop_s = statistics.median(stops)
        rows.append((f"stop {label}: SIGTERM->exit s", f"{stop_s:.2f}", ratio(stop_s, floor), "-"))
    return rows


# -- main --------------------------------------------------------------------------------


def print_rows(title: str, rows: list[Row]) -> None:
    print(f"\n{title}")
    header = ("figure", "value", "ratio", "goal")
    widths = [max(len(header[i]), *(len(r[i]) for r in rows)) for i in range(4)]
    for row in (header, tuple("-" * w for w in widths), *rows):
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())


async def run(args: argparse.Namespace) -> None:
    notes = args.notes or (100_000 if args.long else 10_000)
    calls = args.calls or (400 if args.long else 200)
    vault_ws = args.workdir / f"n{notes}"
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        sections = args.only or ["appends", "events", "search", "startup"]
        if "appends" in sections:
            rows, _ = await appends_and_writes(root, calls)
            print_rows("Appends and writes (one server per part)", rows)
        if "events" in sections:
            rows, _ = await events(root, calls)
            print_rows("Events end to end (real MemoryWriter, batches of one)", rows)
        if "search" in sections or "startup" in sections:
            began = time.perf_counter()
            vault = generate(vault_ws, notes)
            print(f"(vault of {notes:,} notes ready in {time.perf_counter() - began:.0f} s)")
        if "search" in sections:
            rows, _ = await search_and_grep(vault_ws, vault, notes, args.rounds)
            print_rows(f"Search and grep at {notes:,} notes", rows)
        if "startup" in sections:
            rows = await startup(args.workdir, vault_ws, notes, args.starts)
            print_rows("Start-up (median of runs)", rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--long", action="store_true", help="the 100,000-note form")
    parser.add_argument("--notes", type=int, help="vault size (default 10,000; --long 100,000)")
    parser.add_argument("--calls", type=int, help="calls per latency figure")
    parser.add_argument("--rounds", type=int, default=100, help="calls per search figure")
    parser.add_argument("--starts", type=int, default=5, help="starts per start-up figure")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/vault-memory-bench"))
    parser.add_argument(
        "--only", nargs="+", choices=("appends", "events", "search", "startup"), help="parts"
    )
    args = parser.parse_args(argv)
    asyncio.run(run(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
