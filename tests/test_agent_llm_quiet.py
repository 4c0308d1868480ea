"""A model endpoint's ``Retry-After`` in the agent client's merge: the real openai SDK
talks to the scripted stub (``llm_stub``), the tools run against a real ``indexer serve``.

A 429 with ``Retry-After`` was a failed merge naming only the status, and the next
entry in the queue asked the endpoint again at once."""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from helpers.indexer_process import RunningIndexer
from helpers.llm_stub import LLMStub, RawReply, final, running_llm_stub, tool_call

from agent_client.notices import CollectingNoticeSink, SystemNotice
from agent_client.settings import ClientSettings, LLMSettings
from agent_client.writer import MemoryWriter
from shared.models import MemoryEntry

T0 = datetime(2026, 11, 29, 20, 0, 0, tzinfo=UTC)
_langs = itertools.count()
NOTE = "---\ntitle: Tea\ntags: [drinks]\n---\n# Tea\n\nGreen tea is 綠茶.\n"
RETRY = re.compile(r"the LLM endpoint asks to retry after (\S+Z) \(RateLimitError \(HTTP 429\)")


@pytest.fixture(scope="module")
def stub() -> Iterator[LLMStub]:
    with running_llm_stub() as running:
        yield running


@pytest.fixture
def lang() -> str:
    return f"en-q{next(_langs):03d}"


def busy(seconds: str) -> RawReply:
    """A 429 whose ``Retry-After`` asks for ``seconds``."""
    return RawReply(429, {"error": {"message": "slow down"}}, headers={"retry-after": seconds})


def run_entries(
    server: RunningIndexer, stub: LLMStub, entries: list[MemoryEntry], *, fallback: bool = False
) -> list[SystemNotice]:
    """The entries through one writer (one LLM client), in one batch."""
    llm = LLMSettings(
        model="stub-model", base_url=stub.base_url, max_steps=6, timeout=20, request_timeout=20
    )
    settings = ClientSettings(workspace=server.workspace, tz=UTC, llm=llm, llm_fallback=fallback)
    sink = CollectingNoticeSink()
    writer = MemoryWriter(settings, sink)
    try:
        writer.submit(entries)
        assert writer.flush(60)
    finally:
        writer.close()
    return list(sink.notices)


def entry(lang: str, title: str = "Tea", content: str = "green tea") -> MemoryEntry:
    return MemoryEntry(lang, "knowledge", title, content, ["drinks"], T0)


def retry_moment(text: str | None) -> datetime:
    said = RETRY.search(text or "")
    assert said is not None, text
    return datetime.fromisoformat(said[1])


def test_a_short_retry_after_is_waited_out_and_the_request_sent_again(
    server: RunningIndexer, stub: LLMStub, lang: str
) -> None:
    asked: list[float] = []
    steps: list[Any] = [
        busy("1"),
        tool_call("stat", path="items/tea.md"),
        tool_call("write", path="items/tea.md", content=NOTE),
        final(["items/tea.md"], "Created a note on tea."),
    ]

    def script(request: dict[str, Any], turn: int) -> Any:
        asked.append(time.monotonic())
        return steps[min(turn, len(steps) - 1)]

    stub.run(script)
    (notice,) = run_entries(server, stub, [entry(lang)])
    assert notice.ok and notice.method == "llm", notice.error
    assert len(stub.requests) == 4 and asked[1] - asked[0] >= 0.95
    assert stub.requests[1]["messages"] == stub.requests[0]["messages"]  # the same request


def test_a_short_retry_after_is_waited_once_then_the_merge_names_when_to_retry(
    server: RunningIndexer, stub: LLMStub, lang: str
) -> None:
    stub.run([busy("1")])
    (notice,) = run_entries(server, stub, [entry(lang)])
    assert not notice.ok and len(stub.requests) == 2
    assert retry_moment(notice.error) - datetime.now(UTC) <= timedelta(seconds=2)


@pytest.mark.parametrize("fallback", [False, True])
def test_a_long_retry_after_fails_at_once_and_the_queue_does_not_ask_again(
    server: RunningIndexer, stub: LLMStub, lang: str, fallback: bool
) -> None:
    """An hour's Retry-After: the merge fails at once naming the UTC moment, and so does
    every entry queued after it, without a request (the fallback merges each, if on)."""
    stub.run([busy("3600")])
    started = time.monotonic()
    items = [entry(lang, f"Tea {n}", f"green tea {n}") for n in range(3)]
    notices = run_entries(server, stub, items, fallback=fallback)
    assert time.monotonic() - started < 15 and len(stub.requests) == 1
    said = [n.fallback_reason if fallback else n.error for n in notices]
    when = retry_moment(said[0])
    assert timedelta(minutes=59) < when - datetime.now(UTC) <= timedelta(hours=1, seconds=2)
    assert said == [said[0]] * 3  # the same message for each
    if fallback:
        assert all(n.ok and n.method == "fallback" for n in notices)
    else:
        assert not any(n.ok for n in notices)
