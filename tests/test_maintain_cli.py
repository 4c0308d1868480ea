"""``indexer maintain``: runs against the LLM stub, refusals (exit 2) and the status table."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx2
import pytest
from helpers.history import history_store
from helpers.indexer_process import start_indexer
from helpers.llm_stub import LLMStub, RawReply, last_tool_result, running_llm_stub, say, tool_call

from indexer.cli import main

REPLACE = say(json.dumps({"action": "replace", "reason": "new habit", "content": "# U\n\n- A.\n"}))


@pytest.fixture(scope="module")
def stub() -> Iterator[LLMStub]:
    with running_llm_stub() as running:
        yield running


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for key in (
        "INDEXER_WORKSPACE",
        "INDEXER_LLM_MODEL",
        "INDEXER_MAINTENANCE_USER_PROFILE",
        "INDEXER_MAINTENANCE_PROJECT_REVIEW",
    ):
        monkeypatch.delenv(key, raising=False)
    root = tmp_path / "ws"
    day = root / "memory/languages/en/vault/events/2026/11/29.md"
    day.parent.mkdir(parents=True)
    day.write_text("# Events\n\n## Event\n\nPrefers tea.\n", encoding="utf-8")
    return root


def model_flags(stub: LLMStub) -> list[str]:
    return ["--llm-model", "stub", "--llm-base-url", stub.base_url]


def test_a_run_then_the_status_table(
    ws: Path, stub: LLMStub, capsys: pytest.CaptureFixture
) -> None:
    stub.run([REPLACE])
    args = ["maintain", "--workspace", str(ws), "--maintenance-user-profile", *model_flags(stub)]
    assert main(args) == 0
    assert capsys.readouterr().out == "en user_profile: replace (new habit)\n"
    assert (ws / "memory/languages/en/vault/USER.md").read_text().endswith("# U\n\n- A.\n")
    assert main(args) == 0  # nothing changed since: skipped, nothing called
    assert "skip (the event log is unchanged" in capsys.readouterr().out
    assert len(stub.requests) == 1

    assert main([*args, "--status"]) == 0
    out = capsys.readouterr().out
    assert f"state: {ws / '.indexer/maintenance-state.json'}" in out and "model: stub" in out
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith("lang"))
    assert header.split() == [
        "lang", "task", "enabled", "last_action", "last_run", "last_success", "due",
    ]  # fmt: skip
    row = next(line for line in lines if line.split()[:2] == ["en", "user_profile"])
    assert row.split()[2:4] == ["yes", "skip"] and row.split()[-1] == "no"
    assert "reason: the event log is unchanged since the last success" in out
    assert "now: disabled (set INDEXER_MAINTENANCE_PROJECT_REVIEW=1)" in out

    assert main(["maintain", "--workspace", str(ws), "--status", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    user = next(r for r in rows if r["task"] == "user_profile")
    assert user["last_action"] == "skip" and user["enabled"] is False
    assert user["last_success"] and user["last_digest"]


def test_force_and_a_failing_run(ws: Path, stub: LLMStub, capsys: pytest.CaptureFixture) -> None:
    stub.run([REPLACE])
    base = ["maintain", "--workspace", str(ws), "--lang", "en", "--task", "user_profile"]
    args = [*base, "--maintenance-user-profile", *model_flags(stub)]
    assert main(args) == 0
    stub.run([say("not json")])
    assert main([*args, "--force"]) == 1  # forced past the unchanged digest, then failed
    out = capsys.readouterr().out
    assert "en user_profile: error (the run failed): malformed answer:" in out
    assert "'not json'" in out  # (what the model said instead, to tell a prose answer)
    assert main([*base, "--status"]) == 0
    assert "last error: malformed answer:" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ([], "no maintenance task is enabled: set INDEXER_MAINTENANCE_USER_PROFILE=1"),
        (["--maintenance-user-profile", "--lang", "fr"], "there is no vault 'fr'"),
        (["--maintenance-user-profile", "--lang", ""], "'' is not a vault id"),  # not "all"
        (["--maintenance-min-interval-hours", "-1"], "--maintenance-min-interval-hours must"),
        (["--maintenance-min-interval-hours", "inf"], "--maintenance-min-interval-hours must"),
    ],
)
def test_refusals(ws: Path, capsys: pytest.CaptureFixture, extra: list[str], message: str) -> None:
    code = main(["maintain", "--workspace", str(ws), "--task", "user_profile", *extra])
    err = capsys.readouterr().err
    assert message in err and code == 2, err  # (a vault not there: bad usage, as a bad id)
    assert not (ws / ".indexer/maintenance-state.json").exists()


def served_model(stub: LLMStub, **more: str) -> dict[str, str]:
    """A server's environment with the stub as its model, its scheduler asleep (its
    first check after an hour: the test's command runs the tasks)."""
    quiet = {"INDEXER_SUMMARIES": "0", "INDEXER_MAINTENANCE_DEBOUNCE_SECONDS": "3600"}
    return {**quiet, "INDEXER_LLM_MODEL": "stub", "INDEXER_LLM_BASE_URL": stub.base_url, **more}


