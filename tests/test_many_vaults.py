"""A workspace of many vaults: each vault's first call checks that its folder is no
other vault's (``Workspace.shared_vaults``), which took a realpath of every vault each
time: a first start over 300 vaults spent 10 of its 12 s there."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from indexer.vault.sandbox import Sandbox
from shared.workspace import Workspace

VAULTS = 60


def many_vaults(root: Path, count: int) -> Workspace:
    for i in range(count):
        (root / "memory" / "languages" / f"en-v{i:04d}" / "vault").mkdir(parents=True)
    return Workspace(root)


def test_each_vaults_first_call_does_not_resolve_every_vault(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: 60 vaults' first calls made 3,720 realpaths (60 for each); now about 2 a vault."""
    workspace = many_vaults(tmp_path, VAULTS)
    calls = 0
    realpath = os.path.realpath

    def counted(path: object, **kwargs: object) -> str:
        nonlocal calls
        calls += 1
        return realpath(path, **kwargs)  # type: ignore[arg-type, call-overload]

    monkeypatch.setattr(os.path, "realpath", counted)
    sandbox = Sandbox(workspace)
    for lang in workspace.langs():
        assert sandbox.vault_root(lang) is not None
    assert calls <= 3 * VAULTS


def test_a_vault_linked_to_another_later_is_seen_at_once(tmp_path: Path) -> None:
    """The answer is kept while the same folders are there: a vault added, linked to
    another's folder, or linked elsewhere again, changes it at the next call."""
    workspace = many_vaults(tmp_path, 3)
    langs = workspace.languages_dir
    assert workspace.shared_vaults() == {}
    (langs / "de").mkdir()
    (langs / "de" / "vault").symlink_to(langs / "en-v0001" / "vault" / "inner")
    assert workspace.shared_vaults() == {}  # (a link to nothing yet: no vault)
    (langs / "en-v0001" / "vault" / "inner").mkdir()
    assert workspace.shared_vaults() == {"en-v0001": "de"}
    assert "en-v0001" not in workspace.langs()
    (langs / "de" / "vault").unlink()
    (tmp_path / "own").mkdir()
    (langs / "de" / "vault").symlink_to(tmp_path / "own")
    assert workspace.shared_vaults() == {}
    assert workspace.langs() == ["de", "en-v0000", "en-v0001", "en-v0002"]
