"""A maintenance run whose state file the system refuses to write (a full disk; here its
folder made immutable, ``chattr +i``, refused even to root): the run's outcome stands,
the failure is one plain warning, and the state is saved by the next run that can."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.permissions import immutable, need_immutable

from indexer.index.service import NoteIndex
from indexer.jobs.maintenance import Maintenance, MaintenanceSettings
from indexer.jobs.maintenance_state import StateFile
from indexer.settings import default_prompts_dir
from indexer.vault.sandbox import Sandbox
from indexer.vault.vault import Vault
from shared.workspace import Workspace


@pytest.fixture
def maintenance(tmp_path: Path) -> Iterator[Maintenance]:
    ws = Workspace(tmp_path / "ws")
    vault = Vault(Sandbox(ws), max_file_bytes=256 * 1024)
    index = NoteIndex(ws)
    index.open()
    vault.listeners.append(index.note_changed)
    vault.write("en", "events/2026/11/29.md", "---\ntype: events\n---\n# Events\n")
    vault.append("en", "events/2026/11/29.md", "\n## Event\n\nThe user prefers short replies.\n")
    state = StateFile(tmp_path / "state" / "maintenance-state.json")
    yield Maintenance(
        MaintenanceSettings(enabled=frozenset({"user_profile"})),
        state=state,
        vault=vault,
        index=index,
        model=None,
        prompts_dir=default_prompts_dir(),
    )
    immutable(tmp_path / "state", False)
    index.close()


def test_a_state_that_cannot_be_saved_is_a_warning_not_a_failed_run(
    tmp_path: Path, maintenance: Maintenance, caplog: pytest.LogCaptureFixture
) -> None:
    """The run ended in "failed unexpectedly" with a traceback (``OSError`` of the state
    file's write, from the scheduler's loop); with a replace, its error record failed too."""
    folder = tmp_path / "state"
    folder.mkdir()
    (folder / "maintenance-state.json.lock").touch()  # (its lock files are there already)
    (folder / "maintenance-locks").mkdir()
    (folder / "maintenance-locks" / "en.user_profile.lock").touch()
    need_immutable(folder)
    with caplog.at_level(logging.WARNING, logger="indexer.jobs"):
        outcome = asyncio.run(maintenance.run_task("en", "user_profile", force=True))
    assert outcome.action == "none", outcome
    said = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(said) == 1 and said[0].exc_info is None, said
    assert "could not be saved" in said[0].getMessage(), said[0].getMessage()
    assert not (folder / "maintenance-state.json").exists()
    immutable(folder, False)
    outcome = asyncio.run(maintenance.run_task("en", "user_profile"))
    assert outcome.action == "none"
    assert maintenance.state.get("en", "user_profile").last_action == "none"