def test_beside_a_server_the_server_runs_the_tasks_with_its_model(
    ws: Path, stub: LLMStub, capsys: pytest.CaptureFixture
) -> None:
    """The server has a model, this shell none: the command ran the no-model path here
    (the model never asked) and recorded a success with the events' digest, so the
    server's scheduler left the model out until new events came. Now the server runs
    the tasks, with its settings and model, recorded as its own job's (SPEC:
    ``maintenance:<task>``), as its scheduler and a run with no server record them."""
    job = ("job:maintenance", "maintenance:user_profile")
    server = start_indexer(ws, env=served_model(stub, INDEXER_MAINTENANCE_USER_PROFILE="1"))
    try:
        stub.run([REPLACE])
        args = ["maintain", "--workspace", str(ws)]
        assert main([*args, "--maintenance-user-profile", "--force"]) == 0
        said = capsys.readouterr()
        assert said.out == "en user_profile: replace (new habit)\n"
        assert "indexer maintain: the running indexer runs the tasks" in said.err
        assert "model: stub" in said.err
        assert len(stub.requests) == 1 and "Prefers tea." in json.dumps(stub.requests[0])
        assert (ws / "memory/languages/en/vault/USER.md").read_text().endswith("# U\n\n- A.\n")
        with httpx2.Client(base_url=server.url.removesuffix("/mcp") + "/api/v1") as http:
            newest = http.get("/en/history/USER.md").json()["versions"][0]
            bad = http.post("/maintain", json={"task": "no_such_task"})
        assert (newest["actor"], newest["reason"]) == job, newest
        assert bad.status_code == 400 and "task must be one of" in bad.text
        # Its settings, not this shell's (no flag: the server's task runs; unchanged: skip).
        assert main([*args, "--json"]) == 0
        (outcome,) = json.loads(capsys.readouterr().out)
        assert outcome["action"] == "skip" and "unchanged" in outcome["reason"]
        assert len(stub.requests) == 1
        # The status shows the server's settings (this shell has neither task nor model).
        assert main([*args, "--status"]) == 0
        out = capsys.readouterr().out
        assert "model: stub" in out and "the running indexer's own settings" in out
        row = next(line for line in out.splitlines() if line.split()[:2] == ["en", "user_profile"])
        assert row.split()[2:4] == ["yes", "skip"]  # (the run above: unchanged)
    finally:
        server.stop()
    again = {"action": "replace", "reason": "newer habit", "content": "# U\n\n- B.\n"}
    stub.run([say(json.dumps(again))])
    flags = ["--maintenance-user-profile", *model_flags(stub), "--force"]
    assert main([*args, *flags]) == 0  # (no server: run here, with this shell's settings)
    with history_store(ws) as store:
        alone = store.versions("en", "USER.md", 1)[0]
        assert (alone.actor, alone.reason) == job and store.content(alone).endswith(b"- B.\n")
    assert main(["maintain", "--workspace", str(ws), "--status"]) == 0
    assert "running indexer" not in capsys.readouterr().out
    assert main(["maintain", "--workspace", str(ws), "--status", "--lang", "fr"]) == 2
    said = capsys.readouterr().err  # (not "no vaults yet")
    assert "there is no vault 'fr'" in said and "(its vaults: en)" in said, said


def test_beside_a_server_without_the_task_nothing_runs(
    ws: Path, stub: LLMStub, capsys: pytest.CaptureFixture
) -> None:
    """The task is enabled in this shell, not in the server: the server's settings say
    no, so nothing is asked, written or recorded (it ran here with the shell's). A token
    file changed since the server started is named, where the server "does not answer"."""
    day = ws / "memory/languages/en/vault/events/2026/12/01.md"
    day.parent.mkdir(parents=True)
    day.write_text(
        "# Events 2026-12-01\n\n## Event\n\n- time: 2026-12-01T09:00:00+00:00\n"
        "- title: Answers\n- tags: preference\n- entry: e1\n\nShort answers.\n",
        encoding="utf-8",
    )
    stub.run([REPLACE])
    server = start_indexer(ws, "--token", "its-token", env=served_model(stub))
    try:
        args = ["maintain", "--workspace", str(ws), "--maintenance-user-profile", "--force"]
        assert main(args) == 2
        err = capsys.readouterr().err
        assert "no maintenance task is enabled in the running indexer" in err
        assert "INDEXER_MAINTENANCE_USER_PROFILE=1" in err
        (ws / "indexer.mcp.token").write_text("another-token\n", encoding="utf-8")
        for more in ([], ["--status"]):
            assert main([*args, *more]) == 1
            err = capsys.readouterr().err
            assert f"refused the token in {ws / 'indexer.mcp.token'}" in err, err
            assert "does not answer" not in err
    finally:
        server.stop()
    assert not (ws / "memory/languages/en/vault/USER.md").exists()
    assert not (ws / ".indexer/maintenance-state.json").exists()
    assert stub.requests == []


