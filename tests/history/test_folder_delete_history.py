"""A folder's ``delete`` takes its ``.overview.md`` with it: recorded in history, so a
summary a person wrote there can be read and restored (it went unrecorded)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.history import vault_with_history
from helpers.snapshots import snapshot

from indexer.vault.vault import Vault
from shared.errors import VaultError

HAND_WRITTEN = "# 旅行のメモ\n\n私が書いた要約。 Mine, not the job's.\n".encode()


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Vault]:
    with vault_with_history(tmp_path, 1 << 20) as opened:
        yield opened


def summary_folder(vault: Vault) -> Path:
    """The folder ``旅行`` of the ``ja`` vault, holding a summary a person wrote."""
    folder = vault.sandbox.workspace.vault_dir("ja") / "旅行"
    folder.mkdir(parents=True)
    (folder / ".overview.md").write_bytes(HAND_WRITTEN)
    return folder


def test_a_folder_deleted_with_its_hand_written_summary_keeps_it_in_history(
    vault: Vault,
) -> None:
    folder = summary_folder(vault)
    assert vault.delete("ja", "旅行/", "片付け", actor="tool") == {"path": "旅行", "deleted": True}
    assert not folder.exists()
    rows = vault.history("ja", "旅行/.overview.md", 10)["versions"]
    assert (rows[0]["op"], rows[0]["actor"], rows[0]["reason"]) == ("delete", "tool", "片付け")
    before = vault.read("ja", "旅行/.overview.md", version=rows[0]["version"] - 1)
    assert before["content"].encode() == HAND_WRITTEN
    vault.restore("ja", "旅行/.overview.md", rows[0]["version"] - 1)
    assert (folder / ".overview.md").read_bytes() == HAND_WRITTEN


def test_a_folder_that_is_not_empty_records_nothing_and_keeps_its_summary(
    vault: Vault,
) -> None:
    folder = summary_folder(vault)
    (folder / "memo.txt").write_text("残す\n")
    files = snapshot(vault.sandbox.workspace.root / "memory")
    assert vault.recorder.store is not None
    count = vault.recorder.store.stats()["versions"]
    with pytest.raises(VaultError) as refused:
        vault.delete("ja", "旅行/", None, actor="tool")
    assert refused.value.code == "invalid_argument"
    assert snapshot(vault.sandbox.workspace.root / "memory") == files
    assert vault.recorder.store.stats()["versions"] == count
