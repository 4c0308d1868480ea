"""Undo of an entry whose note another program renamed since (a file manager, an
editor's case-only rename): in process, on real files."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from helpers.snapshots import snapshot

from indexer.vault.fsops import etag_of
from indexer.vault.history.store import HistoryStore
from indexer.vault.sandbox import Sandbox
from indexer.vault.vault import Vault
from shared.errors import VaultError
from shared.workspace import Workspace


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 11, 29, 20, 0, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Vault]:
    ws = Workspace(tmp_path / "ws")
    store = HistoryStore(ws.history_dir, etag_of)
    store.open()
    yield Vault(Sandbox(ws), max_file_bytes=1 << 20, clock=Clock(), history=store)
    store.close()


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
