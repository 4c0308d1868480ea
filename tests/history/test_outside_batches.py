"""Outside changes told together are recorded in history a batch at a time, one
transaction each (it was one per file: a folder of thousands of notes moved in or copied
in was thousands of transactions, half of the watcher's time), keeping what history
guarantees one by one: a file a tool holds is recorded after the tool, never waited for
with other files' locks held; a batch history refuses records nothing, pairs nothing,
and is recorded once it can (``Unrecorded``)."""

from __future__ import annotations

import functools
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.indexer_process import wait_for
from helpers.vault_stack import served_vault

from indexer.vault import fsops, outside
from indexer.vault.history.rows import Seen
from indexer.vault.history.store import HistoryStore
from indexer.vault.sandbox import Sandbox
from indexer.vault.unrecorded import Unrecorded
from indexer.vault.vault import Vault
from shared.errors import StorageError
from shared.workspace import Workspace

NOTES = 600  # more than two batches (``outside.BATCH_FILES``)


@pytest.fixture
def vault(ws: Workspace) -> Iterator[Vault]:
    ws.vault_dir("en").mkdir(parents=True, exist_ok=True)
    store = HistoryStore(ws.history_dir, fsops.etag_of)
    store.open()
    yield Vault(Sandbox(ws), max_file_bytes=1 << 20, history=store)
    store.close()


def root(vault: Vault) -> Path:
    return vault.sandbox.workspace.vault_dir("en")


def writer(vault: Vault) -> sqlite3.Connection:
    store = vault.recorder.store
    assert store is not None and store._writer is not None
    return store._writer


def transactions(vault: Vault, call: Callable[[], Any]) -> tuple[Any, int]:
    """What ``call`` returns, and the write transactions history opened meanwhile."""
    statements: list[str] = []
    writer(vault).set_trace_callback(statements.append)
    try:
        return call(), sum(1 for s in statements if s.startswith("BEGIN"))
    finally:
        writer(vault).set_trace_callback(None)


def versions(vault: Vault) -> int:
    """How many versions history holds."""
    store = vault.recorder.store
    assert store is not None
    return store.stats()["versions"]


def newest(vault: Vault, path: str) -> dict | None:
    versions = vault.history("en", path)["versions"]
    return versions[0] if versions else None


def test_a_folder_moved_in_is_recorded_a_transaction_a_batch(
    ws: Workspace, vault: Vault, tmp_path: Path
) -> None:
    """``mv`` of a folder of 600 notes into a served vault, seen by the real watcher:
    every note has its version (actor external, undoable by restore), in at most a
    transaction per batch of files (600 before)."""
    box = tmp_path / "outside" / "box"
    box.mkdir(parents=True)
    for n in range(NOTES):
        (box / f"n{n:03}.md").write_text(f"# N{n}\n\nwords of note {n}\n")

    def moved_in() -> None:
        box.rename(root(vault) / "box")
        wait_for(lambda: versions(vault) == NOTES, 60, what="history of every note")

    with served_vault(ws, vault):
        _, count = transactions(vault, moved_in)
    assert count <= NOTES // outside.BATCH_FILES + 2, count
    seen = newest(vault, "box/n007.md")
    assert seen is not None and (seen["actor"], seen["version"]) == ("external", 1)
    (root(vault) / "box/n007.md").write_text("# N7\n\nedited by hand\n")
    vault.restore("en", "box/n007.md", 1)
    assert (root(vault) / "box/n007.md").read_text() == "# N7\n\nwords of note 7\n"


