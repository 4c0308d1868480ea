"""A real ``indexer serve`` with the LLM stub: an agent logs an event over MCP, the
daemon's scheduler distils USER.md, recall (MCP and REST) brings it back at the next
turn, and ``indexer maintain --status`` (another process) shows what happened."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from helpers.indexer_process import QUIET_ENV, RunningIndexer, start_indexer, wait_for
from helpers.llm_stub import LLMStub, running_llm_stub, say

pytestmark = pytest.mark.e2e
PROFILE = "# User profile\n\n## Preferences\n\n- Prefers green tea to coffee.\n"


@pytest.fixture(scope="module")
def stub() -> Iterator[LLMStub]:
    with running_llm_stub() as running:
        yield running


def maintaining(stub: LLMStub) -> dict[str, str]:
    """A server's settings: USER.md kept by the stub at once, no summaries."""
    return {
        "INDEXER_LLM_MODEL": "stub",
        "INDEXER_LLM_BASE_URL": stub.base_url,
        "INDEXER_MAINTENANCE_USER_PROFILE": "1",
        "INDEXER_MAINTENANCE_MIN_INTERVAL_HOURS": "0",
        "INDEXER_MAINTENANCE_DEBOUNCE_SECONDS": "0.2",
        "INDEXER_SUMMARIES": "0",  # the stub answers maintenance only
    }


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory, stub: LLMStub) -> Iterator[RunningIndexer]:
    running = start_indexer(tmp_path_factory.mktemp("maint") / "ws", env=maintaining(stub))
    try:
        yield running
    finally:
        running.stop()


async def test_an_event_becomes_user_md_and_comes_back_through_recall(
    daemon: RunningIndexer, stub: LLMStub
) -> None:
    answer = {"action": "replace", "reason": "a stated preference", "content": PROFILE}
    stub.run([say(json.dumps(answer))])
    day = "events/2026/11/29.md"
    async with daemon.client() as client:
        event = "# Events\n\n## Event\n\n- title: Drinks\n\nI really prefer green tea to coffee.\n"
        await client.call_tool("append", {"lang": "en", "path": day, "content": event})
        user = daemon.workspace / "memory/languages/en/vault/USER.md"
        wait_for(user.exists, 20, what="USER.md from the scheduler")
        assert user.read_text().endswith(PROFILE)
        prompt = stub.requests[0]["messages"][1]["content"]
        assert "I really prefer green tea to coffee." in prompt

        result = await client.call_tool(
            "recall", {"lang": "en", "query": "what should I drink?", "budget_tokens": 400}
        )
    recalled = result.structured_content
    assert recalled["sources"][0]["path"] == "USER.md"
    assert "> - Prefers green tea to coffee." in recalled["block"] and recalled["tokens"] <= 400

    base = daemon.url.removesuffix("/mcp")
    with httpx2.Client(base_url=base) as http:
        response = http.post(
            "/api/v1/en/recall", json={"query": "what should I drink?", "budget_tokens": 400}
        )
    assert response.status_code == 200 and response.json() == recalled
    with httpx2.Client(base_url=base) as http:
        written = http.get("/api/v1/en/history/USER.md").json()["versions"][-1]
    assert (written["actor"], written["reason"]) == ("job:maintenance", "maintenance:user_profile")

    command = ["maintain", "--workspace", str(daemon.workspace), "--status", "--json"]
    status = subprocess.run(
        [sys.executable, "-m", "indexer", *command],
        capture_output=True,
        text=True,
        env={**os.environ, **QUIET_ENV},
        timeout=60,
        check=True,
    )
    row = {row["task"]: row for row in json.loads(status.stdout)}["user_profile"]
    # The start's first check and the event's own (heard once its append is indexed) may
    # both run: the second then finds the event log unchanged since the replace.
    assert (row["last_action"], row["reason"]) in (
        ("replace", "a stated preference"),
        ("skip", "the event log is unchanged since the last success"),
    ), row
    assert row["last_success"] and row["last_error"] is None
    assert Path(daemon.workspace / ".indexer/maintenance-state.json").exists()


def test_a_stop_while_the_model_thinks_is_no_failure(tmp_path: Path, stub: LLMStub) -> None:
    """The stop closed the model's connections before it cancelled the jobs: the run in
    flight failed ("Connection error"), was recorded as the model's failure, and the
    next start waited an hour to retry it."""
    ws = tmp_path / "ws"
    day = ws / "memory/languages/en/vault/events/2026/11/29.md"
    day.parent.mkdir(parents=True)
    day.write_text("# Events\n\n## Event\n\n- title: Drinks\n\nI prefer green tea.\n")
    wait_for(lambda: not stub.in_flight, 30, what="the stub idle")
    stub.delay = 30.0
    running = start_indexer(ws, env=maintaining(stub))
    try:
        wait_for(lambda: stub.in_flight > 0, 30, what="maintenance asking the model")
        assert running.stop() == 0
    finally:
        stub.delay = 0.0
        running.stop()
    log = running.log()
    assert "Connection error" not in log and "failed" not in log, log
    state = ws / ".indexer/maintenance-state.json"
    assert not state.exists() or '"error"' not in state.read_text(), state.read_text()


async def test_without_a_model_a_tagged_event_reaches_user_md_and_recall(tmp_path: Path) -> None:
    """The deterministic path in the daemon's scheduler: an event the Memory Writer logs
    with a ``preference`` tag is a line of USER.md, which recall brings back."""
    env = {
        "INDEXER_MAINTENANCE_USER_PROFILE": "1",
        "INDEXER_MAINTENANCE_PROJECT_REVIEW": "1",
        "INDEXER_MAINTENANCE_MIN_INTERVAL_HOURS": "0",
        "INDEXER_MAINTENANCE_DEBOUNCE_SECONDS": "0.2",
        "INDEXER_SUMMARIES": "0",
    }
    running = start_indexer(tmp_path / "ws", env=env)
    try:
        async with running.client() as client:
            event = (
                "# Events\n\n## Event\n\n- time: 2026-11-29T10:00:00+01:00\n- title: Drinks\n"
                "- tags: preference\n- entry: e1\n\nGreen tea, never coffee. Mornings only.\n"
            )
            day = {"lang": "en", "path": "events/2026/11/29.md", "content": event}
            await client.call_tool("append", day)
            user = running.workspace / "memory/languages/en/vault/USER.md"
            wait_for(user.exists, 20, what="USER.md from the scheduler, without a model")
            assert user.read_text(encoding="utf-8").endswith(
                "# User profile\n\n## Preferences\n\n- Drinks: Green tea, never coffee."
                " Mornings only. (2026-11-29)\n"
            )
            result = await client.call_tool(
                "recall", {"lang": "en", "query": "what should I drink?", "budget_tokens": 400}
            )
        recalled = result.structured_content
        assert recalled["sources"][0]["path"] == "USER.md"
        assert "Green tea, never coffee." in recalled["block"]
        assert not (running.workspace / "memory/languages/en/vault/PROJECT.md").exists()
    finally:
        running.stop()
