"""Connecting to an indexer that is busy when asked which workspace it serves.

A connect asks the server's ``status`` (``mcp_client._served_workspace``: a URL file a
crash left can name another workspace's indexer). A server at its cap of requests in
flight refuses that call at the door as it refuses any (``indexer.web.limits``: 503,
``Retry-After``, a JSON-RPC error ``unavailable: ...``): the connect is made again
after ``BUSY_PAUSES`` (``unreachable.asked_while_busy``), and past them it fails saying
the indexer stayed busy, in one line. The busy answers come from a stand-in for the
indexer's port (``helpers.mcp_proxy``) that forwards every other request to a real
``indexer serve``: the real server cannot be made busy at exactly that call.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from datetime import UTC

import pytest
from helpers.indexer_process import RunningIndexer
from helpers.mcp_proxy import McpProxy, Reply, Seen, busy_reply

from agent_client.connection import open_session
from agent_client.settings import ClientSettings
from agent_client.unreachable import BUSY_PAUSES
from shared.errors import IndexerOfflineError


class BusyAtStatus:
    """Answers the first ``times`` ``status`` calls busy, as the indexer does."""

    def __init__(self, times: int) -> None:
        self.times = times
        self.refused = 0

    def __call__(self, seen: Seen) -> Reply | None:
        if seen.tool != "status" or self.refused >= self.times:
            return None
        self.refused += 1
        return busy_reply()


@pytest.fixture
def running(server: RunningIndexer) -> RunningIndexer:
    """The module's indexer (its URL file named by the stand-in for one test at a time)."""
    return server


def name_in_url_file(running: RunningIndexer, url: str) -> None:
    """Write ``url`` to the URL file as the server writes it: a rename."""
    (running.workspace / "url.tmp").write_text(url + "\n")
    os.replace(running.workspace / "url.tmp", running.workspace / "indexer.mcp.url")


@pytest.fixture
def proxy(running: RunningIndexer) -> Iterator[McpProxy]:
    """The stand-in, named by the URL file until the test ends (the server's own URL is
    then put back, for the module's next test)."""
    served = McpProxy(running.url)
    name_in_url_file(running, served.url)
    try:
        yield served
    finally:
        name_in_url_file(running, running.url)
        served.stop()


async def test_a_status_refused_busy_is_asked_again_until_answered(
    running: RunningIndexer, proxy: McpProxy
) -> None:
    """Three busy answers: the client waits the first three pauses, connects again each
    time (its ``server/discover`` probe too) and then works, on the current protocol."""
    proxy.answer = busy = BusyAtStatus(3)
    settings = ClientSettings(workspace=running.workspace, tz=UTC)
    started = time.monotonic()
    async with open_session(settings) as session:
        waited = time.monotonic() - started
        assert busy.refused == 3 and proxy.calls("status") == 4
        assert sum(1 for s in proxy.seen if s.method == "server/discover") == 4
        assert session._client.protocol_version == "2026-07-28"  # (no fall back to 2025)
        written = await session.vault("en-busy").write("a.md", "# A\n")
        assert written["created"]
    assert sum(BUSY_PAUSES[:3]) <= waited < sum(BUSY_PAUSES)
    assert (running.workspace / "memory/languages/en-busy/vault/a.md").is_file()


async def test_a_status_busy_past_the_pauses_fails_saying_so_in_one_line(
    running: RunningIndexer, proxy: McpProxy
) -> None:
    proxy.answer = BusyAtStatus(len(BUSY_PAUSES) + 1)
    settings = ClientSettings(workspace=running.workspace, tz=UTC)
    started = time.monotonic()
    with pytest.raises(IndexerOfflineError) as info:
        async with open_session(settings):
            pass
    took = time.monotonic() - started
    said = str(info.value)
    assert said == (
        f"indexer_offline: cannot connect to the indexer at {proxy.url}: it stayed busy for"
        " 6.05 s (unavailable: the indexer is busy; retry soon)"
    )
    assert "\n" not in said
    assert proxy.calls("status") == len(BUSY_PAUSES) + 1
    assert sum(BUSY_PAUSES) <= took < sum(BUSY_PAUSES) + 3
