"""``Core``: the objects every frontend (MCP tools, REST API, browser page) works on.

A placeholder for the composition root's real one: built once in ``build_app``, passed
to each frontend, so that no frontend builds its own copy of a rule. ``history``,
``summaries`` and ``recall`` are None until those features exist (a frontend then says
the feature is absent instead of failing).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import indexer
from indexer.index import NoteIndex
from indexer.settings import Settings
from indexer.vault import Vault


@dataclass
class Core:
    settings: Settings
    vault: Vault
    index: NoteIndex | None
    history: Any = None
    summaries: Any = None
    recall: Any = None

    def status(self) -> dict:
        """What the ``status`` tool answers: version, workspace, notes per lang, index state."""
        index = self.index
        return {
            "version": indexer.__version__,
            "workspace": str(self.settings.workspace.root),
            "langs": index.counts() if index is not None else self.vault.note_counts(),
            "index_ready": index.ready if index is not None else False,
            "search": index is not None,
            "pid": os.getpid(),
        }
