"""History retention, pruned in the background on the jobs thread.

Every version of the last ``INDEXER_HISTORY_DAYS`` days is kept, and at least the last
``KEEP_LAST`` versions of each file, whatever their age; a file's latest version and
what undoing its latest change needs are never removed (see ``HistoryStore.prune``).
A pass runs a minute after start-up, then every ``INTERVAL`` seconds, in short
transactions on a worker thread, so tool calls barely wait for it.

A clock far ahead does not prune years at once: each pass moves the cut-off at most
``STEP`` past the last pass's (kept in the history file), and says so when that holds
it back (after a shutdown longer than a day too: the passes then catch up).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from datetime import UTC, datetime

from indexer.vault.history.store import HistoryStore

log = logging.getLogger("indexer.jobs")
KEEP_LAST = 20
FIRST_DELAY = 60.0
INTERVAL = 6 * 3600.0
DAY_MS = 86_400_000
STEP = DAY_MS  # ms the cut-off may move per pass: a day, 4 days a day at INTERVAL
# A hold up to this long is a shutdown's catch-up (said at INFO); past it, a clock to check
WARN_PAST_MS = 7 * DAY_MS


async def prune_history(
    store: HistoryStore,
    days: int,
    clock: Callable[[], datetime],
    *,
    keep: int = KEEP_LAST,
    first_delay: float = FIRST_DELAY,
    interval: float = INTERVAL,
    step: int = STEP,
) -> None:
    """Prune ``store`` now and then, until cancelled (when the jobs thread stops)."""
    stop = threading.Event()
    try:
        await asyncio.sleep(first_delay)
        while True:
            try:
                now = clock()
                stats = await asyncio.to_thread(
                    store.prune, now, days=days, keep=keep, step=step, stop=stop.is_set
                )
                if stats.held_ms > 0:
                    _say_held(now, days, stats.cutoff_ms, stats.held_ms, step)
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


def _say_held(now: datetime, days: int, cutoff_ms: int, held_ms: int, step: int) -> None:
    """Say that the guard held a pass back: what the clock says, what was pruned. A
    warning only past a week (a weekend's shutdown catches up without one)."""
    cutoff = datetime.fromtimestamp(cutoff_ms / 1000, UTC).isoformat(timespec="seconds")
    log.log(
        logging.WARNING if held_ms > WARN_PAST_MS else logging.INFO,
        "history: the clock (%s) asks to prune %.1f days more than the last pass did; "
        "this pass prunes only versions from before %s, %.1f days short of the %d-day "
        "cut-off (it moves at most %.1f day a pass, so a clock set wrong cannot delete "
        "older history at once: if the clock is wrong, set it right)",
        now.isoformat(timespec="seconds"), (held_ms + step) / DAY_MS, cutoff,
        held_ms / DAY_MS, days, step / DAY_MS,
    )  # fmt: skip
