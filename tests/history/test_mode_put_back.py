"""A failed undo's put-back keeps the mode of the file it takes away again: the undo
brought a private note back (0600), a later file failed, and the put-back deleted the
note with no mode on its row, so a restore of the text the undo had brought back made
it 0644 less the umask."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.history import SecondsClock, vault_with_history

from indexer.vault.sandbox import Place
from indexer.vault.vault import Vault
from shared.errors import StorageError


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Vault]:
    with vault_with_history(tmp_path, 1 << 20, SecondsClock()) as opened:
        yield opened


def test_a_note_a_failed_undo_takes_away_again_keeps_its_mode(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = vault.sandbox.workspace.vault_dir("en")
    vault.write("en", "p1/a.md", "# A\n\nbefore\n")
    vault.write("en", "p2/secret.md", "# S\n\nmine\n")
    os.chmod(root / "p2/secret.md", 0o600)
    vault.write("en", "p1/a.md", "# A\n\nby the entry\n", reason="entry:E1 merge")
    vault.delete("en", "p2/secret.md", reason="entry:E1 merge")
    commit = Place.commit

    def disk_full_for_p1(place: Place, data: bytes, **kw: Any) -> None:
        if place.target.rel == "p1/a.md":  # (after secret.md came back: undone last first)
            raise OSError(28, "No space left on device")
        commit(place, data, **kw)

    with monkeypatch.context() as patched:
        patched.setattr(Place, "commit", disk_full_for_p1)
        with pytest.raises(StorageError, match=r": p1/a\.md: no space is left"):
            vault.undo("en", "E1")
    assert not (root / "p2/secret.md").exists()  # (put back: taken away again)
    versions = vault.history("en", "p2/secret.md", 10)["versions"]
    assert [v["reason"] for v in versions[:2]] == [
        "undo entry:E1 failed; put back",
        "undo entry:E1",
    ]
    vault.restore("en", "p2/secret.md", versions[1]["version"], "")
    assert stat.S_IMODE((root / "p2/secret.md").stat().st_mode) == 0o600