def test_a_workspace_never_served_gives_the_model_search(
    ws: Path, stub: LLMStub, capsys: pytest.CaptureFixture
) -> None:
    """With no server and no index yet, the model was offered ``read``, ``find`` and
    ``grep`` only: the index was opened read-only or not at all. It is built first (as
    ``indexer search`` does), so ``search`` is offered and finds what is on disk."""
    note = ws / "memory/languages/en/vault/items/drinks.md"
    note.parent.mkdir(parents=True)
    note.write_text("# Drinks\n\nGreen tea every morning.\n", encoding="utf-8")
    assert not (ws / ".indexer").exists()
    stub.run([tool_call("search", query="green tea"), REPLACE])
    args = ["maintain", "--workspace", str(ws), "--maintenance-user-profile", *model_flags(stub)]
    assert main(args) == 0
    assert capsys.readouterr().out == "en user_profile: replace (new habit)\n"
    offered = {tool["function"]["name"] for tool in stub.requests[0]["tools"]}
    assert offered == {"read", "find", "grep", "search"}
    assert "items/drinks.md" in last_tool_result(stub.requests[1])


def test_without_a_model_the_tagged_entries_are_added(
    ws: Path, capsys: pytest.CaptureFixture
) -> None:
    day = ws / "memory/languages/en/vault/events/2026/12/01.md"
    day.parent.mkdir(parents=True, exist_ok=True)
    day.write_text(
        "# Events 2026-12-01\n\n## Event\n\n- time: 2026-12-01T09:00:00+00:00\n"
        "- title: Answers\n- tags: preference\n- entry: e1\n\nShort answers, in English.\n",
        encoding="utf-8",
    )
    base = ["maintain", "--workspace", str(ws), "--maintenance-user-profile"]
    assert main(base) == 0
    assert "en user_profile: replace (without a model: 1 tagged entry added" in (
        capsys.readouterr().out
    )
    user = (ws / "memory/languages/en/vault/USER.md").read_text(encoding="utf-8")
    assert user.endswith("# User profile\n\n## Preferences\n\n- Answers: Short answers, in"
                         " English. (2026-12-01)\n")  # fmt: skip
    assert main([*base, "--status"]) == 0
    assert "model: none: the tagged entries are added" in capsys.readouterr().out


def busy(seconds: str) -> RawReply:
    """A 429 whose ``Retry-After`` asks for ``seconds``."""
    body = {"error": {"message": "slow down", "type": "rate_limit", "code": None}}
    return RawReply(429, body, headers={"retry-after": seconds})


def test_a_short_retry_after_is_waited_out_and_the_run_tried_once_more(
    ws: Path, stub: LLMStub, capsys: pytest.CaptureFixture
) -> None:
    """A 429 ended the run at once (and the next task asked again at once): the endpoint's
    second of quiet was not kept, nor was the run tried again after it."""
    times: list[float] = []

    def script(request: dict, turn: int) -> Any:
        times.append(time.monotonic())
        return busy("1") if turn == 0 else REPLACE

    stub.run(script)
    args = ["maintain", "--workspace", str(ws), "--lang", "en", "--task", "user_profile"]
    assert main([*args, "--maintenance-user-profile", *model_flags(stub)]) == 0
    assert len(times) == 2 and times[1] - times[0] >= 1.0
    assert "en user_profile: replace (new habit)" in capsys.readouterr().out


def test_a_long_retry_after_stops_the_run_and_names_when_to_retry(
    ws: Path, stub: LLMStub, capsys: pytest.CaptureFixture
) -> None:
    """A Retry-After of an hour: the command stops at once, saying when to try again, and
    nobody (another task, the next command, the daemon) asks before then."""
    stub.run([busy("3600")])
    args = ["maintain", "--workspace", str(ws), "--lang", "en", "--maintenance-user-profile"]
    args += ["--maintenance-project-review", *model_flags(stub)]
    started = time.monotonic()
    assert main(args) == 1
    assert time.monotonic() - started < 10 and len(stub.requests) == 1
    out = capsys.readouterr().out
    said = re.search(r"the model endpoint asks to retry after (\S+)\)", out)
    assert said is not None, out
    when = datetime.fromisoformat(said[1])
    assert timedelta(minutes=59) < when - datetime.now(UTC) <= timedelta(hours=1, seconds=2)
    assert "project_review: skip (not run: the model gave no answer" in out
    assert main([*args, "--force"]) == 1  # a forced run waits too, and says till when
    assert f"asked not to be asked before {said[1]}" in capsys.readouterr().out
    assert len(stub.requests) == 1
