"""The maintenance tasks, their settings, and the one way a task's replace is written
(light: a server imports this at its start, ``maintenance`` at its first use).

SPEC: a replace is a normal write with history (``reason: "maintenance:<task>"``). The
server's scheduler (and its runs asked for by ``indexer maintain`` beside it, ``POST
/api/v1/maintain``), ``indexer maintain`` with no server, and a client's ``POST
/api/v1/{lang}/maintenance`` all write through ``write_output``, so history tells them
apart from nothing: the same actor, the same reason, the same file.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from shared.errors import InvalidArgumentError

if TYPE_CHECKING:
    from indexer.vault.vault import Vault

ACTOR = "job:maintenance"
# (lang, task, content, if_match, mode) -> the write's result: how a run writes a replace
OutputWriter = Callable[[str, str, str, str | None, int | None], dict]
# In a run asked for now (``indexer maintain``, here or through the server), a model
# endpoint's Retry-After up to this long is waited out and the task tried once more; a
# longer one ends the run, naming the moment to try again.
ASKED_WAIT = 30.0


@dataclass(frozen=True)
class Task:
    name: str
    output: str  # at the vault root
    env: str  # the setting that enables it


TASKS: dict[str, Task] = {
    "user_profile": Task("user_profile", "USER.md", "INDEXER_MAINTENANCE_USER_PROFILE"),
    "project_review": Task("project_review", "PROJECT.md", "INDEXER_MAINTENANCE_PROJECT_REVIEW"),
}


@dataclass(frozen=True)
class MaintenanceSettings:
    """``INDEXER_MAINTENANCE_*`` (see ``indexer.settings``)."""

    enabled: frozenset[str] = frozenset()
    min_interval_hours: float = 24.0
    check_minutes: float = 30.0  # the scheduler's periodic check
    debounce_seconds: float = 60.0  # quiet time after an event write before a check
    max_steps: int = 8  # model turns per run, tool calls included
    timeout: float = 300.0  # seconds per run
    prompt_files: dict[str, Path] = field(default_factory=dict)  # task -> replacement


def enabled_tasks(settings: MaintenanceSettings) -> list[str]:
    """The tasks ``settings`` enables, in ``TASKS``' order."""
    return [name for name in TASKS if name in settings.enabled]


def check_task(task: object) -> Task:
    """The task named ``task``; ``invalid_argument`` for any other name."""
    found = TASKS.get(task) if isinstance(task, str) else None
    if found is None:
        raise InvalidArgumentError(f"task must be one of {', '.join(sorted(TASKS))}")
    return found


def write_output(
    vault: Vault,
    lang: str,
    task: str,
    content: str,
    if_match: str | None,
    mode: int | None = None,
) -> dict:
    """Write ``content`` as ``task``'s output file, recorded as the maintenance job's
    change with the task's reason (``if_match``: the etag the run read, '' for none;
    ``mode``: no more open than what it quotes, ``quoted_modes``)."""
    output = check_task(task).output
    reason = f"maintenance:{task}"
    return vault.write(
        lang, output, content, if_match=if_match, reason=reason, actor=ACTOR, mode=mode
    )
