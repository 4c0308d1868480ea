"""The maintenance scheduler on the real jobs thread: runs after event writes (debounced),
periodic checks that do not run unchanged inputs, and never two runs of one task at once."""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.indexer_process import wait_for
from helpers.llm_stub import LLMStub, running_llm_stub, say

from indexer.index.service import NoteIndex
from indexer.jobs.llm import JobModel, ModelSettings
from indexer.jobs.maintenance import Maintenance, MaintenanceSettings
from indexer.jobs.maintenance_state import StateFile
from indexer.jobs.runner import JobRunner
from indexer.jobs.scheduler import MaintenanceScheduler
from indexer.settings import default_prompts_dir
from indexer.vault.sandbox import Sandbox
from indexer.vault.vault import Vault
from shared.workspace import Workspace

NONE = say('{"action": "none", "reason": "nothing new"}')


@pytest.fixture(scope="module")
def stub() -> Iterator[LLMStub]:
    with running_llm_stub() as running:
        yield running


class Daemon:
    """What ``build_core`` wires, on a temporary workspace: vault -> index -> scheduler."""

    def __init__(self, root: Path, stub: LLMStub, tasks: set[str], **timing: float) -> None:
        self.ws = Workspace(root)
        self.vault = Vault(Sandbox(self.ws), max_file_bytes=1 << 20)
        self.index = NoteIndex(self.ws)
        self.index.open()
        self.vault.listeners.append(self.index.note_changed)
        self.model = JobModel(ModelSettings(model="stub", base_url=stub.base_url, timeout=10))
        self.maintenance = Maintenance(
            MaintenanceSettings(enabled=frozenset(tasks), min_interval_hours=0),
            state=StateFile(self.ws.maintenance_state),
            vault=self.vault,
            index=self.index,
            model=self.model,
            prompts_dir=default_prompts_dir(),
        )
        self.jobs = JobRunner()
        self.scheduler = MaintenanceScheduler(
            lambda: self.maintenance, self.jobs, tasks=self.maintenance.enabled_tasks, **timing
        )
        self.index.change_listeners.append(self.scheduler.on_change)
        self.events = 0

    def event(self, text: str = "") -> None:
        self.events += 1
        self.vault.append("en", "events/2026/11/29.md", f"\n## Event\n\n{text or self.events}\n")

    def state(self) -> dict[str, Any]:
        try:
            return json.loads(self.ws.maintenance_state.read_text())
        except FileNotFoundError:
            return {}

    def stop(self) -> None:
        self.jobs.submit(self.model.close()).result(10)
        self.jobs.stop()
        self.index.close()


@pytest.fixture
def make(tmp_path: Path, stub: LLMStub) -> Iterator[Any]:
    made: list[Daemon] = []
    stub.delay = 0.0

    def build(tasks: set[str], **timing: float) -> Daemon:
        daemon = Daemon(tmp_path / f"ws{len(made)}", stub, tasks, **timing)
        made.append(daemon)
        return daemon

    yield build
    for daemon in made:
        daemon.stop()
    stub.delay = 0.0


def test_nothing_starts_when_no_task_is_enabled(make: Any) -> None:
    daemon = make(set(), check_seconds=0.05, debounce_seconds=0.01)
    assert daemon.scheduler.start() is False
    daemon.event()  # heard, ignored
    assert daemon.scheduler.checks == 0


def test_event_writes_trigger_one_debounced_run(make: Any, stub: LLMStub) -> None:
    stub.run([NONE])
    daemon = make({"user_profile"}, check_seconds=3600, debounce_seconds=0.3)
    daemon.event("first")
    assert daemon.scheduler.start()
    wait_for(lambda: daemon.state().get("en"), 10, what="the first (start-up) run")
    assert len(stub.requests) == 1
    answer = {"action": "replace", "reason": "r", "content": "# User profile\n\n- Burst.\n"}
    stub.run([say(json.dumps(answer))])
    for _ in range(5):  # a burst of writes: one check once they are quiet
        daemon.event()
    user = daemon.ws.vault_dir("en") / "USER.md"
    wait_for(user.exists, 10, what="USER.md written after the event writes")

    def recorded() -> bool:  # the state is saved once the file is written
        return daemon.state()["en"]["user_profile"]["last_action"] == "replace"

    wait_for(recorded, 10, what="the run recorded in the state file")
    assert "- Burst." in user.read_text()
    assert len(stub.requests) == 1 and daemon.scheduler.checks == 2


def test_an_event_note_written_again_with_its_bytes_starts_no_check(make: Any) -> None:
    """A checkout or a touch of a day file leaves its text as it was (told "rewritten"):
    nothing for maintenance to look at; a real change is."""
    daemon = make({"user_profile"}, check_seconds=3600, debounce_seconds=30)
    daemon.jobs.start()  # (the loop the changes are heard on; no check runs: not started)
    daemon.scheduler._started = True
    daemon.scheduler.on_change("en", "events/2026/11/29.md", "rewritten")
    daemon.scheduler.on_change("fr", "events/2026/11/29.md", "watcher")  # (heard after)
    wait_for(lambda: "fr" in daemon.scheduler._pending, 10, what="the change heard")
    assert "en" not in daemon.scheduler._pending


def test_periodic_checks_do_not_rerun_unchanged_inputs(make: Any, stub: LLMStub) -> None:
    stub.run([NONE])
    daemon = make({"user_profile"}, check_seconds=0.1, debounce_seconds=10)
    daemon.event()
    daemon.scheduler.start()
    wait_for(lambda: daemon.scheduler.checks >= 5, 10, what="five periodic checks")
    assert len(stub.requests) == 1
    assert daemon.state()["en"]["user_profile"]["reason"].startswith("the event log is unchanged")


def test_runs_of_one_task_never_overlap(make: Any, stub: LLMStub) -> None:
    ends: dict[str, list[float]] = {"USER.md": [], "PROJECT.md": []}

    def script(request: dict, turn: int) -> dict:
        task = "USER.md" if "USER.md" in request["messages"][1]["content"][:200] else "PROJECT.md"
        ends[task].append(time.monotonic())
        return NONE

    stub.run(script)
    stub.delay = 0.3
    daemon = make({"user_profile", "project_review"}, check_seconds=0.05, debounce_seconds=0.01)
    daemon.event()
    daemon.scheduler.start()
    stop = threading.Event()

    def writer() -> None:  # inputs change all the time: every check finds the tasks due
        while not stop.wait(0.03):
            daemon.event()

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        wait_for(lambda: min(len(v) for v in ends.values()) >= 3, 20, what="three runs each")
    finally:
        stop.set()
        thread.join()
    assert daemon.scheduler.checks > 10
    assert stub.max_in_flight <= 2  # one per task at most
    for times in ends.values():
        gaps = [b - a for a, b in itertools.pairwise(times)]
        assert min(gaps) >= 0.28, gaps  # each run began after the previous one ended
