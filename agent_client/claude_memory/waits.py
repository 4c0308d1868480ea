"""Waiting for a change whose call got no answer in time, by looking at the vault.

A call that times out has left this client: the server still has it and goes on (a
``move`` of a folder of 50,000 files takes minutes, past any one call's timeout). Told
"offline", the model would view the paths at once, see the move not yet made, and do
it again or work around it. ``timed_out`` tells a timeout from a connection that failed;
``until`` looks again, less and less often, until the change is seen made.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from shared.errors import IndexerOfflineError

FIRST_PAUSE = 0.1
LONGEST_PAUSE = 2.0


def timed_out(err: IndexerOfflineError) -> bool:
    """Whether the call got no answer in time (its request went out, and the server may
    still be running it) rather than no connection at all."""
    seen: BaseException | None = err
    while seen is not None:
        if isinstance(seen, TimeoutError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


async def until(made: Callable[[], Awaitable[bool]], seconds: float) -> bool:
    """Whether ``made()`` said True within ``seconds`` (asked after a pause that doubles
    up to ``LONGEST_PAUSE``, and never takes more than half of the time left: the last
    look has time too). A look that itself got no answer in time is asked again: the
    server busy with the very change waited for answers slowly, and that is no reason
    to stop waiting; a connection that failed (the indexer gone) is the caller's. A look
    still unanswered at the end of the wait is given up (its own call timeout ran past
    the wait by up to one timeout)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    pause = FIRST_PAUSE
    while (left := deadline - loop.time()) > 0:
        await asyncio.sleep(min(pause, left / 2))
        pause = min(pause * 2, LONGEST_PAUSE)
        bound = asyncio.timeout_at(deadline)
        try:
            async with bound:
                if await made():
                    return True
        except TimeoutError:
            if not bound.expired():
                raise
            return False  # (the wait's end; a look's own timeout is offline, below)
        except IndexerOfflineError as err:
            if not timed_out(err):
                raise
    return False
