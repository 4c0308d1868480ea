"""What a tool call's path check costs on disk once its vault is known: a ``stat`` of
the vault's folder, and of its real path only when a link is on the way (the second
``stat`` was of the same path). A vault folder made a link to another folder since is
still seen. Counted in ``os.stat`` calls, never timed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from indexer.vault.sandbox import Sandbox
from shared.workspace import Workspace


def stats_of(monkeypatch: pytest.MonkeyPatch, call) -> int:  # type: ignore[no-untyped-def]
    """How many ``os.stat`` calls ``call`` made (each goes through)."""
    paths: list[object] = []
    real = os.stat

    def stat(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        paths.append(path)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", stat)
    try:
        call()
    finally:
        monkeypatch.undo()
    return len(paths)


def test_a_vault_with_no_link_is_looked_at_once_a_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = Workspace(tmp_path.resolve() / "ws")
    ws.vault_dir("en").mkdir(parents=True)
    sandbox = Sandbox(ws)
    sandbox.resolve_file("en", "a.md")
    assert stats_of(monkeypatch, lambda: sandbox.resolve_file("en", "a.md")) == 1  # (was 2)


def test_a_linked_vault_is_looked_at_through_the_link_and_at_its_real_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = Workspace(tmp_path.resolve() / "ws")
    elsewhere, other = tmp_path / "elsewhere", tmp_path / "other"
    elsewhere.mkdir()
    other.mkdir()
    ws.vault_dir("en").parent.mkdir(parents=True)
    ws.vault_dir("en").symlink_to(elsewhere)
    sandbox = Sandbox(ws)
    assert sandbox.resolve_file("en", "a.md").vault_root == elsewhere.resolve()
    assert stats_of(monkeypatch, lambda: sandbox.resolve_file("en", "a.md")) == 2
    ws.vault_dir("en").unlink()
    ws.vault_dir("en").symlink_to(other)  # the operator points the vault elsewhere
    assert sandbox.resolve_file("en", "a.md").vault_root == other.resolve()
