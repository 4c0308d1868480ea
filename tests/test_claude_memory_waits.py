"""The memory tool's wait for a move that got no answer in time (claude_memory.waits)."""

from __future__ import annotations

import pytest

from agent_client.claude_memory import waits
from shared.errors import IndexerOfflineError


def _offline(cause: BaseException) -> IndexerOfflineError:
    try:
        raise IndexerOfflineError("the indexer at http://127.0.0.1:1/mcp failed") from cause
    except IndexerOfflineError as err:
        return err


async def test_a_look_that_timed_out_is_asked_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A server busy with the move answers a look slowly: the wait goes on (was: the
    look's timeout ended it, and the tool said the indexer was offline, a rename of
    3,000 files made meanwhile)."""
    monkeypatch.setattr(waits, "FIRST_PAUSE", 0.001)
    answers: list[bool | BaseException] = [_offline(TimeoutError()), _offline(TimeoutError()), True]
    asked = 0

    async def made() -> bool:
        nonlocal asked
        answer = answers[asked]
        asked += 1
        if isinstance(answer, BaseException):
            raise answer
        return answer

    assert await waits.until(made, 5.0)
    assert asked == 3


async def test_a_look_whose_connection_failed_is_the_callers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(waits, "FIRST_PAUSE", 0.001)
    gone = _offline(ConnectionRefusedError())

    async def made() -> bool:
        raise gone

    with pytest.raises(IndexerOfflineError) as raised:
        await waits.until(made, 5.0)
    assert raised.value is gone


async def test_looks_that_keep_timing_out_end_at_the_wait(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(waits, "FIRST_PAUSE", 0.001)
    monkeypatch.setattr(waits, "LONGEST_PAUSE", 0.001)

    async def made() -> bool:
        raise _offline(TimeoutError())

    assert not await waits.until(made, 0.05)
