"""The modes of the rows a pass removed, for the listeners it tells of their deletion.

Another program's ``rm`` leaves history nothing to stat: the file is gone when the
watcher hears of it. The index's row kept the file's mode and group as last seen
(``reconcile.VaultFile``; a ``chmod`` gives the file a new ctime, which syncs the row),
so the pass that removes the row knows them (``ReconcileStats.gone``), and history,
told of the deletion while the pass tells (``telling``), records them on its row: a
restore makes a 0600 note 0600 again (it came back 0644 less the umask).

They are the telling thread's own (a context variable): the watcher's thread, a
catch-up's and the start's tell at once never see each other's, and nothing is held
once told. A deletion history records later (a retry after a full disk) has none.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar

from indexer.index.reconcile import GoneMode

_TOLD: ContextVar[Mapping[tuple[str, str], GoneMode] | None] = ContextVar("gone", default=None)


@contextmanager
def telling(gone: Mapping[tuple[str, str], GoneMode]) -> Iterator[None]:
    """While the listeners are told of a pass's changes: the removed rows' modes."""
    token = _TOLD.set(gone)
    try:
        yield
    finally:
        _TOLD.reset(token)


def gone_mode(lang: str, path: str) -> GoneMode | None:
    """(hash, mode, gid) of the row of ``lang``/``path`` the pass being told removed,
    None when it removed none (or no pass is being told in this thread)."""
    told = _TOLD.get()
    return None if told is None else told.get((lang, path))
