"""A model endpoint's ``Retry-After`` (a 429 or 503), kept with the writer's one LLM client.

The SDK does not retry (``make_llm``), so without this a merge that met a 429 failed and
the next entry in the queue asked the endpoint again at once. Now no merge asks before
the quiet is over: a short one (``WAIT_UP_TO``) is waited out once per merge, a longer
one fails the merge at once with a message naming the UTC moment to retry after, the
same for every entry until then (the fallback, if enabled, merges them without the
model). The indexer's maintenance keeps the same quiet (``indexer.jobs.maintenance``).
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import TypeVar

import openai
from openai import AsyncOpenAI

from agent_client.failures import describe_failure
from agent_client.merge.tools import MergeFailed
from shared.retry_after import quiet_end, retry_after_seconds
from shared.timestamps import format_timestamp

logger = logging.getLogger("agent_client.merge.llm")

WAIT_UP_TO = 30.0  # seconds: a Retry-After this short is waited out (once per merge)

T = TypeVar("T")


class EndpointQuiet:
    """Until when (``time.monotonic()``) the endpoint is not asked, and the message that
    says so (the same for every merge that meets it)."""

    def __init__(self) -> None:
        self.until = 0.0
        self.message = ""

    def heard(self, exc: openai.APIStatusError) -> bool:
        """Keep the quiet an error response's ``Retry-After`` asks for (at most an hour,
        ``shared.retry_after``); False when it asks for none."""
        wait = retry_after_seconds(exc.response.headers.get("retry-after"))
        if not wait:  # (none, or 0: an ordinary failure, not asked again within this merge)
            return False
        self.until = time.monotonic() + wait
        when = format_timestamp(quiet_end(datetime.now(UTC), wait))
        self.message = f"the LLM endpoint asks to retry after {when} ({describe_failure(exc)})"
        return True

    def left(self) -> float:
        """Seconds until the endpoint may be asked again (0: now)."""
        return max(0.0, self.until - time.monotonic())


_QUIETS: weakref.WeakKeyDictionary[AsyncOpenAI, EndpointQuiet] = weakref.WeakKeyDictionary()


def quiet_of(llm: AsyncOpenAI) -> EndpointQuiet:
    """The quiet kept with ``llm`` (the writer reuses one client across entries)."""
    return _QUIETS.setdefault(llm, EndpointQuiet())


class Pacer:
    """One merge's calls to the model, held to the client's quiet; ``deadline`` (loop
    time) is the merge's end: a wait that would outlast it is not begun."""

    def __init__(self, quiet: EndpointQuiet, deadline: float) -> None:
        self.quiet = quiet
        self.deadline = deadline
        self.waited = False

    async def ask(self, call: Callable[[], Awaitable[T]]) -> T:
        """``call()`` once the quiet is over, again once after a short ``Retry-After``;
        ``MergeFailed`` naming when to retry if the quiet is longer (or comes back)."""
        while True:
            left = self.quiet.left()
            if left > 0:
                ends = asyncio.get_running_loop().time() + left
                if self.waited or left > WAIT_UP_TO or ends >= self.deadline:
                    raise MergeFailed(self.quiet.message)
                self.waited = True
                logger.warning("the LLM endpoint asked to wait %.0f s; waiting", left)
                await asyncio.sleep(left)
            try:
                return await call()
            except openai.APIStatusError as exc:
                if not self.quiet.heard(exc):
                    raise
