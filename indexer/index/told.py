"""The changes a pass tells, with the etags the index holds of them now: history pairs
the renames among them (a gone path and a new one of its bytes) before each is told on
its own (``indexer.vault.recheck.renames_told``), and how the listeners are told."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager

from indexer.sqlite_lib import sqlite3

log = logging.getLogger("indexer.index")

Key = tuple[str, str]  # (lang, path)
WithEtag = tuple[str, str, str | None]  # (lang, path, etag: None when no row is left)
RenamesTold = Callable[[list[WithEtag]], None]
Told = list[tuple[str, str, str]]  # (lang, path, source)
ChangeListener = Callable[[str, str, str], None]  # told each change: (lang, path, source)
BatchListener = Callable[[Told], None]  # told a pass's changes at once


def with_etags(
    read: Callable[[], AbstractContextManager[sqlite3.Connection]], keys: Iterable[Key]
) -> list[WithEtag]:
    """``keys`` each with its row's etag (its bytes' hash), None when it has no row."""
    found: list[WithEtag] = []
    with read() as conn:
        for lang, path in keys:
            row = conn.execute(
                "SELECT hash FROM notes WHERE lang = ? AND path = ?", (lang, path)
            ).fetchone()
            found.append((lang, path, None if row is None else row[0]))
    return found


def renames_first(
    renames_told: RenamesTold | None,
    read: Callable[[], AbstractContextManager[sqlite3.Connection]],
    keys: list[Key],
    source: str,
) -> None:
    """Have history pair the renames among a pass's changes before they are told one by
    one: a source whose new files history records (not the index's first build). A
    failure is logged, never raised, as a change listener's is: each change is told."""
    if renames_told is None or not keys or source not in ("watcher", "catch_up", "offline"):
        return
    try:
        renames_told(with_etags(read, keys))
    except Exception:
        log.exception("history could not pair the renames among %d change(s)", len(keys))


def tell_all(told: Told, batches: list[BatchListener], listeners: list[ChangeListener]) -> None:
    """Tell the listeners what changed: each of ``batches`` all at once (history records
    a watcher's batch in a few transactions: one a change was half the watcher's time
    in a copy of thousands of notes), then each of ``listeners`` change by change. A
    listener's failure is logged, never raised."""
    if not told:
        return
    for batch in batches:
        try:
            batch(told)
        except Exception:
            log.exception("change listener failed for %d change(s)", len(told))
    for lang, path, source in told:
        for listener in listeners:
            try:
                listener(lang, path, source)
            except Exception:
                log.exception("change listener failed for %s/%s", lang, path)
