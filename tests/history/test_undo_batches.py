"""An undo of many files records their history in batches, one transaction each (it was
one per file: 10,001 for the undo of a 10,000-note folder move), and keeps what undo
guarantees: a failure midway, in a later batch, puts every file back and leaves no
row of a change that was not made."""

from __future__ import annotations

import errno
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.history import check_history_consistent, vault_with_history

from indexer.vault import renames, undo_batches
from indexer.vault.vault import Vault
from shared.errors import VaultError

NOTES = 120


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Vault]:
    with vault_with_history(tmp_path, 1 << 20) as made:
        yield made


def root(vault: Vault) -> Path:
    return vault.sandbox.workspace.vault_dir("en")


def contents(vault: Vault) -> dict[str, bytes]:
    return {
        str(p.relative_to(root(vault))): p.read_bytes()
        for p in root(vault).rglob("*")
        if p.is_file()
    }


def history_transactions(vault: Vault, call: Any) -> tuple[Any, int]:
    """What ``call`` returns, and the write transactions history opened meanwhile."""
    store = vault.recorder.store
    assert store is not None
    writer: sqlite3.Connection | None = store._writer
    assert writer is not None
    statements: list[str] = []
    writer.set_trace_callback(statements.append)
    try:
        return call(), sum(1 for s in statements if s.startswith("BEGIN"))
    finally:
        writer.set_trace_callback(None)


def moved_folder(vault: Vault, entry_id: str) -> dict[str, bytes]:
    """``NOTES`` notes in ``box/`` moved to ``crate/`` by the entry; the files before."""
    for n in range(NOTES):
        (root(vault) / "box").mkdir(parents=True, exist_ok=True)
        (root(vault) / f"box/n{n:03}.md").write_text(f"# N{n}\n\nwords {n}\n")
    before = contents(vault)
    vault.move("en", "box", "crate", reason=f"entry:{entry_id} tidy")
    return before


def test_an_undo_of_a_folder_move_is_one_history_transaction_and_a_settle(vault: Vault) -> None:
    before = moved_folder(vault, "m1")
    done, transactions = history_transactions(vault, lambda: vault.undo("en", "m1"))
    assert transactions <= 2, transactions  # (the rows, then their marks; was 121)
    assert len(done["files"]) == 2 * NOTES and all("version" in f for f in done["files"])
    assert contents(vault) == before
    assert check_history_consistent(vault.sandbox.workspace.root) > 0
    rows = vault.history("en", "crate/n007.md", 5)["versions"]
    assert [(r["op"], r["reason"]) for r in rows[:2]] == [
        ("delete", "undo entry:m1"),
        ("move", "entry:m1 tidy"),
    ]


def test_an_undo_of_appends_is_one_history_transaction_and_a_settle(vault: Vault) -> None:
    paths = [f"bulk/n{n:03}.md" for n in range(NOTES)]
    for path in paths:
        vault.write("en", path, f"# {path}\n", reason="seed")
    before = contents(vault)
    for path in paths:
        vault.append("en", path, "- one more line\n", reason="entry:a1 bulk")
    done, transactions = history_transactions(vault, lambda: vault.undo("en", "a1"))
    assert transactions <= 2, transactions  # (was 121)
    assert all("version" in f for f in done["files"])
    assert contents(vault) == before


def test_batches_of_a_long_undo_are_a_transaction_each(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(undo_batches, "BATCH_FILES", 40)  # 20 notes renamed back a batch
    before = moved_folder(vault, "m2")
    _, transactions = history_transactions(vault, lambda: vault.undo("en", "m2"))
    assert transactions <= NOTES // 20 + 1, transactions
    assert contents(vault) == before
    assert check_history_consistent(vault.sandbox.workspace.root) > 0


def test_a_failure_in_a_later_batch_puts_every_file_back_and_keeps_no_row_not_made(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rows of a batch are begun before its files change: those of the files never
    renamed back are dropped, those renamed back are kept, then put back."""
    monkeypatch.setattr(undo_batches, "BATCH_FILES", 40)
    moved_folder(vault, "m3")
    moved = contents(vault)
    original, calls = renames.move_noreplace, []

    def failing(*args: Any) -> bool:
        calls.append(args)
        if len(calls) == 50:  # (the third batch's tenth)
            raise OSError(errno.EIO, "Input/output error")
        return original(*args)

    monkeypatch.setattr(renames, "move_noreplace", failing)
    with pytest.raises(VaultError, match="input/output error"):
        vault.undo("en", "m3")
    monkeypatch.setattr(renames, "move_noreplace", original)
    assert contents(vault) == moved
    store = vault.recorder.store
    assert store is not None
    vault.recorder.settle()
    assert check_history_consistent(vault.sandbox.workspace.root) > 0
    last = vault.history("en", "box/n000.md", 5)["versions"]  # (never reached: no row)
    assert [r["reason"] for r in last[:1]] == ["entry:m3 tidy"]
    undone = vault.history("en", "box/n119.md", 5)["versions"]  # (renamed back, then put back)
    assert [r["reason"] for r in undone[:3]] == [
        "undo entry:m3 failed; put back",
        "undo entry:m3",
        "entry:m3 tidy",
    ]
    done = vault.undo("en", "m3")
    assert len(done["files"]) == 2 * NOTES
    assert not (root(vault) / "crate").exists()


def test_a_batch_holds_a_bounded_size_of_texts_written_back(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An undo of appends to 120 notes of 2 KB each, in batches of 10 KB: one history
    transaction every five notes (1,000 notes at the size limit were 4 GiB at once)."""
    monkeypatch.setattr(undo_batches, "BATCH_BYTES", 10_000)
    body = "x" * 2000
    for n in range(NOTES):
        vault.write("en", f"a/n{n:03}.md", f"# N{n}\n\n{body}\n")
    before = contents(vault)
    for n in range(NOTES):
        vault.append("en", f"a/n{n:03}.md", "more\n", reason="entry:big")
    _, transactions = history_transactions(vault, lambda: vault.undo("en", "big"))
    assert NOTES // 5 <= transactions <= NOTES // 4 + 1, transactions
    assert contents(vault) == before
