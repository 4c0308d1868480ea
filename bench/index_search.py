"""Index and search benchmark (``make bench``; not a test). Prints one table.

For each N (default 10,000 and 100,000) it generates a synthetic vault
(``bench/gen_vault.py``) and measures, each figure beside a floor from the same run:

- full index (``NoteIndex.rebuild`` in a child process) in notes/s, vs the floor "read
  every file + parse the frontmatter with CSafeLoader + insert into the same FTS tables";
- no-change reconcile, vs a bare walk + stat of the same files;
- search p50/p99 through MCP over HTTP (``indexer serve``) for an English word, a
  phrase, a 2- and a 4-character CJK word, a 3- and a 6-character Thai substring, vs a
  trivial tool call (``stat``);
- grep of a selective literal through MCP, vs ``rg -F`` over the same folder;
- external edit (temp file + rename, like an editor) -> visible in search, p50/p95
  over 50 edits, vs a write through MCP followed by the same search;
- peak RSS of the indexing child and of the server; index size / vault size.

``--cjk-designs`` adds the measurement behind the CJK choice (bigrams in unicode61 vs
a trigram table, whose 2-character words need a LIKE scan).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from indexer.sqlite_lib import sqlite3

if __package__ in (None, ""):  # run as a script (bench/__main__.py does that)
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.gen_vault import generate, vault_bytes
from bench.vault_queries import QUIET, pick_queries, rg_time

_FM = re.compile(r"\A---\n(.*?)\n---\n", re.S)


# -- child-process measurements --------------------------------------------------------


def child_rebuild(root: str) -> dict:
    from indexer.index.service import NoteIndex
    from shared.workspace import Workspace

    workspace = Workspace(Path(root))
    index = NoteIndex(workspace)
    index.open()
    started = time.perf_counter()
    stats = index.rebuild()
    seconds = time.perf_counter() - started
    info = index.info()
    index.close()
    return {"notes": stats.added, "seconds": seconds, "size": info["size_bytes"]}


def child_reconcile(root: str) -> dict:
    from indexer.index.service import NoteIndex
    from shared.workspace import Workspace

    index = NoteIndex(Workspace(Path(root)))
    started = time.perf_counter()
    index.open()
    opened = time.perf_counter() - started
    stats = index.reconcile()
    index.close()
    return {"open": opened, "seconds": stats.seconds, "unchanged": stats.unchanged}


def run_child(kind: str, root: Path) -> tuple[dict, int]:
    """Run a child measurement; returns its JSON and its peak RSS in bytes."""
    proc = subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), f"--child-{kind}", str(root)],
        stdout=subprocess.PIPE,
        text=True,
    )
    out = proc.stdout.read() if proc.stdout else ""
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise RuntimeError(f"child {kind} failed with {proc.returncode}")
    return json.loads(out), usage.ru_maxrss * 1024


# -- floors ----------------------------------------------------------------------------


def floor_index(vault: Path, db_path: Path) -> float:
    """notes/s of: read + CSafeLoader frontmatter + insert into the same FTS tables."""
    from indexer.index import schema as index_schema

    index_schema.delete_index_files(db_path)
    conn = index_schema.connect(db_path)
    conn.execute(index_schema._WORDS_DDL)
    conn.execute(index_schema._TRIGRAMS_DDL)
    started = time.perf_counter()
    count = 0
    conn.execute("BEGIN")
    for folder, _, files in os.walk(vault):
        for name in files:
            text = Path(folder, name).read_text(encoding="utf-8")
            match = _FM.match(text)
            meta = yaml.load(match.group(1), Loader=yaml.CSafeLoader) if match else {}
            body = text[match.end() :] if match else text
            conn.execute(
                "INSERT INTO notes_fts (rowid, title, tags, body, meta, lang) VALUES (?,?,?,?,?,?)",
                (count + 1, str(meta.get("title", "")), "", body, "", "en"),
            )
            conn.execute("INSERT INTO notes_tri (rowid, text) VALUES (?, ?)", (count + 1, text))
            count += 1
            if count % 2000 == 0:
                conn.execute("COMMIT")
                conn.execute("BEGIN")
    conn.execute("COMMIT")
    seconds = time.perf_counter() - started
    conn.close()
    index_schema.delete_index_files(db_path)
    return count / seconds


def floor_walk(vault: Path) -> float:
    started = time.perf_counter()
    for folder, _, files in os.walk(vault):
        for name in files:
            os.lstat(os.path.join(folder, name))
    return time.perf_counter() - started


# -- through the server ----------------------------------------------------------------


def start_server(root: Path) -> tuple[subprocess.Popen, str]:
    url_file = root / "indexer.mcp.url"
    url_file.unlink(missing_ok=True)
    proc = subprocess.Popen(
        [sys.executable, "-m", "indexer", "serve", "--workspace", str(root)],
        stdout=subprocess.DEVNULL,
        stderr=open(root.parent / f"serve-{root.name}.log", "w"),  # noqa: SIM115
        env={**os.environ, **QUIET},
    )
    deadline = time.monotonic() + 120
    while not url_file.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("the server did not start (see serve-*.log)")
        time.sleep(0.05)
    return proc, url_file.read_text().strip()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def through_mcp(url: str, vault: Path, queries: dict[str, str], rounds: int) -> dict:
    import fastmcp

    out: dict[str, Any] = {}
    async with fastmcp.Client(url, timeout=120) as client:
        deadline = time.monotonic() + 600
        while True:
            status = (await client.call_tool("status", {})).structured_content
            if status.get("index_ready"):
                break
            if time.monotonic() > deadline:
                raise RuntimeError("index never became ready")
            await asyncio.sleep(0.1)
        # a note, not a folder summary (``.overview.md``: no tool reaches dot-files)
        some_note = next(p for p in vault.rglob("*.md") if not p.name.startswith("."))
        some_note_rel = some_note.relative_to(vault).as_posix()

        async def timed(tool: str, args: dict, times: int) -> tuple[list[float], Any]:
            samples = []
            result = None
            for _ in range(times):
                t0 = time.perf_counter()
                result = (await client.call_tool(tool, args)).structured_content
                samples.append(time.perf_counter() - t0)
            return samples, result

        floor, _ = await timed("stat", {"lang": "en", "path": some_note_rel}, rounds)
        out["search_floor"] = floor
        for kind in ("english", "phrase", "cjk2", "cjk4", "thai3", "thai6"):
            samples, result = await timed("search", {"lang": "en", "query": queries[kind]}, rounds)
            out[f"search_{kind}"] = samples
            out[f"hits_{kind}"] = len(result["results"])
        grep_args = {"lang": "en", "pattern": queries["rare"], "fixed": True, "limit": 10000}
        samples, result = await timed("grep", grep_args, 5)
        out["grep"] = samples
        out["grep_matches"] = len(result["matches"])

        # Notes only: folder summaries (``.overview.md``, which the server writes into the
        # vault) are not in a default search.
        every = sorted(p for p in vault.rglob("*.md") if not p.name.startswith("."))
        notes = every[:: max(1, len(every) // 60)][:50]
        edits, writes = [], []
        for number, note in enumerate(notes):
            token = f"zqedit{number}x{os.getpid()}"
            text = note.read_text(encoding="utf-8") + f"\nedited {token}\n"
            tmp = note.with_name(f".{note.name}.tmp.bench")
            t0 = time.perf_counter()
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, note)
            while True:
                found = await client.call_tool("search", {"lang": "en", "query": token})
                if found.structured_content["results"]:
                    break
                if time.perf_counter() - t0 > 30:
                    raise RuntimeError(f"edit {token} never became visible")
            edits.append(time.perf_counter() - t0)
            rel = note.relative_to(vault).as_posix()
            token2 = token + "w"
            t0 = time.perf_counter()
            await client.call_tool(
                "write", {"lang": "en", "path": rel, "content": text + f"\n{token2}\n"}
            )
            found = await client.call_tool("search", {"lang": "en", "query": token2})
            writes.append(time.perf_counter() - t0)
            assert found.structured_content["results"], "read-your-writes failed"
        out["edit"] = edits
        out["write_search"] = writes
    return out


def vm_hwm(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


# -- one N -----------------------------------------------------------------------------


def bench_one(notes: int, workdir: Path, rounds: int) -> dict:
    root = workdir / f"n{notes}"
    root.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    vault = generate(root, notes)
    generated = time.perf_counter() - t0
    size = vault_bytes(vault)
    print(f"[{notes}] vault ready ({size / 1e6:.0f} MB, {generated:.0f}s)", file=sys.stderr)
    floor = floor_index(vault, workdir / "floor.sqlite")
    print(f"[{notes}] floor {floor:.0f} notes/s", file=sys.stderr)
    rebuilt, rebuild_rss = run_child("rebuild", root)
    print(f"[{notes}] index {rebuilt['notes'] / rebuilt['seconds']:.0f} notes/s", file=sys.stderr)
    walk = min(floor_walk(vault) for _ in range(2))
    reconciled, _ = run_child("reconcile", root)
    queries = pick_queries(vault)
    print(f"[{notes}] queries {queries}", file=sys.stderr)
    proc, url = start_server(root)
    try:
        mcp = asyncio.run(through_mcp(url, vault, queries, rounds))
        server_rss = vm_hwm(proc.pid)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    rg, rg_count = rg_time(vault, queries["rare"])
    return {
        "notes": notes,
        "vault_bytes": size,
        "floor_rate": floor,
        "rate": rebuilt["notes"] / rebuilt["seconds"],
        "index_bytes": rebuilt["size"],
        "rebuild_rss": rebuild_rss,
        "walk": walk,
        "reconcile": reconciled["seconds"],
        "reconcile_open": reconciled["open"],
        "queries": queries,
        "mcp": mcp,
        "server_rss": server_rss,
        "rg": rg,
        "rg_count": rg_count,
    }


def _ms(samples: list[float], q: float | None = None) -> str:
    value = statistics.median(samples) if q is None else percentile(samples, q)
    return f"{value * 1000:.1f}"


def _cells(r: dict) -> list[tuple[str, str, str]]:
    """(metric, value (floor), goal) rows of one run."""
    m = r["mcp"]
    rg = "rg missing" if r["rg"] is None else f"rg {r['rg'] * 1000:.0f}"
    rows = [
        (
            "full index notes/s (floor)",
            f"{r['rate']:.0f} ({r['floor_rate']:.0f}) = {r['rate'] / r['floor_rate']:.0%}",
            ">= 50% of floor",
        ),
        (
            "no-change reconcile s (walk+stat)",
            f"{r['reconcile']:.2f} ({r['walk']:.2f}); open {r['reconcile_open']:.2f}",
            "<= 2 s at 100k",
        ),
        (
            "MCP floor: stat p50/p99 ms",
            f"{_ms(m['search_floor'])} / {_ms(m['search_floor'], 0.99)}",
            "",
        ),
    ]
    for kind, label in (
        ("english", "word"),
        ("phrase", "phrase"),
        ("cjk2", "2-char CJK"),
        ("cjk4", "4-char CJK"),
        ("thai3", "3-char Thai"),
        ("thai6", "6-char Thai"),
    ):
        samples = m[f"search_{kind}"]
        rows.append(
            (
                f"search {label} p50/p99 ms [hits]",
                f"{_ms(samples)} / {_ms(samples, 0.99)} [{m[f'hits_{kind}']}] {r['queries'][kind]}",
                "p50 <= 25 ms at 100k",
            )
        )
    rows += [
        (
            "grep literal via MCP ms (rg); lines",
            f"{_ms(m['grep'])} ({rg}); {m['grep_matches']}/{r['rg_count']}",
            "<= rg",
        ),
        (
            "edit->search p50/p95 ms (write+search)",
            f"{_ms(m['edit'])} / {_ms(m['edit'], 0.95)} ({_ms(m['write_search'])})",
            "p95 <= 300 ms",
        ),
        (
            "peak RSS MiB: indexing / server",
            f"{r['rebuild_rss'] / 2**20:.0f} / {r['server_rss'] / 2**20:.0f}",
            "<= 200 MiB at 100k",
        ),
        (
            "index size / vault size",
            f"{r['index_bytes'] / 1e6:.0f} / {r['vault_bytes'] / 1e6:.0f} MB"
            f" = {r['index_bytes'] / r['vault_bytes']:.1f}x",
            "",
        ),
    ]
    return rows


def print_table(results: list[dict]) -> None:
    per_run = [_cells(r) for r in results]
    headers = ["metric", *[f"N={r['notes']:,}" for r in results], "goal"]
    table = [headers]
    for i, (name, _, goal) in enumerate(per_run[0]):
        table.append([name, *[cells[i][1] for cells in per_run], goal])
    widths = [max(len(row[i]) for row in table) for i in range(len(headers))]
    for number, row in enumerate(table):
        print("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip())
        if number == 0:
            print("  ".join("-" * w for w in widths))
    if any(r["rg"] is None for r in results):
        print("note: rg (ripgrep) is not installed, so the rg figure is skipped")


# -- the CJK design choice -------------------------------------------------------------


def cjk_designs(vault: Path, queries: dict[str, str], workdir: Path) -> None:
    """Bigrams in unicode61 (chosen) vs a trigram table (+ LIKE for 2-char words)."""
    from indexer.index.query_parse import parse_query
    from indexer.index.text import CJK_RUN, cjk_expand

    texts = [p.read_text(encoding="utf-8") for p in sorted(vault.rglob("*.md"))]
    texts = [t for t in texts if CJK_RUN.search(t)]
    designs = {
        "bigram": "CREATE VIRTUAL TABLE t USING fts5(body, tokenize='unicode61')",
        "trigram": "CREATE VIRTUAL TABLE t USING fts5(body, tokenize='trigram')",
    }
    # A trigram table cannot find 2-character words: they need a scan of the texts.
    print(f"\nCJK designs over the {len(texts)} notes with CJK text:")
    for name, ddl in designs.items():
        path = workdir / f"cjk-{name}.sqlite"
        path.unlink(missing_ok=True)
        conn = sqlite3.connect(path)
        conn.execute(ddl)
        conn.execute("CREATE TABLE plain (body TEXT)")
        t0 = time.perf_counter()
        with conn:
            conn.executemany(
                "INSERT INTO t (body) VALUES (?)",
                ((cjk_expand(t) if name == "bigram" else t,) for t in texts),
            )
        build = time.perf_counter() - t0
        if name == "trigram":
            with conn:
                conn.executemany("INSERT INTO plain (body) VALUES (?)", ((t,) for t in texts))
        cells = []
        for kind in ("cjk2", "cjk4"):
            word = queries[kind]
            if name == "bigram":
                sql, arg = "SELECT count(*) FROM t WHERE t MATCH ?", parse_query(word).match
            elif len(word) >= 3:
                sql, arg = "SELECT count(*) FROM t WHERE t MATCH ?", f'"{word}"'
            else:
                sql, arg = "SELECT count(*) FROM plain WHERE instr(body, ?) > 0", word
            t0 = time.perf_counter()
            for _ in range(20):
                hits = conn.execute(sql, (arg,)).fetchone()[0]
            cells.append(f"{kind} {(time.perf_counter() - t0) / 20 * 1000:.2f} ms ({hits} hits)")
        conn.close()
        size = path.stat().st_size
        label = name if name == "bigram" else "trigram (2-char: scan)"
        print(f"  {label:24} build {build:.2f}s fts size {size / 1e6:.1f} MB  " + "  ".join(cells))
        path.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/vault-memory-bench"))
    parser.add_argument("--rounds", type=int, default=100, help="calls per search figure")
    parser.add_argument("--cjk-designs", action="store_true")
    parser.add_argument("--child-rebuild", help=argparse.SUPPRESS)
    parser.add_argument("--child-reconcile", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_rebuild:
        print(json.dumps(child_rebuild(args.child_rebuild)))
        return
    if args.child_reconcile:
        print(json.dumps(child_reconcile(args.child_reconcile)))
        return
    results = [bench_one(n, args.workdir, args.rounds) for n in args.notes]
    print_table(results)
    if args.cjk_designs:
        root = args.workdir / f"n{args.notes[0]}"
        vault = root / "memory" / "languages" / "en" / "vault"
        cjk_designs(vault, results[0]["queries"], args.workdir)


if __name__ == "__main__":
    main()
