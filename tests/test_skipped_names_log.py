"""Names no tool can use are logged once each, within a bounded memory: once it is full,
one line says the rest go unlogged. A full memory started over, so a vault of more such
names than it holds logged every one again at each walk (the status's and, since the
folder view reads it, a walk every few clicks: thousands of lines each)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.indexer_process import QUIET_ENV

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


def test_status_and_search_do_not_repeat_them_at_each_run(tmp_path: Path) -> None:
    """Each ``indexer search`` and ``status`` run without a server warned of every such
    name on stderr again (the memory lasts a process): ten searches, ten times each.
    ``status`` names them in its report; ``search`` leaves them to it; ``reindex`` (a
    rebuild of everything) still warns of each."""
    vault = tmp_path / "ws" / "memory" / "languages" / "en" / "vault"
    vault.mkdir(parents=True)
    (vault / "plum.md").write_text("# plum\n")
    (vault / "ratio 1:2.md").write_text("# made by another program\n")
    (vault / "rtl\u202egpj.md").write_text("# made by another program\n")
    env = {**os.environ, **QUIET_ENV, "INDEXER_WORKSPACE": str(tmp_path / "ws")}

    def indexer(*args: str) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "indexer", *args]
        return subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env)

    for _ in range(2):
        searched = indexer("search", "--lang", "en", "plum")
        assert searched.returncode == 0 and "plum.md" in searched.stdout
        assert searched.stderr == ""
        status = indexer("status")
        assert status.returncode == 0 and status.stderr == ""
        assert "unreachable in en: 2 files" in status.stdout
        assert "'ratio 1:2.md'" in status.stdout
        assert "'rtl\\u202egpj.md'" in status.stdout  # (a repr showed \\u202e)
    rebuilt = indexer("reindex")
    warned = [line for line in rebuilt.stderr.splitlines() if line.startswith("skipped ")]
    assert len(warned) == 2, rebuilt.stderr
