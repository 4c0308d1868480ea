"""Undo of an entry whose note another program renamed since (a file manager, an
editor's case-only rename): in process, on real files."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.history import SecondsClock, vault_with_history
from helpers.snapshots import snapshot

from indexer.vault.vault import Vault
from shared.errors import VaultError


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Vault]:
    with vault_with_history(tmp_path, 1 << 20, SecondsClock()) as opened:
        yield opened


@pytest.mark.parametrize("new", ["items/Café.md", "archive/café.md"])
def test_undo_after_a_rename_by_another_program_says_where_the_note_went(
    vault: Vault, new: str
) -> None:
    """It said "deleted since by external": a person who renamed the note (here only
    its case) read that the note was lost, while ``history`` shows the deletion as a
    move (``moved to``). The refusal now names where the note is, as for a tool's move."""
    vault.write("en", "items/café.md", "# Café\n\ncrème\n", if_match="", reason="entry:e1 Café")
    root = vault.sandbox.workspace.vault_dir("en")
    (root / new).parent.mkdir(parents=True, exist_ok=True)
    (root / "items/café.md").rename(root / new)
    vault.observe_external("en", "items/café.md")  # the watcher tells history: both names
    vault.observe_external("en", new)
    gone = vault.history("en", "items/café.md", 1)["versions"][0]
    assert (gone["op"], gone["moved_to"]) == ("delete", new)
    before = snapshot(root)
    with pytest.raises(VaultError) as info:
        vault.undo("en", "e1")
    assert info.value.code == "conflict"
    assert (
        f"items/café.md (moved since to {new} by external in version {gone['version']}:"
        " move it back first)"
    ) in info.value.message, info.value.message
    assert snapshot(root) == before
    (root / new).rename(root / "items/café.md")  # back: the undo goes through
    vault.observe_external("en", new)
    vault.observe_external("en", "items/café.md")
    assert [f["path"] for f in vault.undo("en", "e1")["files"]] == ["items/café.md"]
    assert not (root / "items/café.md").exists()


def test_undo_after_moves_one_after_another_names_where_the_note_is_now(vault: Vault) -> None:
    """The refusal named the first move's destination only: after the tool moved the note
    on (a rename, then its folder's move) or another program renamed it there, "moved
    since to items/b.md: move it back first" named a path with no file (the move back
    it asked for answered not_found). It now follows the moves to where the note is, or
    says it was deleted there."""
    vault.write("en", "items/a.md", "# A\n\nalpha\n", if_match="", reason="entry:e2 A")
    vault.move("en", "items/a.md", "items/b.md")
    vault.move("en", "items", "archive")
    root = vault.sandbox.workspace.vault_dir("en")
    (root / "archive").rename(root / "old")  # another program, as the watcher tells it
    vault.observe_external("en", "archive/b.md")
    vault.observe_external("en", "old/b.md")
    before = snapshot(root)
    with pytest.raises(VaultError) as info:
        vault.undo("en", "e2")
    assert info.value.code == "conflict"
    assert (
        "items/a.md (moved since to items/b.md by tool in version 2, then on to old/b.md:"
        " move it back first)"
    ) in info.value.message, info.value.message
    assert snapshot(root) == before
    vault.move("en", "old/b.md", "items/a.md")  # the move back it asks for: undone then
    assert [f["path"] for f in vault.undo("en", "e2")["files"]] == ["items/a.md"]
    assert not (root / "items/a.md").exists()


def test_undo_after_a_move_then_a_delete_says_the_note_was_deleted_where_it_went(
    vault: Vault,
) -> None:
    vault.write("en", "items/a.md", "# A\n\nalpha\n", if_match="", reason="entry:e3 A")
    vault.move("en", "items/a.md", "items/b.md")
    vault.delete("en", "items/b.md", reason="tidy")
    with pytest.raises(VaultError) as info:
        vault.undo("en", "e3")
    assert info.value.code == "conflict"
    assert "items/a.md (moved since to items/b.md by tool" in info.value.message
    assert "then deleted there by tool" in info.value.message, info.value.message
    assert "move it back first" not in info.value.message


def test_undo_follows_a_moved_note_past_a_new_note_made_where_it_was(vault: Vault) -> None:
    """A note made later at a path the entry's note passed through is another note: the
    refusal names where the entry's note went on to, not the newcomer's path."""
    vault.write("en", "items/a.md", "# A\n\nalpha\n", if_match="", reason="entry:e4 A")
    vault.move("en", "items/a.md", "items/b.md")
    vault.move("en", "items/b.md", "items/c.md")
    vault.write("en", "items/b.md", "# Another\n", if_match="")
    with pytest.raises(VaultError) as info:
        vault.undo("en", "e4")
    assert (
        "items/a.md (moved since to items/b.md by tool in version 2, then on to items/c.md:"
        " move it back first)"
    ) in info.value.message, info.value.message
