"""Undo of an entry some of whose versions retention let go: in process, on real files."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from helpers.history import vault_with_history
from helpers.snapshots import snapshot

from indexer.vault.history.store import HistoryStore
from indexer.vault.vault import Vault
from shared.errors import VaultError

T0 = datetime(2026, 1, 5, tzinfo=UTC)


class DaysClock:
    """A clock a day later at each reading: every version 100+ days old by its end."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        self.now += timedelta(days=1)
        return self.now


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Vault]:
    with vault_with_history(tmp_path, 1 << 20, DaysClock()) as opened:
        yield opened


def prune(vault: Vault) -> None:
    """Retention's passes until they let nothing more go (keep 20, no days)."""
    store: HistoryStore = vault.recorder.need()
    later = T0 + timedelta(days=400)
    while store.prune(later, days=0, keep=20, step=400 * 86_400_000).versions:
        pass


def edit_often(vault: Vault, path: str, times: int) -> None:
    for i in range(times):  # (each its own reason: a run of one reason is kept whole)
        vault.append("en", path, f"line {i}\n", reason=f"someone {i}")


def test_an_entry_whose_pruned_change_was_edited_since_is_refused_whole(vault: Vault) -> None:
    """Before the prune, undo refused (a.md changed since); after it, the entry's version
    of a.md was gone, so undo took back b.md alone and answered as if the entry were
    undone: the all-or-nothing rule lost to retention. It now refuses, saying why."""
    vault.write("en", "a.md", "# A\n\nalpha\n", if_match="", reason="entry:e1 A")
    vault.write("en", "b.md", "# B\n\nbeta\n", if_match="", reason="entry:e1 B")
    edit_often(vault, "a.md", 25)
    prune(vault)
    assert vault.history("en", "a.md", 100)["versions"][-1]["version"] > 1  # (pruned)
    root = vault.sandbox.workspace.vault_dir("en")
    before = snapshot(root)
    with pytest.raises(VaultError) as info:
        vault.undo("en", "e1")
    assert info.value.code == "conflict", info.value.message
    assert "history no longer holds" in info.value.message, info.value.message
    assert snapshot(root) == before


def test_an_entry_pruned_everywhere_says_so_rather_than_not_found(vault: Vault) -> None:
    vault.write("en", "a.md", "# A\n\nalpha\n", if_match="", reason="entry:e2 A")
    edit_often(vault, "a.md", 25)
    prune(vault)
    with pytest.raises(VaultError) as info:
        vault.undo("en", "e2")
    assert info.value.code == "conflict", info.value.message
    assert "history no longer holds" in info.value.message, info.value.message


def test_a_change_the_writers_rollback_took_back_is_no_obstacle_once_pruned(
    vault: Vault,
) -> None:
    """A failed merge's writes, undone by the writer's rollback, then the fallback's
    write for the same entry elsewhere: the rolled-back note's versions pruned, the
    entry's fallback note is still undone (nothing of the entry is lost)."""
    vault.write("en", "a.md", "# A\n\nalpha\n", if_match="")
    vault.append("en", "a.md", "merged\n", reason="entry:e3 A")
    vault.undo("en", "e3")  # the rollback
    vault.write("en", "b.md", "# B\n\nfallback\n", if_match="", reason="entry:e3 A")
    edit_often(vault, "a.md", 25)
    prune(vault)
    root = vault.sandbox.workspace.vault_dir("en")
    assert [f["path"] for f in vault.undo("en", "e3")["files"]] == ["b.md"]
    assert not (root / "b.md").exists()
