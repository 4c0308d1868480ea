"""The memory tool's wait for a move that got no answer in time (claude_memory.waits)."""

from __future__ import annotations

import asyncio

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


async def test_a_look_unanswered_at_the_end_of_the_wait_is_given_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A look whose own call timeout is long (the server busy with the move) ends with the
    wait: it ran on for up to one call timeout past it (30 s by default), and the tool's
    message then said a time lower than it had waited."""
    monkeypatch.setattr(waits, "FIRST_PAUSE", 0.001)
    looks = 0

    async def made() -> bool:
        nonlocal looks
        looks += 1
        await asyncio.sleep(5)  # (a call's timeout; cancelled at the wait's end)
        return True

    loop = asyncio.get_running_loop()
    began = loop.time()
    assert not await waits.until(made, 0.3)
    assert 0.3 <= loop.time() - began < 2.0
    assert looks == 1


async def test_the_last_pause_leaves_the_last_look_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pause never takes all of what is left of the wait: a look ends it, not a sleep."""
    monkeypatch.setattr(waits, "FIRST_PAUSE", 10.0)
    asked = 0

    async def made() -> bool:
        nonlocal asked
        asked += 1
        return asked == 2

    assert await waits.until(made, 0.5)
    assert asked == 2


async def test_a_timeout_of_the_look_s_own_is_not_the_wait_s_end() -> None:
    """A TimeoutError the look raises itself, with time left, goes up as it did."""

    async def made() -> bool:
        raise TimeoutError("the look's own")

    with pytest.raises(TimeoutError, match="the look's own"):
        await waits.until(made, 30.0)
