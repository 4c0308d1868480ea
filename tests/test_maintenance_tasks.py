"""``maintenance_tasks``: a task's replace is written one way wherever it runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.history import vault_with_history

from indexer.jobs.maintenance_tasks import ACTOR, check_task, write_output
from shared.errors import InvalidArgumentError


def test_a_replace_is_the_tasks_file_recorded_as_the_maintenance_jobs(tmp_path: Path) -> None:
    with vault_with_history(tmp_path, 1 << 20) as vault:
        created = write_output(vault, "en", "project_review", "# Project\n", "")
        assert (created["path"], created["created"]) == ("PROJECT.md", True)
        write_output(vault, "en", "project_review", "# Project\n\n- v2\n", created["etag"])
        rows = vault.history("en", "PROJECT.md")["versions"]
    assert [(v["actor"], v["reason"]) for v in rows] == [(ACTOR, "maintenance:project_review")] * 2


@pytest.mark.parametrize("task", ["USER.md", "", None, "user_profile/../x"])
def test_only_a_task_names_a_file(task: object) -> None:
    """The server's route writes what the CLI names: a task, never a path."""
    with pytest.raises(InvalidArgumentError, match="task must be one of"):
        check_task(task)