def test_a_folder_renamed_in_the_vault_is_paired_a_transaction_a_batch(
    ws: Workspace, vault: Vault, tmp_path: Path
) -> None:
    """A folder of 600 notes history knows, renamed by another program in a served
    vault: each old path's deletion names the new one and the other way round, in a
    few transactions (1,200 before: one a deletion, one a new file)."""
    box = tmp_path / "outside" / "box"
    box.mkdir(parents=True)
    for n in range(NOTES):
        (box / f"n{n:03}.md").write_text(f"# N{n}\n\nwords of note {n}\n")
    with served_vault(ws, vault):
        box.rename(root(vault) / "box")
        wait_for(lambda: versions(vault) == NOTES, 60, what="history of every note")

        def renamed() -> None:
            (root(vault) / "box").rename(root(vault) / "crate")
            wait_for(lambda: versions(vault) == 3 * NOTES, 60, what="the renames")

        _, count = transactions(vault, renamed)
    assert count <= 2 * (NOTES // outside.BATCH_FILES + 2), count
    for n in (0, 255, 256, NOTES - 1):
        gone, made = newest(vault, f"box/n{n:03}.md"), newest(vault, f"crate/n{n:03}.md")
        assert gone is not None and made is not None
        assert (gone["op"], gone["moved_to"]) == ("delete", f"crate/n{n:03}.md"), gone
        assert made["moved_from"] == f"box/n{n:03}.md", made


def test_a_checkout_of_notes_history_never_saw_is_recorded_a_transaction_a_batch(
    ws: Workspace, vault: Vault
) -> None:
    """Another program (git) rewrites 600 notes history never saw: each gets the text
    the index held before (baseline) and the new one (edit), in a few transactions
    (1,200 before: one a text, one a change)."""
    (root(vault) / "box").mkdir()
    for n in range(NOTES):
        (root(vault) / f"box/n{n:03}.md").write_text(f"# N{n}\n\nwords of note {n}\n")

    def checked_out() -> None:
        for n in range(NOTES):
            temp = root(vault) / f"box/.n{n:03}.md.tmp"
            temp.write_text(f"# N{n}\n\nanother branch {n}\n")
            temp.replace(root(vault) / f"box/n{n:03}.md")
        wait_for(lambda: versions(vault) == 2 * NOTES, 60, what="history of every note")

    with served_vault(ws, vault):
        _, count = transactions(vault, checked_out)
    assert count <= 2 * (NOTES // outside.BATCH_FILES + 2), count
    assert [v["op"] for v in vault.history("en", "box/n042.md")["versions"]] == ["edit", "baseline"]
    assert vault.read("en", "box/n042.md", version=1)["content"] == "# N42\n\nwords of note 42\n"


def test_a_file_a_tool_holds_is_recorded_after_it_and_holds_up_no_other(
    vault: Vault,
) -> None:
    """A tool holds one file's lock while a batch is recorded: the batch records the
    others without waiting for it (holding their locks), then that file once the tool
    lets go."""
    for name in ("a", "b", "c"):
        (root(vault) / f"{name}.md").write_text(f"# {name}\n")
    store = vault.recorder.store
    assert store is not None
    done: list[Any] = []
    with vault.file_lock("en", "b.md"):
        worker = threading.Thread(
            target=lambda: done.append(
                outside.observe_many(vault, [("en", f"{n}.md", True) for n in "abc"])
            )
        )
        worker.start()
        wait_for(lambda: newest(vault, "c.md") is not None, 10, what="the batch")
        assert newest(vault, "a.md") is not None
        assert newest(vault, "b.md") is None and not done  # waits for the tool
    worker.join(10)
    assert done == [([], None)]
    assert newest(vault, "b.md") is not None


def test_two_spellings_of_one_name_in_a_batch_are_each_recorded(vault: Vault) -> None:
    """``Note.md`` and ``note.md`` (two files here; one lock, case-folded): the second
    waits for the batch's end instead of for the batch itself (no deadlock)."""
    (root(vault) / "Note.md").write_text("# upper\n")
    (root(vault) / "note.md").write_text("# lower\n")
    left = outside.observe_many(vault, [("en", "Note.md", True), ("en", "note.md", True)])
    assert left == ([], None)
    assert newest(vault, "Note.md") is not None and newest(vault, "note.md") is not None


def refuse_deletions(vault: Vault) -> None:
    """History's SQLite refuses to insert a deletion (as a full disk refuses a write)."""
    writer(vault).execute(
        "CREATE TEMP TRIGGER refuse BEFORE INSERT ON versions WHEN NEW.op = 'delete'"
        " BEGIN SELECT RAISE(ABORT, 'refused'); END"
    )


def test_a_batch_history_refuses_records_nothing_and_pairs_nothing(vault: Vault) -> None:
    """A batch refused after a deletion was inserted: nothing of it stays, and that
    deletion, rolled back, is no partner of a later file of its bytes (that file said
    ``moved_from`` a path whose history had no deletion)."""
    text = b"# Kept\n\nwords of the kept note\n"
    (root(vault) / "old.md").write_bytes(text)
    outside.observe_many(vault, [("en", "old.md", True)])
    (root(vault) / "old.md").unlink()
    (root(vault) / "z.md").write_text("# Z\n")
    writer(vault).execute(
        "CREATE TEMP TRIGGER refuse BEFORE INSERT ON versions WHEN NEW.op != 'delete'"
        " BEGIN SELECT RAISE(ABORT, 'refused'); END"
    )
    gone, made = Seen("en", "old.md", None, False), Seen("en", "z.md", b"# Z\n", True)
    with pytest.raises(StorageError):  # (``outside`` then records each file alone)
        vault.recorder.observe_many([gone, made])
    assert newest(vault, "old.md")["op"] == "baseline"  # type: ignore[index]
    assert newest(vault, "z.md") is None
    writer(vault).execute("DROP TRIGGER refuse")
    (root(vault) / "copy.md").write_bytes(text)
    outside.observe_many(vault, [("en", "copy.md", True)])
    made = newest(vault, "copy.md")
    assert made is not None and "moved_from" not in made, made


def test_changes_history_refused_are_recorded_once_it_takes_them(vault: Vault) -> None:
    """The full-disk path, batched: the changes of a refused batch wait, and all are
    recorded at the next try (here the close's), in one transaction."""
    for n in range(5):
        (root(vault) / f"n{n}.md").write_text(f"# N{n}\n")
    outside.observe_many(vault, [("en", f"n{n}.md", True) for n in range(5)])
    for n in range(5):
        (root(vault) / f"n{n}.md").unlink()
    waiting = Unrecorded(functools.partial(outside.observe_many, vault))
    refuse_deletions(vault)
    waiting.record([("en", f"n{n}.md", False) for n in range(5)])
    assert waiting.waiting() == 5
    assert all(newest(vault, f"n{n}.md")["op"] == "baseline" for n in range(5))  # type: ignore[index]
    writer(vault).execute("DROP TRIGGER refuse")
    left, count = transactions(vault, waiting.close)
    assert (left, count) == (0, 1)
    assert all(newest(vault, f"n{n}.md")["op"] == "delete" for n in range(5))  # type: ignore[index]
