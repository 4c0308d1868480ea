"""The vaults, history and maintenance built from the settings: for the server
(``daemon.build_core``) and for the commands that run while none serves (``indexer
search``, ``summarize``, ``reindex``, ``maintain``). Apart from the daemon so that those
commands never import the web stack (fastmcp, uvicorn: 1.2 s of every run's 2 s).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, TypeVar

from indexer.index import gone_modes
from indexer.index.service import NoteIndex
from indexer.jobs.llm import JobModel
from indexer.settings import Settings, default_prompts_dir
from indexer.vault import fsops, outside, recheck
from indexer.vault.history.store import HistoryStore
from indexer.vault.sandbox import Sandbox
from indexer.vault.unrecorded import Unrecorded
from indexer.vault.vault import Vault
from shared.errors import HistoryStoreError

if TYPE_CHECKING:
    from indexer.jobs.maintenance import Maintenance

log = logging.getLogger("indexer")
T = TypeVar("T")


def open_history(settings: Settings, *, check: bool = True) -> HistoryStore:
    """The history store, fully checked unless ``check`` is off (``HistoryStoreError``
    for an unusable one)."""
    history = HistoryStore(settings.workspace.history_dir, fsops.etag_of)
    history.open(check=check)
    return history


def build_vault(settings: Settings, history: HistoryStore | None) -> Vault:
    """The vaults of the workspace, recording every change in ``history`` (``build_core``,
    and ``indexer maintain`` on its own); settles what a crash left half-done."""
    vault = Vault(
        Sandbox(settings.workspace), max_file_bytes=settings.max_file_bytes, history=history
    )
    kept, dropped = vault.recover_history() if history is not None else (0, 0)
    if kept or dropped:
        log.warning(
            "history: %d change(s) cut short by a crash were done, %d were not", kept, dropped
        )
    return vault


def build_maintenance(
    settings: Settings,
    vault: Vault,
    index: NoteIndex | None,
    model: JobModel | None,
) -> Maintenance:
    """The maintenance tasks (state in ``W/.indexer/maintenance-state.json``). Their
    prompts come from ``INDEXER_PROMPTS_DIR`` when it has ``maintenance/``, else from the
    shipped texts (a folder of the MCP prompts alone failed every run)."""
    from indexer.jobs.maintenance import Maintenance  # (at first use: ``Core.maintenance``)
    from indexer.jobs.maintenance_state import StateFile

    prompts_dir = settings.prompts_dir
    if not (prompts_dir / "maintenance").is_dir():
        prompts_dir = default_prompts_dir()
    return Maintenance(
        settings.maintenance,
        state=StateFile(settings.workspace.maintenance_state),
        vault=vault,
        index=index,
        model=model,
        prompts_dir=prompts_dir,
    )


def once(build: Callable[[], T]) -> Callable[[], T]:
    """``build`` run at the first call only, under a lock (the event loop and the jobs
    thread may ask at once); every call answers what it built."""
    lock = threading.Lock()
    built: list[T] = []

    def get() -> T:
        with lock:
            if not built:
                built.append(build())
            return built[0]

    return get


@contextlib.contextmanager
def history_hearing(settings: Settings, index: NoteIndex) -> Iterator[Vault | None]:
    """The vaults recording in history what ``index`` finds changed outside the tools,
    for a command that reconciles the index while no server runs (``indexer search``,
    ``indexer summarize``): else the server started next finds nothing new, and the
    edits made while none ran get no version of their own. A history that cannot be
    opened is the server's to report: the command runs without it (None), warning."""
    try:
        history = open_history(settings, check=False)  # (the full check reads it whole)
    except HistoryStoreError as err:
        log.warning("%s; this command records nothing in history", err.message)
        yield None
        return
    try:
        vault = build_vault(settings, history)
        record_outside_changes(index, vault)
        yield vault
    finally:
        history.close()


def record_outside_changes(index: NoteIndex, vault: Vault) -> Unrecorded:
    """Have history record what the index sees changed outside the tools: each change,
    and first the text it replaced when history had none (the index's copy), also when
    a tool's change comes before the index's sync of it (``Recorder.held``). Returns the
    changes history could not take yet (closed after the index, before history)."""
    waiting = Unrecorded(
        functools.partial(outside.observe_many, vault),
        vault.recorder.refused,
        functools.partial(outside.still_refused, vault),
    )
    index.batch_listeners.append(external_change_recorder(vault, waiting))
    if vault.recorder.enabled:
        index.history_since = functools.partial(outside.history_since_ns, vault)
        index.history_lacks = functools.partial(outside.history_lacks, vault)
        index.keep_befores = functools.partial(outside.keep_befores, vault)
        index.history_durable = functools.partial(outside.history_durable, vault)
        index.renames_told = functools.partial(recheck.renames_told, vault)
        vault.recorder.held = functools.partial(index.held_text, limit=vault.max_file_bytes)
        vault.recorder.gone_mode = gone_modes.gone_mode  # (an ``rm``'s deletion: its mode)
    return waiting


def external_change_recorder(
    vault: Vault, waiting: Unrecorded | None = None
) -> Callable[[list[tuple[str, str, str]]], None]:
    """An index batch listener that records in history what changed outside the tools
    (the tools record their own changes), a batch in a few transactions: a note first
    seen while serving (by the watcher, or a reconcile after lost events or while
    polling) or made while no indexer ran (the start-up reconcile of an index that was
    whole before) is recorded; one found by the reconcile that builds the index is not:
    it was there before, and gets its first version at its first change (see
    ``indexer.vault.outside``). One history cannot take (a full disk) is recorded once
    it can (``Unrecorded``)."""
    if waiting is None:
        waiting = Unrecorded(functools.partial(outside.observe_many, vault))

    def record(told: list[tuple[str, str, str]]) -> None:
        changes = [
            (lang, path, source in ("watcher", "catch_up", "offline"))
            for lang, path, source in told
            if source != "tool"
        ]
        if changes:
            waiting.record(changes)

    return record
