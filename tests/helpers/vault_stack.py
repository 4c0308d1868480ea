"""A workspace's real index (reconciled) and a vault that records history and tells
that index, on a temp dir: the in-process stack a tool call reaches, without a server."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from datetime import datetime

from indexer.index.service import NoteIndex
from indexer.vault import fsops
from indexer.vault.history.store import HistoryStore
from indexer.vault.sandbox import Sandbox
from indexer.vault.unrecorded import Unrecorded
from indexer.vault.vault import Vault
from indexer.wiring import record_outside_changes
from shared.workspace import Workspace


def reconciled_index(ws: Workspace) -> Iterator[NoteIndex]:
    """The index of ``ws``, open and caught up with the disk; closed afterwards."""
    index = NoteIndex(ws)
    index.open()
    index.reconcile()
    yield index
    index.close()


def watching_index(ws: Workspace) -> Iterator[NoteIndex]:
    """The index of ``ws`` as a server runs it: its watcher on (a short debounce) and the
    start-up reconcile done in the background; closed afterwards."""
    from helpers.indexer_process import wait_for

    index = NoteIndex(ws, debounce=0.02)
    index.open()
    index.start_background()
    try:
        wait_for(lambda: index.ready, 15, what="the start-up reconcile")
        yield index
    finally:
        index.close()


def recording_vault(ws: Workspace, index: NoteIndex) -> Iterator[Vault]:
    """A vault of ``ws`` recording history, its changes told to ``index``."""
    store = HistoryStore(ws.history_dir, fsops.etag_of)
    store.open()
    vault = Vault(Sandbox(ws), max_file_bytes=1 << 20, history=store)
    vault.index_sync = index
    yield vault
    store.close()


def wired_stack(
    ws: Workspace, clock: Callable[[], datetime] | None = None
) -> Iterator[tuple[Vault, NoteIndex]]:
    """A vault recording history and an index that tells it what changed outside the
    tools, wired as ``indexer serve`` wires them (the recheck after a crash too), the
    index open and reconciled: a start."""
    store = HistoryStore(ws.history_dir, fsops.etag_of)
    store.open()
    vault = Vault(Sandbox(ws), max_file_bytes=1 << 20, clock=clock, history=store)
    index = NoteIndex(ws)
    record_outside_changes(index, vault)
    index.recheck_listeners.append(functools.partial(vault.recheck_history, indexed=index.etags))
    index.open()
    vault.index_sync = index
    index.reconcile()
    yield vault, index
    index.close()
    store.close()


@contextlib.contextmanager
def served_vault(ws: Workspace, vault: Vault) -> Iterator[Unrecorded]:
    """The index of ``ws`` as ``indexer serve`` runs it over ``vault``: history hears
    what it sees changed outside the tools, its watcher on (a short debounce), its
    start-up reconcile done; what history refused waits in the ``Unrecorded`` yielded."""
    from helpers.indexer_process import wait_for

    index = NoteIndex(ws, debounce=0.02)
    waiting = record_outside_changes(index, vault)
    index.open()
    vault.index_sync = index
    index.start_background()
    try:
        wait_for(lambda: index.ready, 15, what="the start")
        yield waiting
    finally:
        index.close()
        waiting.close()
