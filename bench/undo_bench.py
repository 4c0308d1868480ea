"""Undo of a big folder move: what it costs against the move it takes back, and what
the index adds to both.

Run: ``python -m bench.undo_bench [--notes N]`` (default 3,000). A folder of N notes
(in folders of 100, each note linking to the next) is moved by one entry, then the
entry is undone; the move is the floor, measured in the same run on the same files
(both record history for the same 2N paths):

- in process, the vault with history and the index attached (reconciled first, as a
  server's is): move and undo wall time, and the ``fsync`` calls the undo made per file
  and the time in them (it wrote each note anew, with two: 27 s for 3,000 notes, 16 s
  of it in ``fsync``);
- the same move and undo in process without the index: the floor of what the index
  adds (told a file at a time, it was half of each: one transaction per path, each
  moved note's words and trigrams tokenized out and in again; now one transaction,
  the rows re-keyed);
- through a real ``indexer serve`` and an MCP client (the watcher running too).

Goals: undo ≤ 2x the move; fsyncs per file ≤ 0.1 (a folder's, not a file's); move and
undo with the index ≤ 1.25x without it (the index a small part of the whole).

Then the undo of an entry that appended a line to each of ``--appends`` notes (in
folders of 100; 4 clients did so to 10,000 notes: ~9 ms a note undone): in process,
the appends' and the undo's wall time per note and the undo's fsyncs per note (two, the
note and its folder, before the folders were synced once each; the note's own stays).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from fastmcp import Client

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from helpers.indexer_process import start_indexer

from bench.history_bench import print_table, setup
from indexer.index.service import NoteIndex
from shared.workspace import Workspace

ENTRY = "bench1"
REASON = f"entry:{ENTRY} tidy"


def make_notes(vault_dir: Path, notes: int) -> None:
    """``topics/gNN/nNNNNN.md``: N notes in folders of 100, written as another program
    would (history first sees them in the move); the first of each folder links out of
    ``topics``."""
    for n in range(notes):
        folder = vault_dir / "topics" / f"g{n // 100:02}"
        folder.mkdir(parents=True, exist_ok=True)
        text = f"# Note {n}\n\nSome words about note {n}.\n\n[next](n{n + 1:05}.md)\n"
        if n % 100 == 0:  # a link out of the folder: the move rewrites it, undo writes back
            text += "\n[home](../../index.md)\n"
        (folder / f"n{n:05}.md").write_text(text)


def in_process(root: Path, notes: int, *, index: bool = True) -> dict[str, float]:
    """Move and undo wall seconds through the vault (``index``: attached, whole), and
    the undo's fsyncs."""
    ws = Workspace(root / ("indexed" if index else "bare"))
    make_notes(ws.vault_dir("en"), notes)
    with setup(ws.root, True, index=index) as vault:
        if isinstance(vault.index_sync, NoteIndex):
            vault.index_sync.reconcile()  # (the notes have rows, as a server's index has)
        began = time.perf_counter()
        vault.move("en", "topics", "archive/topics", reason=REASON)
        moved = time.perf_counter() - began
        with _counting_fsyncs() as (calls, spent):
            began = time.perf_counter()
            done = vault.undo("en", ENTRY)
            undone = time.perf_counter() - began
    assert len(done["files"]) == 2 * notes
    return {"move": moved, "undo": undone, "fsyncs": calls[0], "fsync_s": spent[0]}


def appends_in_process(root: Path, notes: int) -> dict[str, float]:
    """The appends of one entry to ``notes`` notes, then its undo, through the vault
    with history and the index: wall seconds of each, the undo's fsyncs."""
    ws = Workspace(root / "appends")
    for n in range(notes):
        folder = ws.vault_dir("en") / "bulk" / f"g{n // 100:03}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"n{n:05}.md").write_text(f"# Note {n}\n\nSome words about note {n}.\n")
    with setup(ws.root, True) as vault:
        if isinstance(vault.index_sync, NoteIndex):
            vault.index_sync.reconcile()
        paths = [f"bulk/g{n // 100:03}/n{n:05}.md" for n in range(notes)]
        began = time.perf_counter()
        for path in paths:
            vault.append("en", path, "- one more line\n", reason=f"entry:{ENTRY}b bulk")
        appended = time.perf_counter() - began
        with _counting_fsyncs() as (calls, spent):
            began = time.perf_counter()
            done = vault.undo("en", f"{ENTRY}b")
            undone = time.perf_counter() - began
    assert len(done["files"]) == notes
    return {"append": appended, "undo": undone, "fsyncs": calls[0], "fsync_s": spent[0]}


