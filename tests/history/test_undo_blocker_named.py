"""Undo's refusal names the change that blocks it, not merely the newest one: in
process, on real files (a day file of events, a person's edit between two entries)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.history import SecondsClock, vault_with_history
from helpers.snapshots import snapshot

from indexer.vault.vault import Vault
from shared.errors import VaultError

DAY = "events/2026/11/29.md"


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Vault]:
    with vault_with_history(tmp_path, 1 << 20, SecondsClock()) as opened:
        yield opened


def refusal(vault: Vault, entry_id: str) -> str:
    root = vault.sandbox.workspace.vault_dir("en")
    before = snapshot(root)
    with pytest.raises(VaultError) as info:
        vault.undo("en", entry_id)
    assert info.value.code == "conflict"
    assert snapshot(root) == before  # (refused: nothing changed)
    return info.value.message


def versions(vault: Vault) -> dict[str, int]:
    """Version numbers of the day file by who made them: entry:eN, external, undo..."""
    rows = vault.history("en", DAY, 20)["versions"]
    return {(row["reason"] or row["actor"]).split(" ")[0]: row["version"] for row in rows}


def test_after_a_later_entry_was_undone_the_persons_edit_is_named(vault: Vault) -> None:
    """E1 appended, the day file edited by a person, E2 appended, E2 undone: E1's undo
    is refused (the person's edit is still there), and it named the undo of E2 ("changed
    since by tool ..., 'undo entry:e2'"), which only took E2 back."""
    vault.append("en", DAY, "## Event\n\nOne.\n", reason="entry:e1 One")
    path = vault.sandbox.workspace.vault_dir("en") / DAY
    path.write_text(path.read_text(encoding="utf-8") + "\nA person's line.\n", encoding="utf-8")
    vault.observe_external("en", DAY)
    vault.append("en", DAY, "## Event\n\nTwo.\n", reason="entry:e2 Two")
    vault.undo("en", "e2")
    assert path.read_text(encoding="utf-8").endswith("A person's line.\n")
    seen = versions(vault)
    message = refusal(vault, "e1")
    assert f"changed since by external in version {seen['external']}" in message, message
    assert f"version {seen['undo']}" in message  # (and the newest change, said as such)


def test_a_persons_edit_before_a_later_entry_is_named_first(vault: Vault) -> None:
    """No undo between: the person's edit (the first change after E1's) is what blocks
    E1's undo; the later entry's version is named as the newest change too."""
    vault.append("en", DAY, "## Event\n\nOne.\n", reason="entry:e1 One")
    path = vault.sandbox.workspace.vault_dir("en") / DAY
    path.write_text(path.read_text(encoding="utf-8") + "\nA person's line.\n", encoding="utf-8")
    vault.observe_external("en", DAY)
    vault.append("en", DAY, "## Event\n\nTwo.\n", reason="entry:e2 Two")
    seen = versions(vault)
    message = refusal(vault, "e1")
    assert f"changed since by external in version {seen['external']}" in message, message
    assert f"version {seen['entry:e2']}" in message


def test_a_later_entry_undone_again_is_no_obstacle(vault: Vault) -> None:
    """E2 written and undone after E1, nothing else: the file holds E1's text again, so
    E1's undo goes through (as before)."""
    vault.append("en", DAY, "## Event\n\nOne.\n", reason="entry:e1 One")
    vault.append("en", DAY, "## Event\n\nTwo.\n", reason="entry:e2 Two")
    vault.undo("en", "e2")
    assert [f["path"] for f in vault.undo("en", "e1")["files"]] == [DAY]
    assert not (vault.sandbox.workspace.vault_dir("en") / DAY).exists()
