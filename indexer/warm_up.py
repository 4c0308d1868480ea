"""What a server does once serving, in the background: the text tables and patterns a
first search, snippet or recall would wait for built, then the temp files a crash left
swept (``daemon`` starts it after the URL file; a stop ends it between two steps)."""

from __future__ import annotations

import importlib
import logging
import threading

from indexer.vault import atomic
from indexer.vault.tempfiles import remove_orphan_temp_files, remove_temp_files_of
from shared.workspace import Workspace

log = logging.getLogger("indexer")

BUILD_SECONDS = 10  # most a stop waits for a step of the start's text tables


class Warming:
    """``after_start``'s steps, which a stop ends between two: the interpreter's exit
    ends a daemon thread in RE2's C++ code (a pattern compiled) with ``std::terminate``
    (SIGABRT: a stop right after the start exited -6), so a stop says no step is to
    start (``closing``) first, and waits for the one under way (``wait``) once the index
    is closed: a start indexing 10,000 notes starved the steps (1.5 s for one)."""

    def __init__(self) -> None:
        self.closing = threading.Event()
        self.idle = threading.Event()
        self.idle.set()  # (until a thread runs the steps)

    def wait(self) -> None:
        self.closing.set()
        if not self.idle.wait(BUILD_SECONDS):
            log.warning("a step of the start's text tables took over %d s", BUILD_SECONDS)


def after_start(workspace: Workspace, warming: Warming | None = None) -> None:
    """Once serving: what the first search, snippet or recall past ASCII would wait for
    built (first: a client may call at once), recall's keyword module (imported here, not
    at the start: 30-60 ms of it), the text tables, the highlight's patterns; then the
    temp files of earlier processes' writes swept (this one's spared)."""
    # (loaded by then: the index reads text)
    from indexer.index.query import folded_spellings
    from indexer.index.snippet_view import view_patterns
    from indexer.index.text import build_tables
    from indexer.jobs.tokens import heavy_runs

    steps = (
        lambda: importlib.import_module("indexer.jobs.keywords"),  # (a session opens on recall)
        build_tables,
        folded_spellings,
        view_patterns,
        heavy_runs,
    )
    try:
        for step in steps:
            if warming is not None and warming.closing.is_set():
                return
            step()
    finally:
        if warming is not None:
            warming.idle.set()
    sweep_temp_files(workspace)


def sweep_temp_files(workspace: Workspace) -> None:
    """Remove the temp files a crash left, sparing those of this process's writes in
    flight (the workspace lock held, no other process writes in the vaults, the URL, the
    token or the clean mark; the maintenance state is swept under its own lock)."""
    try:
        removed = sum(
            remove_temp_files_of(path, spare=atomic.in_flight)
            for path in (workspace.url_file, workspace.token_file, workspace.clean_mark)
        )
        from indexer.jobs.maintenance_state import StateFile  # (once serving)

        removed += StateFile(workspace.maintenance_state).remove_leftovers()
    except OSError as err:
        log.warning("could not sweep the temp files of the workspace's own files: %s", err)
    else:
        if removed:
            log.warning("removed %d temp file(s) of the workspace's files left by a crash", removed)
    for lang in workspace.langs():
        try:
            removed = remove_orphan_temp_files(workspace.vault_dir(lang), spare=atomic.in_flight)
        except OSError as err:
            log.warning("could not sweep the temp files of %s: %s", lang, err)
            continue
        if removed:
            log.warning("removed %d temp file(s) left by a crash in %s", removed, lang)