@contextlib.contextmanager
def _counting_fsyncs() -> Iterator[tuple[list[int], list[float]]]:
    """``os.fsync`` counted (calls, seconds in them) within the block."""
    fsync, calls, spent = os.fsync, [0], [0.0]

    def counted(fd: Any) -> None:
        start = time.perf_counter()
        fsync(fd)
        calls[0] += 1
        spent[0] += time.perf_counter() - start

    os.fsync = counted
    try:
        yield calls, spent
    finally:
        os.fsync = fsync


def _taking_turns(root: Path, notes: int, rounds: int) -> tuple[dict, dict]:
    """In process without the index and with it, taking turns so that machine noise
    hits both alike; each time the best of ``rounds``."""
    best: list[dict[str, float]] = [{}, {}]
    for turn in range(rounds):
        for k, index in enumerate((False, True)):
            times = in_process(root / str(turn), notes, index=index)
            best[k] = {key: min(value, best[k].get(key, value)) for key, value in times.items()}
    return best[0], best[1]


def served(root: Path, notes: int) -> dict[str, float]:
    """Move and undo wall seconds through MCP on a real ``indexer serve``."""
    ws = root / "served"
    make_notes(Workspace(ws).vault_dir("en"), notes)
    server = start_indexer(ws, env={"INDEXER_SUMMARIES": "0"}, timeout=600)

    async def run() -> dict[str, float]:
        async with Client(server.url, auth=server.token, timeout=600) as client:
            args = {"lang": "en", "path": "topics", "new_path": "archive/topics"}
            began = time.perf_counter()
            await client.call_tool("move", {**args, "reason": REASON})
            moved = time.perf_counter() - began
            began = time.perf_counter()
            await client.call_tool("undo", {"lang": "en", "entry_id": ENTRY})
            return {"move": moved, "undo": time.perf_counter() - began}

    try:
        return asyncio.run(run())
    finally:
        server.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=2, help="in process, each the best of")
    parser.add_argument("--appends", type=int, default=3000, help="notes of the appends' undo")
    parser.add_argument("--appends-only", action="store_true", help="only the appends' undo")
    args = parser.parse_args(argv)
    folder = f"{args.notes}-note folder"
    with tempfile.TemporaryDirectory() as tmp:
        appends = appends_in_process(Path(tmp), args.appends)
        if args.appends_only:
            print_table(_appends_rows(appends, args.appends))
            return 0
        bare, indexed = _taking_turns(Path(tmp), args.notes, args.rounds)
        mcp = served(Path(tmp), args.notes)
    rows = []
    for label, times in (("vault", indexed), ("MCP, served", mcp)):
        undo, move = times["undo"], times["move"]
        rows.append((
            f"{label}: undo / move of a {folder}",
            f"{undo:.2f} / {move:.2f} s = {undo / move:.2f}x",
            "≤ 2x",
        ))  # fmt: skip
    per_file = indexed["fsyncs"] / args.notes
    rows.append((
        "vault: fsync calls of the undo per note (seconds in them)",
        f"{indexed['fsyncs']:.0f} / {args.notes} = {per_file:.3f} ({indexed['fsync_s']:.2f} s)",
        "≤ 0.1",
    ))  # fmt: skip
    for step in ("move", "undo"):
        rows.append((
            f"vault: {step} of a {folder}, with the index / without",
            f"{indexed[step]:.2f} / {bare[step]:.2f} s = {indexed[step] / bare[step]:.2f}x",
            "≤ 1.25x",
        ))  # fmt: skip
    print_table(rows + _appends_rows(appends, args.appends))
    return 0


def _appends_rows(times: dict[str, float], notes: int) -> list[tuple[str, str, str]]:
    undo, append = times["undo"], times["append"]
    return [
        (
            f"vault: undo / appends of one entry to {notes} notes (ms a note)",
            f"{undo:.2f} / {append:.2f} s ({undo / notes * 1000:.1f} / "
            f"{append / notes * 1000:.1f} ms)",
            "",
        ),
        (
            "vault: fsync calls of the appends' undo per note (seconds in them)",
            f"{times['fsyncs']:.0f} / {notes} = {times['fsyncs'] / notes:.2f} "
            f"({times['fsync_s']:.2f} s)",
            "≤ 1.1",
        ),
    ]


if __name__ == "__main__":
    sys.exit(main())
