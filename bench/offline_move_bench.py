"""A folder moved while no indexer ran: what the start's reconcile costs to catch up.

Run: ``python -m bench.offline_move_bench [--notes N] [--names ascii|accented]
[--scatter] [--per-folder K] [--served]`` (default 3,000 notes, ASCII names, folders of
100). Each of N notes has, in its folder, a note that stays (``keep-``). The index is
built and closed; the folder is renamed (``os.rename``: 2N notes moved); the index is
opened again and reconciled, in process, as ``indexer serve``'s start does in the
background: its wall time, transactions and the statements that wrote words or
trigrams (FTS5's own writes of its tables too: each note tokenized in or out makes
several). ``--names accented`` gives every name an accent (a gone row's file is looked
for under another spelling of its name: its folder listed); ``--scatter`` moves the N
notes one by one out of their folders (the folders stay, the ``keep-`` notes in them);
``--per-folder 3000`` makes one large folder. ``--served`` also times a real ``indexer
serve``'s start to its URL file after another move (the reconcile runs after it).

Goals: no note tokenized again (0 FTS writes: no bytes changed); the reconcile far
below the rebuild of those notes.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from helpers.indexer_process import start_indexer

from bench.history_bench import print_table
from indexer.index.service import NoteIndex
from shared.workspace import Workspace


def make_notes(vault_dir: Path, notes: int, accented: bool, per_folder: int) -> None:
    """``topics/gNN/<name>NNNNN.md`` and, beside each, a note that stays (``keep``)."""
    for n in range(notes):
        folder = vault_dir / "topics" / f"g{n // per_folder:02}"
        folder.mkdir(parents=True, exist_ok=True)
        name = f"{'café-' if accented else 'note-'}{n:05}"
        text = f"# Note {n}\n\nSome words about note {n}, and [next]({name}.md).\n"
        (folder / f"{name}.md").write_text(text)
        (folder / f"keep-{'é' if accented else 'e'}{n:05}.md").write_text(f"# Kept {n}\n")


def move(vault_dir: Path, scatter: bool) -> None:
    """The folder renamed, or (``scatter``) each moved note renamed into ``archive``."""
    if not scatter:
        os.makedirs(vault_dir / "archive")
        os.rename(vault_dir / "topics", vault_dir / "archive/topics")
        return
    for folder in sorted((vault_dir / "topics").iterdir()):
        target = vault_dir / "archive" / folder.name
        target.mkdir(parents=True)
        for note in sorted(folder.iterdir()):
            if not note.name.startswith("keep-"):
                os.rename(note, target / note.name)


def reconciled(ws: Workspace) -> tuple[float, int, int]:
    """The reconcile's wall seconds, its transactions and its FTS writes."""
    index = NoteIndex(ws)
    index.open()
    statements: list[str] = []
    assert index._db.writer is not None
    index._db.writer.set_trace_callback(statements.append)
    try:
        began = time.perf_counter()
        index.reconcile()
        spent = time.perf_counter() - began
    finally:
        index.close()
    begins = sum(1 for s in statements if s.startswith("BEGIN"))
    fts = sum(1 for s in statements if "notes_fts" in s or "notes_tri" in s)
    return spent, begins, fts


def built(ws: Workspace) -> float:
    index = NoteIndex(ws)
    index.open()
    began = time.perf_counter()
    index.reconcile()
    spent = time.perf_counter() - began
    index.close()
    return spent


def to_url_file(root: Path) -> float:
    """Seconds from spawning ``indexer serve`` to its URL file."""
    began = time.perf_counter()
    server = start_indexer(root, env={"INDEXER_SUMMARIES": "0"}, timeout=600, settled=False)
    spent = time.perf_counter() - began
    server.stop()
    return spent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=3000)
    parser.add_argument("--names", choices=("ascii", "accented"), default="ascii")
    parser.add_argument("--scatter", action="store_true")
    parser.add_argument("--served", action="store_true")
    parser.add_argument("--per-folder", type=int, default=100, help="moved notes per folder")
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace(Path(tmp) / "ws")
        make_notes(ws.vault_dir("en"), args.notes, args.names == "accented", args.per_folder)
        build = built(ws)
        move(ws.vault_dir("en"), args.scatter)
        spent, begins, fts = reconciled(ws)
        how = "scattered" if args.scatter else "a folder"
        what = f"{args.notes if args.scatter else 2 * args.notes} notes ({args.names} names, {how})"
        rows.append((f"index built: {2 * args.notes} notes", f"{build:.2f} s", ""))
        rows.append((f"reconcile after a move of {what}", f"{spent:.2f} s", "≪ build"))
        rows.append(("  its transactions / FTS writes", f"{begins} / {fts}", "few / 0"))
        if args.served:
            os.rename(ws.vault_dir("en") / "archive", ws.vault_dir("en") / "moved")
            url = to_url_file(ws.root)
            rows.append(("serve: spawn to URL file, after another move", f"{url:.2f} s", ""))
    print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
