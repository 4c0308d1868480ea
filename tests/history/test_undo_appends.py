"""Undo of an entry that appended to many notes: each note written back (a temp file,
its fsync), each folder synced once before the undo answers, not once per note."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.history import vault_with_history, with_fsyncs

from indexer.vault.vault import Vault


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Vault]:
    with vault_with_history(tmp_path, 1 << 20) as made:
        yield made


def test_undo_of_appends_to_many_notes_syncs_each_folder_once(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """4 clients appended a line to 10,000 notes; the undo took ~9 ms a note, two fsyncs
    each (the note, then its folder): now one per note and one per folder."""
    notes, folders = 60, 3
    paths = [f"bulk/g{n % folders}/n{n:03}.md" for n in range(notes)]
    for path in paths:
        vault.write("en", path, f"# {path}\n", reason="seed")
    before = {p: vault.read("en", p)["content"] for p in paths}
    for path in paths:
        vault.append("en", path, "- one more line\n", reason="entry:BULK2 bulk")
    done, syncs = with_fsyncs(monkeypatch, lambda: vault.undo("en", "BULK2"))
    assert len(done["files"]) == notes and all("version" in f for f in done["files"])
    assert {p: vault.read("en", p)["content"] for p in paths} == before
    assert len(syncs) <= notes + folders + 2, len(syncs)  # was 2 per note
    rows = vault.history("en", paths[7], 5)["versions"]
    assert [r["reason"] for r in rows[:2]] == ["undo entry:BULK2", "entry:BULK2 bulk"]
