"""The maintenance tasks, and the one way a task's replace is written.

SPEC: a replace is a normal write with history (``reason: "maintenance:<task>"``). The
server's scheduler (and its runs asked for by ``indexer maintain`` beside it, ``POST
/api/v1/maintain``), ``indexer maintain`` with no server, and a client's ``POST
/api/v1/{lang}/maintenance`` all write through ``write_output``, so history tells them
apart from nothing: the same actor, the same reason, the same file.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from shared.errors import InvalidArgumentError

if TYPE_CHECKING:
    from indexer.vault.vault import Vault

ACTOR = "job:maintenance"
# (lang, task, content, if_match) -> the write's result: how a run writes a replace
OutputWriter = Callable[[str, str, str, str | None], dict]
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


def check_task(task: object) -> Task:
    """The task named ``task``; ``invalid_argument`` for any other name."""
    found = TASKS.get(task) if isinstance(task, str) else None
    if found is None:
        raise InvalidArgumentError(f"task must be one of {', '.join(sorted(TASKS))}")
    return found


def write_output(vault: Vault, lang: str, task: str, content: str, if_match: str | None) -> dict:
    """Write ``content`` as ``task``'s output file, recorded as the maintenance job's
    change with the task's reason (``if_match``: the etag the run read, '' for none)."""
    output = check_task(task).output
    reason = f"maintenance:{task}"
    return vault.write(lang, output, content, if_match=if_match, reason=reason, actor=ACTOR)
