"""Renames made while no indexer ran, recorded by the next start's catch-up: each new
path names its old one (``moved_from``) however long the catch-up takes to tell its
changes, and a catch-up killed midway leaves the next start to pair the rest.

A rename that changes a note's name is, to the catch-up, a new file (told with the
others changed) and a gone one (told at the end): 30,000 of them were told 80 s apart,
past ``pairing.PAIR_WINDOW_MS``, and lost ``moved_from``. Here each look at the clock is
two minutes after the one before, so no two told changes are within the window. The
kill is a child process's ``os._exit`` once the pass has recorded a batch of deletions,
before their new files (the state ``kill -9`` leaves, without a race to win).
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from helpers.history import run_child
from helpers.vault_stack import wired_stack

from indexer.vault.fsops import etag_of
from indexer.vault.history.store import HistoryStore
from shared.workspace import Workspace

RENAMED = 40  # notes renamed (a new name each) while no indexer ran

CHILD = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path
    from helpers.vault_stack import wired_stack
    from indexer.vault.history.store import HistoryStore
    from shared.workspace import Workspace

    real = HistoryStore.observe_many

    def observe_then_die(self, seen, at):
        found = real(self, seen, at)
        if any(one.data is None for one in seen):
            os._exit(9)  # as kill -9 after a batch of deletions: nothing after this runs
        return found

    HistoryStore.observe_many = observe_then_die
    for _ in wired_stack(Workspace(Path(sys.argv[1]))):
        pass
    sys.exit("the pass ended before the kill")
    """
)


def slow_clock() -> Callable[[], datetime]:
    ticks = iter(range(1_000_000))
    start = datetime(2026, 1, 1, tzinfo=UTC)
    return lambda: start + timedelta(minutes=2 * next(ticks))


def old_path(n: int) -> str:
    return f"Projets é/n{n}.md"


def new_path(n: int) -> str:
    return f"ملفات/2026-n{n}.md"  # (another folder, another name: no row follows it)


def renamed_offline(ws: Workspace) -> dict[int, bytes]:
    """Notes the tools wrote, then renamed (each to a new name) while no indexer ran."""
    for vault, _ in wired_stack(ws, slow_clock()):
        for n in range(RENAMED):
            vault.write("en", old_path(n), f"# Note {n}\n\ntext {n}\n")
    root = ws.vault_dir("en")
    texts = {n: (root / old_path(n)).read_bytes() for n in range(RENAMED)}
    (root / new_path(0)).parent.mkdir()
    for n in range(RENAMED):
        (root / old_path(n)).rename(root / new_path(n))
    return texts


def assert_all_paired(ws: Workspace, texts: dict[int, bytes]) -> None:
    store = HistoryStore(ws.history_dir, etag_of, readonly=True)
    store.open()
    try:
        for n, data in texts.items():
            arrived = store.versions("en", new_path(n), 10)
            gone = store.versions("en", old_path(n), 10)
            assert [v.op for v in arrived] == ["baseline"], n
            assert (arrived[0].other_path, arrived[0].etag) == (old_path(n), etag_of(data)), n
            assert (gone[0].op, gone[0].other_path) == ("delete", new_path(n)), n
            assert gone[0].prev_etag == etag_of(data), n
    finally:
        store.close()


def test_the_catch_up_pairs_renames_whatever_time_it_takes(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "ws")
    texts = renamed_offline(ws)
    for _ in wired_stack(ws, slow_clock()):  # the start: its catch-up tells "offline"
        pass
    assert_all_paired(ws, texts)


def test_a_deletion_then_a_copy_back_passes_later_is_no_rename(tmp_path: Path) -> None:
    """The watcher's rule, across passes: a note deleted, then (past the window) a file
    of its bytes at another path, is a copy a person made, not a rename."""
    ws = Workspace(tmp_path / "ws")
    root = ws.vault_dir("en")
    for vault, index in wired_stack(ws, slow_clock()):
        vault.write("en", "a/kept.md", "# Kept\n\nkept text\n")
        data = (root / "a/kept.md").read_bytes()
        (root / "a/kept.md").unlink()
        index.reconcile(source="catch_up")
        (root / "b").mkdir()
        (root / "b/copy.md").write_bytes(data)
        index.reconcile(source="catch_up")
        store = vault.recorder.need()
        (copy,) = store.versions("en", "b/copy.md", 10)
        assert copy.other_path is None
        assert store.versions("en", "a/kept.md", 10)[0].other_path is None


def test_a_catch_up_killed_after_its_deletions_is_paired_at_the_next_start(
    tmp_path: Path,
) -> None:
    ws = Workspace(tmp_path / "ws")
    texts = renamed_offline(ws)
    child = run_child(CHILD, str(ws.root))
    assert child.returncode == 9, child.stderr
    store = HistoryStore(ws.history_dir, etag_of, readonly=True)
    store.open()
    try:
        deleted = [n for n in texts if store.versions("en", old_path(n), 1)[0].op == "delete"]
        assert deleted == list(texts)  # (one batch, killed before the new files')
        for n in deleted:
            assert not store.versions("en", new_path(n), 1)
            assert store.versions("en", old_path(n), 1)[0].other_path == new_path(n)
    finally:
        store.close()
    for _ in wired_stack(ws, slow_clock()):  # the next start: the recheck pairs the rest
        pass
    assert_all_paired(ws, texts)
