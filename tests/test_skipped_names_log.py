"""Names no tool can use are logged once each, within a bounded memory: once it is full,
one line says the rest go unlogged. A full memory started over, so a vault of more such
names than it holds logged every one again at each walk (the status's and, since the
folder view reads it, a walk every few clicks: thousands of lines each)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from indexer.vault import names
from indexer.vault.unreachable import unreachable


def test_a_vault_of_more_refused_names_than_remembered_is_logged_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(names, "_warn_once", names._WarnOnce(limit=50))
    vault = tmp_path / "vault"
    vault.mkdir()
    for i in range(60):
        (vault / f"ratio {i}:2.md").write_text("# made by another program\n")
    with caplog.at_level(logging.WARNING, logger="indexer.vault"):
        assert unreachable(vault).count == 60
        first = [r.getMessage() for r in caplog.records]
        caplog.clear()
        assert unreachable(vault).count == 60  # (counted still: the status names them)
        again = [r.getMessage() for r in caplog.records]
    assert sum("skipped ratio" in line for line in first) == 50
    assert sum("the others are not" in line for line in first) == 1
    assert again == []


def test_the_memory_starts_over_after_its_quiet_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """(A server of weeks: a name made after the memory filled is logged in time.)"""
    monkeypatch.setattr(names, "_warn_once", names._WarnOnce(limit=5, quiet_seconds=0.0))
    vault = tmp_path / "vault"
    vault.mkdir()
    for i in range(6):
        (vault / f"ratio {i}:2.md").write_text("# made by another program\n")
    with caplog.at_level(logging.WARNING, logger="indexer.vault"):
        unreachable(vault)
        caplog.clear()
        unreachable(vault)  # (its quiet time is out: logged again, five of them)
        again = [r.getMessage() for r in caplog.records]
    assert sum("skipped ratio" in line for line in again) == 5
