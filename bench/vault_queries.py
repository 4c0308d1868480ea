"""What the benches ask of a generated vault: query words with a realistic document
frequency in each script, ``rg -F`` over the same files as grep's floor, and the
environment that keeps a bench server's output quiet."""

from __future__ import annotations

import re
import shutil
import statistics
import subprocess
import time
from pathlib import Path

from indexer.sqlite_lib import sqlite3

QUIET = {
    "FASTMCP_SHOW_SERVER_BANNER": "false",
    "FASTMCP_CHECK_FOR_UPDATES": "off",
    "FASTMCP_LOG_LEVEL": "ERROR",
}


def pick_queries(vault: Path, sample: int = 3000) -> dict[str, str]:
    """Deterministic query words with a realistic document frequency."""
    # The bench's own notes only: the summaries the server writes (``.overview.md``)
    # came and went between runs, and moved the sample and so the words picked.
    notes = sorted(str(p) for p in vault.rglob("*.md") if not p.name.startswith("."))
    files = notes[:: max(1, len(notes) // sample)]
    texts = [Path(f).read_text(encoding="utf-8") for f in files]
    words: dict[str, int] = {}
    cjk2: dict[str, int] = {}
    cjk4: dict[str, int] = {}
    thai3: dict[str, int] = {}
    thai6: dict[str, int] = {}
    for text in texts:
        body = text.split("\n---\n", 1)[-1]
        for w in set(re.findall(r"[a-z]{6,}", body)):
            words[w] = words.get(w, 0) + 1
        for run in re.findall(r"[\u4e00-\u9fff]{2,}", body):
            if len(run) >= 2:
                cjk2[run[:2]] = cjk2.get(run[:2], 0) + 1
            if len(run) >= 4:
                cjk4[run[:4]] = cjk4.get(run[:4], 0) + 1
        for run in re.findall(r"[\u0e01-\u0e4e]{3,}", body):
            thai3[run[:3]] = thai3.get(run[:3], 0) + 1
            if len(run) >= 6:
                thai6[run[:6]] = thai6.get(run[:6], 0) + 1
    n = len(texts)

    def near(counts: dict[str, int], share: float) -> str:
        return min(sorted(counts), key=lambda w: abs(counts[w] / n - share))

    english = near(words, 0.02)
    pairs = (re.search(rf"\b{english} ([a-z]{{6,}})\b", t) for t in texts)
    after = next((m for m in pairs if m), None)
    phrase = f'"{english} {after.group(1)}"' if after else f'"{english}"'
    # A selective literal: a note's slug, found in the few notes that link to it.
    middle = sorted(vault.rglob("*.md"))[len(files) // 2].stem
    return {
        "rare": middle,
        "english": english,
        "phrase": phrase,
        "cjk2": near(cjk2, 0.01),
        "cjk4": near(cjk4, 0.002),
        "thai3": near(thai3, 0.01),
        "thai6": near(thai6, 0.002),
    }


def rg_time(vault: Path, literal: str, runs: int = 5) -> tuple[float | None, int]:
    if shutil.which("rg") is None:
        return None, 0
    samples = []
    count = 0
    for _ in range(runs):
        t0 = time.perf_counter()
        done = subprocess.run(
            ["rg", "-F", "--no-heading", "-n", literal, str(vault)],
            capture_output=True,
            text=True,
        )
        samples.append(time.perf_counter() - t0)
        count = len(done.stdout.splitlines())
    return statistics.median(samples), count


def sqlite_top10_ms(index: Path, query: str, runs: int) -> float:
    """p50 ms of SQLite alone ranking ``query``'s top 10 by BM25 in ``index`` (read-only):
    the floor under a search, which adds the title-first order, the total, the rows'
    snippets and the MCP round trip."""
    from indexer.index.query_parse import parse_query  # the bench's only look inside the indexer
    from indexer.index.schema import BM25_WEIGHTS

    weights = ", ".join(str(w) for w in BM25_WEIGHTS)
    sql = (
        f"SELECT rowid, bm25(notes_fts, {weights}) AS rank FROM notes_fts"
        " WHERE notes_fts MATCH ? ORDER BY rank LIMIT 10"
    )
    match = parse_query(query).match
    conn = sqlite3.connect(f"file:{index}?mode=ro", uri=True)
    try:
        conn.execute(sql, (match,)).fetchall()
        times = []
        for _ in range(runs):
            began = time.perf_counter()
            conn.execute(sql, (match,)).fetchall()
            times.append(time.perf_counter() - began)
    finally:
        conn.close()
    return statistics.median(times) * 1000
