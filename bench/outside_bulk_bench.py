"""Many notes changed at once by another program: what history's record of them costs.

Run: ``python -m bench.outside_bulk_bench [--notes N] [--copies M]``. A live index (its
watcher on) with history wired as ``indexer serve`` wires it (``record_outside_changes``)
over an empty vault; then, timed from the change to (a) every note searchable and (b)
history holding a version of each: ``mv`` of a folder of N notes (default 3,000) into
the vault (one rename), then that folder renamed in the vault (each note's deletion and
new file, paired: ``moved_from``), then ``cp -r`` of a folder of M notes (default 5,000) into it,
then a ``git checkout`` rewriting E notes the vault held at the start (default 500; history
never saw them: their texts before, kept by the index, are recorded first).
Counted: history's write transactions (``BEGIN``s, and the lone statements that mark
versions final) and the time the history listeners took, against the wall time.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from bench.history_bench import print_table
from indexer.index.service import NoteIndex
from indexer.sqlite_lib import sqlite3
from indexer.vault import fsops
from indexer.vault.history.store import HistoryStore
from indexer.vault.sandbox import Sandbox
from indexer.vault.vault import Vault
from indexer.wiring import record_outside_changes
from shared.workspace import Workspace

DEADLINE = 600.0


def make_notes(folder: Path, notes: int, tag: str) -> None:
    """``notes`` small notes in folders of 100, each with words of its own."""
    for n in range(notes):
        sub = folder / f"g{n // 100:03}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"{tag}-{n:05}.md").write_text(
            f"# {tag} {n}\n\nSome words about {tag} number {n}, and more words.\n"
        )


class Timed:
    """A listener wrapped to add up the time it takes (history's part of a batch)."""

    def __init__(self, listener: Callable[..., None]) -> None:
        self.listener = listener
        self.seconds = 0.0

    def __call__(self, *args: Any) -> None:
        start = time.perf_counter()
        try:
            self.listener(*args)
        finally:
            self.seconds += time.perf_counter() - start


def wait(check: Callable[[], bool], what: str) -> float:
    start = time.perf_counter()
    while not check():
        if time.perf_counter() - start > DEADLINE:
            raise TimeoutError(what)
        time.sleep(0.02)
    return time.perf_counter()


def versions(history: HistoryStore) -> int:
    """(on history's own readers: a read-only connection beside its writer made a
    write fail now and then with SQLITE_PROTOCOL)"""
    return history.stats()["versions"]


def indexed(index: NoteIndex, total: int) -> bool:
    return sum(index.counts().values()) >= total


def found(index: NoteIndex, count: int) -> bool:
    """Whether ``count`` notes hold the checkout's new line in the index."""
    conn = sqlite3.connect(index.path)  # (a plain reader: see ``versions``)
    try:
        sql = "SELECT count(*) FROM notes WHERE body LIKE '%another branch%'"
        return int(conn.execute(sql).fetchone()[0]) >= count
    finally:
        conn.close()


def under(index: NoteIndex, folder: str, count: int) -> bool:
    """Whether ``count`` notes are indexed under ``folder``."""
    conn = sqlite3.connect(index.path)
    try:
        sql = "SELECT count(*) FROM notes WHERE substr(path, 1, ?) = ?"
        return int(conn.execute(sql, (len(folder), folder)).fetchone()[0]) >= count
    finally:
        conn.close()


def recorded_all(history: HistoryStore, total: int) -> bool:
    return versions(history) >= total


def checkout(folder: Path) -> None:
    """Every note of ``folder`` rewritten as git does (a new file renamed over it)."""
    for note in sorted(folder.rglob("*.md")):
        temp = note.with_name(f".{note.name}.tmp")
        temp.write_text(note.read_text() + "\nA line from another branch.\n")
        temp.replace(note)


def run(notes: int, copies: int, edits: int) -> list[tuple[str, str, str]]:
    rows: list[tuple[str, str, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ws = Workspace(root / "ws")
        ws.vault_dir("en").mkdir(parents=True)
        ws.state_dir.mkdir(parents=True, exist_ok=True)
        make_notes(ws.vault_dir("en") / "branch", edits, "branch")
        history = HistoryStore(ws.history_dir, fsops.etag_of)
        history.open()
        vault = Vault(Sandbox(ws), max_file_bytes=4 << 20, history=history)
        index = NoteIndex(ws)
        record_outside_changes(index, vault)
        listeners: list[Callable[..., None]] = [*index.change_listeners, *index.batch_listeners]
        timed = [Timed(li) for li in listeners]
        count_changes = len(index.change_listeners)
        index.change_listeners[:] = timed[:count_changes]
        index.batch_listeners[:] = timed[count_changes:]
        if index.keep_befores is not None:  # (history's part too: the texts before)
            timed.append(Timed(index.keep_befores))
            index.keep_befores = timed[-1]
        if index.renames_told is not None:  # (and the renames paired first)
            timed.append(Timed(index.renames_told))
            index.renames_told = timed[-1]
        index.open()
        vault.index_sync = index
        statements: list[str] = []
        assert history._writer is not None
        history._writer.set_trace_callback(statements.append)
        index.start_background()
        wait(lambda: index.ready, "the start")
        outside = root / "outside"
        make_notes(outside / "moved", notes, "moved")
        make_notes(outside / "copied", copies, "copied")
        vault_dir = ws.vault_dir("en")

        def moved() -> None:
            (outside / "moved").rename(vault_dir / "moved")

        def renamed() -> None:
            (vault_dir / "moved").rename(vault_dir / "renamed")

        def copied() -> None:
            shutil.copytree(outside / "copied", vault_dir / "copied")

        # (what, the change, notes searchable after it, versions in history after it)
        branch = partial(checkout, vault_dir / "branch")
        changes: list[tuple[str, Callable[[], None], Callable[[], bool], int]] = [
            (f"mv of {notes:,} notes", moved, partial(indexed, index, edits + notes), notes),
            (
                f"mv within the vault of {notes:,} notes",
                renamed,
                partial(under, index, "renamed/", notes),
                3 * notes,
            ),
            (
                f"cp -r of {copies:,} notes",
                copied,
                partial(indexed, index, edits + notes + copies),
                3 * notes + copies,
            ),
            (
                f"checkout of {edits:,} notes",
                branch,
                partial(found, index, edits),
                3 * notes + copies,
            ),
        ]
        for (what, change, searchable_all, expected), count in zip(
            changes, (notes, notes, copies, edits), strict=True
        ):
            if not count:
                continue
            for listener in timed:
                listener.seconds = 0.0
            statements.clear()
            start = time.perf_counter()
            change()
            searchable = wait(searchable_all, "searchable")
            if "checkout" in what:  # (each note: its text before, then the checkout's)
                expected += 2 * edits
            recorded = wait(partial(recorded_all, history, expected), "history")
            begins = sum(1 for s in statements if s.startswith("BEGIN"))
            marks = sum(1 for s in statements if s.startswith("UPDATE versions SET pending = 0"))
            busy = sum(listener.seconds for listener in timed)
            rows.append((f"{what}: all searchable", f"{searchable - start:.2f} s", "-"))
            rows.append((f"{what}: all in history", f"{recorded - start:.2f} s", "-"))
            rows.append((f"{what}: history transactions", f"{begins + marks:,}", "few"))
            rows.append((f"{what}: listeners' time", f"{busy:.2f} s", "-"))
        index.close()
        history.close()
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=3000)
    parser.add_argument("--copies", type=int, default=5000)
    parser.add_argument("--edits", type=int, default=500)
    args = parser.parse_args(argv)
    print_table(run(args.notes, args.copies, args.edits))
    return 0


if __name__ == "__main__":
    sys.exit(main())
