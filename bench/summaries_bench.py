"""Directory summaries benchmark (``make bench``; not a test). Prints one table.

Issue 11's three figures, each beside a floor measured in the same run:

- fallback pass (no model, ``--force``) over a synthetic 10,000-note vault
  (``bench/gen_vault.py``, ~330 folders); goal <= 10 s. Floor: what any pass must do,
  fetch every note's type and abstract from the index, list every folder and replace
  one small file in each, atomically.
- a pass over 1,000 folders (40 x 24 leaves + 40 + the root, 2 notes a leaf) with the
  OpenAI-compatible stub answering in 200 ms, ``INDEXER_LLM_MAX_CONCURRENCY`` 10; goal
  <= 30 s. Floor: 1,000 x 0.2 s / 10, the time the concurrency bound allows at best.
- a pass over the unchanged 10,000-note vault, in a fresh process (as at a restart):
  no model call, no write; goal <= 1 s. Floor: list every folder and fetch every
  note's type and abstract (what the pass reads), without computing anything.

``--notes`` and ``--folders`` change the sizes (the goals are for the defaults).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from indexer.sqlite_lib import sqlite3

if __package__ in (None, ""):  # run as a script (bench/__main__.py does that)
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from bench.gen_vault import generate
from indexer.index.service import NoteIndex
from indexer.jobs.llm import JobModel, ModelSettings
from indexer.jobs.summaries import Summaries
from indexer.jobs.summary_pass import PassStats
from indexer.vault import atomic
from indexer.vault.sandbox import Sandbox
from shared.workspace import Workspace

DELAY = 0.2
CONCURRENCY = 10


def summarize(root: Path, *, force: bool, model: JobModel | None = None) -> PassStats:
    """One pass over every vault of the workspace at ``root`` (the index must exist)."""
    workspace = Workspace(root)
    index = NoteIndex(workspace)
    index.open()
    try:
        summaries = Summaries(
            Sandbox(workspace), index=index, model=model, written=index.note_changed
        )

        async def run() -> PassStats:
            try:
                return await summaries.run_pass(force=force)
            finally:
                if model is not None:
                    await model.close()

        return asyncio.run(run())
    finally:
        index.close()


def build_index(root: Path) -> None:
    index = NoteIndex(Workspace(root))
    index.open()
    index.reconcile()
    index.close()


def folders_of(vault: Path) -> list[Path]:
    found = []
    for folder, dirs, _ in os.walk(vault):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        found.append(Path(folder))
    return found


def io_floor(root: Path, write: bool) -> float:
    """Fetch every note's row; list every folder, and (``write``) replace one small file
    in each, atomically: what a pass reads and writes, with no work in between."""
    workspace = Workspace(root)
    started = time.perf_counter()
    conn = sqlite3.connect(f"file:{workspace.index_path}?mode=ro", uri=True)
    rows = conn.execute(
        "SELECT path, mtime_ns, type, abstract, exact FROM notes INDEXED BY notes_stat"
    ).fetchall()
    conn.close()
    assert rows
    for lang in workspace.langs():
        for folder in folders_of(workspace.vault_dir(lang)):
            fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
            try:
                with os.scandir(fd) as entries:
                    for _ in entries:
                        pass
                if write:
                    atomic.replace_at(fd, ".bench-floor", b"x" * 600, durable=False)
                    os.unlink(".bench-floor", dir_fd=fd)
            finally:
                os.close(fd)
    return time.perf_counter() - started


def thousand_folders(root: Path, folders: int) -> int:
    """Write a vault of ``folders`` folders: the root, topics, 24 leaves a topic."""
    vault = Workspace(root).vault_dir("en")
    leaves_per_topic = 24
    topics = max(1, round((folders - 1) / (leaves_per_topic + 1)))
    for t in range(topics):
        for leaf in range(leaves_per_topic):
            for n in range(2):
                path = vault / f"topic{t:02d}" / f"leaf{leaf:02d}" / f"note{n}.md"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(f"# Topic {t} leaf {leaf} note {n}\n\nAbout {t}.{leaf}.{n}.\n")
    return 1 + topics * (leaves_per_topic + 1)


def fresh_unchanged_pass(root: Path) -> dict:
    """The unchanged pass in a child process (a restart: nothing cached)."""
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--child-unchanged", str(root)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def child_unchanged(root: str) -> None:
    """The pass alone (the index is open already in a server), with its CPU time."""
    cpu = time.process_time()
    stats = summarize(Path(root), force=False)
    cpu = time.process_time() - cpu
    print(json.dumps({"seconds": stats.seconds, "cpu": cpu, "stats": stats.__dict__}))


def child_stub() -> None:
    """The stub model in its own process (a model server is never ours to pay for):
    prints its URL, answers until stdin closes, then prints the most requests it had
    in flight at once."""
    from helpers.llm_stub import running_llm_stub, say

    def answer(request: dict, turn: int) -> dict:
        data = json.loads(request["messages"][1]["content"])
        return say(json.dumps({"abstract": f"About {data['folder']}", "overview": "# O\n"}))

    with running_llm_stub() as stub:
        stub.delay = DELAY
        stub.run(answer)
        print(stub.base_url, flush=True)
        sys.stdin.read()
        print(json.dumps({"max_in_flight": stub.max_in_flight, "requests": len(stub.requests)}))


def model_run(root: Path) -> tuple[PassStats, float, dict]:
    stub = subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), "--child-stub"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert stub.stdin is not None and stub.stdout is not None
    try:
        base_url = stub.stdout.readline().strip()
        settings = ModelSettings(
            model="stub", base_url=base_url, max_concurrency=CONCURRENCY, timeout=60
        )
        started = time.perf_counter()
        stats = summarize(root, force=True, model=JobModel(settings))
        seconds = time.perf_counter() - started
    finally:
        stub.stdin.close()
    seen = json.loads(stub.stdout.read())
    stub.wait(30)
    return stats, seconds, seen


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--folders", type=int, default=1_000)
    parser.add_argument("--child-unchanged", help=argparse.SUPPRESS)
    parser.add_argument("--child-stub", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_stub:
        child_stub()
        return 0
    if args.child_unchanged:
        child_unchanged(args.child_unchanged)
        return 0
    rows: list[tuple[str, float, float, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "big"
        generate(big, args.notes)
        print(f"indexing {args.notes} notes...", flush=True)
        build_index(big)
        started = time.perf_counter()
        fallback = summarize(big, force=True)
        seconds = time.perf_counter() - started
        rows.append((f"fallback, {args.notes} notes, {fallback.folders} folders", seconds,
                     io_floor(big, write=True), 10.0))  # fmt: skip
        unchanged = fresh_unchanged_pass(big)
        assert unchanged["stats"]["skipped"] == fallback.folders, unchanged
        assert unchanged["stats"]["fallback"] == unchanged["stats"]["llm"] == 0, unchanged
        rows.append((f"unchanged, {args.notes} notes (no call, no write)", unchanged["seconds"],
                     io_floor(big, write=False), 1.0))  # fmt: skip

        many = Path(tmp) / "many"
        count = thousand_folders(many, args.folders)
        build_index(many)
        stats, seconds, seen = model_run(many)
        assert stats.llm == count == seen["requests"], (stats, seen)
        assert seen["max_in_flight"] == CONCURRENCY, seen
        ideal = count * DELAY / CONCURRENCY
        rows.append((f"model {DELAY * 1000:.0f} ms, {count} folders, {CONCURRENCY} at once",
                     seconds, ideal, 30.0))  # fmt: skip

    print("\nDirectory summaries (seconds; floor measured in the same run)")
    print(f"{'pass':<48}{'seconds':>9}{'floor':>8}{'ratio':>7}{'goal':>7}")
    ok = True
    for name, seconds, floor, goal in rows:
        ok = ok and seconds <= goal
        ratio = seconds / floor if floor else float("inf")
        print(f"{name:<48}{seconds:>9.2f}{floor:>8.2f}{ratio:>7.1f}{goal:>7.0f}")
    print("all goals met" if ok else "a goal was missed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
