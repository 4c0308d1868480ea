"""History retention, pruned in the background on the jobs thread.

Every version of the last ``INDEXER_HISTORY_DAYS`` days is kept, and at least the last
``KEEP_LAST`` versions of each file, whatever their age; a file's latest version and
what undoing its latest change needs are never removed (see ``HistoryStore.prune``).
A pass runs a minute after start-up, then every ``INTERVAL`` seconds, in short
transactions on a worker thread, so tool calls barely wait for it.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from datetime import datetime

from indexer.vault.history.store import HistoryStore

log = logging.getLogger("indexer.jobs")
KEEP_LAST = 20
FIRST_DELAY = 60.0
INTERVAL = 6 * 3600.0


async def prune_history(
    store: HistoryStore,
    days: int,
    clock: Callable[[], datetime],
    *,
    keep: int = KEEP_LAST,
    first_delay: float = FIRST_DELAY,
    interval: float = INTERVAL,
) -> None:
    """Prune ``store`` now and then, until cancelled (when the jobs thread stops)."""
    stop = threading.Event()
    try:
        await asyncio.sleep(first_delay)
        while True:
            try:
                stats = await asyncio.to_thread(
                    store.prune, clock(), days=days, keep=keep, stop=stop.is_set
                )
                if stats.versions:
                    log.info(
                        "history: pruned %d versions and %d stored texts older than %d days",
                        stats.versions, stats.blobs, days,
                    )  # fmt: skip
            except Exception:
                log.exception("history: pruning failed; it is tried again later")
            await asyncio.sleep(interval)
    finally:
        stop.set()
