"""``Core``: the objects behind every frontend, built once by ``indexer.daemon``.

The MCP tools (``indexer.web.mcp``) and any other frontend call these objects directly;
no frontend implements a rule of its own, and none reaches another over HTTP.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import indexer
from indexer.index.service import NoteIndex
from indexer.jobs.llm import JobModel
from indexer.jobs.recall import Recall
from indexer.jobs.runner import JobRunner
from indexer.jobs.scheduler import MaintenanceScheduler
from indexer.jobs.summaries import Summaries
from indexer.scans import ScanPool
from indexer.settings import Settings
from indexer.vault.no_wait import abandoned_when
from indexer.vault.unrecorded import Unrecorded
from indexer.vault.vault import Vault

if TYPE_CHECKING:
    from indexer.jobs.maintenance import Maintenance


@dataclass
class Core:
    """Settings, the vaults and (when open) the index of one workspace."""

    settings: Settings
    vault: Vault
    index: NoteIndex | None = None
    model: JobModel | None = None  # the background jobs' optional model
    jobs: JobRunner | None = None  # the thread background jobs run on
    # Features that may be off; None: the feature is absent, and a frontend says so
    # instead of failing.
    summaries: Summaries | None = None  # folder abstracts and overviews (seed 001)
    recall: Recall | None = None
    # USER.md / PROJECT.md from the event log: built at the first call (off by default,
    # its modules cost 20-30 ms of a start that needs none of them)
    maintenance: Callable[[], Maintenance] | None = None
    scheduler: MaintenanceScheduler | None = None  # runs maintenance when it is due
    scans: ScanPool = field(default_factory=lambda: ScanPool(told=abandoned_when))  # grep, find
    unrecorded: Unrecorded | None = None  # outside changes history could not take yet

    def status(self) -> dict:
        """Version, workspace, notes per lang, whether the index is ready, and whether it
        is caught up with disk (``sync``: why not, the file watcher's state)."""
        index = self.index
        sync = index.health() if index is not None else {"partial": True}
        return {
            "version": indexer.__version__,
            "workspace": str(self.settings.workspace.root),
            "langs": index.counts() if index is not None else self.vault.note_counts(),
            "index_ready": index.ready if index is not None else False,
            "index_partial": sync["partial"],
            "sync": sync,
            "search": index is not None,
            "pid": os.getpid(),
        }
