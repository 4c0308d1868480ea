"""USER.md and PROJECT.md are no more open to other users than what they quote: the
event log's day files (and their folders) and, with a model, the notes its read-only
tools returned. Made 0644 as any new file, a USER.md distilled from a 0600 day file
told every local user what the person had kept to themselves."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.history import history_versions
from helpers.indexer_process import QUIET_ENV, start_indexer, wait_for
from helpers.llm_stub import LLMStub, running_llm_stub, say, tool_call

pytestmark = pytest.mark.e2e
EVENT = (
    "# Events\n\n## Event\n\n- time: 2026-11-29T10:00:00+01:00\n- title: Health\n"
    "- tags: preference\n\nMy therapist is Dr. Smith, on Tuesdays.\n"
)
ENABLED = {
    "INDEXER_MAINTENANCE_USER_PROFILE": "1",
    "INDEXER_MAINTENANCE_PROJECT_REVIEW": "1",
    "INDEXER_MAINTENANCE_MIN_INTERVAL_HOURS": "0",
    "INDEXER_MAINTENANCE_DEBOUNCE_SECONDS": "0.2",
    "INDEXER_SUMMARIES": "0",
}


def vault_of(ws: Path) -> Path:
    return ws / "memory/languages/en/vault"


def run_maintain(ws: Path) -> subprocess.CompletedProcess[str]:
    """``indexer maintain --force`` without a model, under umask 022 (files 0644)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("INDEXER_LLM")}
    return subprocess.run(
        [sys.executable, "-m", "indexer", "maintain", "--workspace", str(ws), "--force"],
        capture_output=True,
        text=True,
        env={**env, **QUIET_ENV, **ENABLED},
        timeout=120,
        preexec_fn=lambda: os.umask(0o022),
    )


def maintain(ws: Path) -> str:
    """``run_maintain``, which must succeed: its output."""
    done = run_maintain(ws)
    assert done.returncode == 0, done.stderr
    return done.stdout


def day(ws: Path, rel: str = "events/2026/11/29.md", text: str = EVENT) -> Path:
    path = vault_of(ws) / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def mode_of(path: Path) -> int:
    return path.stat().st_mode & 0o777


@pytest.mark.parametrize(
    ("file_mode", "folder_mode", "expected"),
    [(0o600, 0o755, 0o600), (0o640, 0o755, 0o640), (0o644, 0o700, 0o600), (0o644, 0o755, 0o644)],
)
def test_a_distilled_file_is_no_more_open_than_the_day_files_it_quotes(
    tmp_path: Path, file_mode: int, folder_mode: int, expected: int
) -> None:
    ws = tmp_path / "ws"
    path = day(ws)
    path.chmod(file_mode)
    (vault_of(ws) / "events").chmod(folder_mode)
    assert "user_profile: replace" in maintain(ws)
    user = vault_of(ws) / "USER.md"
    assert "Dr. Smith" in user.read_text(encoding="utf-8")
    assert mode_of(user) == expected
    (version,) = history_versions(ws, "en", "USER.md")
    assert (version["actor"], version["reason"]) == ("job:maintenance", "maintenance:user_profile")


def test_an_existing_file_is_narrowed_never_widened(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    user = vault_of(ws) / "USER.md"
    day(ws).chmod(0o600)
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text("# User profile\n", encoding="utf-8")
    user.chmod(0o644)
    assert "user_profile: replace" in maintain(ws)
    assert mode_of(user) == 0o600 and "Dr. Smith" in user.read_text(encoding="utf-8")

    other = tmp_path / "other"  # a person's 0600 USER.md stays so, from open day files
    user = vault_of(other) / "USER.md"
    day(other).chmod(0o644)
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text("# User profile\n", encoding="utf-8")
    user.chmod(0o600)
    assert "user_profile: replace" in maintain(other)
    assert mode_of(user) == 0o600


@pytest.fixture(scope="module")
def stub() -> Iterator[LLMStub]:
    with running_llm_stub() as running:
        yield running


def test_a_note_the_model_read_narrows_the_file_it_writes(tmp_path: Path, stub: LLMStub) -> None:
    """The day file is open; the model reads a 0600 note through its read tool and quotes
    it in USER.md: a server's run, under umask 022."""
    ws = tmp_path / "ws"
    day(ws, text=EVENT.replace("Dr. Smith", "a doctor"))
    secret = vault_of(ws) / "private/health.md"
    secret.parent.mkdir(parents=True)
    secret.write_text("# Health\n\nDiagnosis: kept private.\n", encoding="utf-8")
    secret.chmod(0o600)
    profile = "# User profile\n\n- Diagnosis: kept private.\n"
    answer = {"action": "replace", "reason": "read the health note", "content": profile}

    def script(request: dict, turn: int) -> dict:
        if "USER.md" not in request["messages"][1]["content"]:
            return say(json.dumps({"action": "none", "reason": "not this task"}))
        if request["messages"][-1]["role"] != "tool":
            return tool_call("read", path="private/health.md")
        return say(json.dumps(answer))

    stub.run(script)
    old = os.umask(0o022)
    try:
        env = {**ENABLED, "INDEXER_LLM_MODEL": "stub", "INDEXER_LLM_BASE_URL": stub.base_url}
        running = start_indexer(ws, env=env)
    finally:
        os.umask(old)
    try:
        user = vault_of(ws) / "USER.md"
        wait_for(user.exists, 30, what="USER.md from the scheduler")
        assert "Diagnosis: kept private." in user.read_text(encoding="utf-8")
        assert mode_of(user) == 0o600
    finally:
        running.stop()


@pytest.mark.skipif(os.geteuid() != 0, reason="only root may give a file to another user")
def test_a_narrowed_file_keeps_its_owner(tmp_path: Path) -> None:
    """An indexer run as root (a container's, a service's) narrowing a person's USER.md
    made it root's, 0600: its owner could no longer read their own profile."""
    ws = tmp_path / "ws"
    day(ws).chmod(0o600)
    user = vault_of(ws) / "USER.md"
    user.write_text("# User profile\n", encoding="utf-8")
    user.chmod(0o644)
    os.chown(user, 4321, 4322)
    assert "user_profile: replace" in maintain(ws)
    status = user.stat()
    assert "Dr. Smith" in user.read_text(encoding="utf-8")
    assert (status.st_uid, status.st_gid, status.st_mode & 0o777) == (4321, 4322, 0o600)


def test_a_read_only_file_is_not_narrowed_over(tmp_path: Path) -> None:
    """A person's ``chmod a-w USER.md`` is left as it is, as every write leaves one: the
    narrowed write skipped the read-only check a plain write makes."""
    ws = tmp_path / "ws"
    day(ws).chmod(0o600)
    user = vault_of(ws) / "USER.md"
    user.write_text("# User profile\n\nMine.\n", encoding="utf-8")
    user.chmod(0o444)
    done = run_maintain(ws)
    assert "read-only" in done.stdout + done.stderr, (done.stdout, done.stderr)
    assert user.read_text(encoding="utf-8") == "# User profile\n\nMine.\n"
    assert mode_of(user) == 0o444
