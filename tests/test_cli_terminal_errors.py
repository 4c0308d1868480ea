"""A refusal's line on a terminal shows the control characters of what it quotes (a
typed workspace path, an argument it does not know), never obeys them: ``indexer status
--workspace $'/tmp/\\e]0;title\\a'`` retitled the window from the error it printed (the
message quoted the path as typed), and argparse's "unrecognized arguments" wrote an
unknown word as it came. A pipe still gets the text as it is."""

from __future__ import annotations

import contextlib
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

HOSTILE = "\x1b]0;PWNED\x07\x1b[2J"
INDEXER = [sys.executable, "-m", "indexer"]
AGENT = [sys.executable, "-m", "agent_client"]


def on_a_terminal(
    command: list[str], env: dict[str, str] | None = None, *, stdout: bool = False
) -> tuple[int, bytes]:
    """``command``'s exit status and what it wrote to stderr (or ``stdout``), a
    pseudo-terminal."""
    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            command,
            stdin=subprocess.DEVNULL,
            stdout=follower if stdout else subprocess.DEVNULL,
            stderr=subprocess.DEVNULL if stdout else follower,
            env={**os.environ, **(env or {})},
            timeout=60,
        )
        os.close(follower)
        follower = -1
        shown = b""
        with contextlib.suppress(OSError):  # (EIO once the writer is gone)
            while chunk := os.read(leader, 65536):
                shown += chunk
    finally:
        os.close(leader)
        if follower != -1:
            os.close(follower)
    return done.returncode, shown


@pytest.mark.parametrize(
    "command",
    [
        [*INDEXER, "status", "--workspace", f"/tmp/{HOSTILE}"],
        [*INDEXER, "search", "--workspace", f"/tmp/{HOSTILE}", "--lang", "en", "q"],
        [*INDEXER, "status", "--workspace", "/tmp", HOSTILE],  # (unrecognized)
        [*INDEXER, "search", "--lang", "en", f"--bogus={HOSTILE}", "q"],
        [*AGENT, "history", "--workspace", f"/tmp/{HOSTILE}", "--lang", "en", "a.md"],
        [*AGENT, "read", "--workspace", "/tmp", "--lang", "en", "a.md", HOSTILE],
    ],
    ids=[
        "indexer workspace",
        "search workspace",
        "unrecognized",
        "unknown option",
        "agent workspace",
        "agent unrecognized",
    ],
)
def test_a_refusal_on_a_terminal_shows_the_escapes_it_quotes(
    tmp_path: Path, command: list[str]
) -> None:
    code, shown = on_a_terminal(command, {"INDEXER_WORKSPACE": "", "AGENT_CLIENT_WORKSPACE": ""})
    assert code in (1, 2, 3), shown  # (3: agent-client finds no indexer)
    assert b"\x1b" not in shown and b"\x07" not in shown, shown
    assert b"\\x1b]0;PWNED\\x07" in shown, shown


def test_a_pipe_gets_the_refusal_as_it_is() -> None:
    done = subprocess.run(
        [*INDEXER, "status", "--workspace", f"/tmp/{HOSTILE}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and f"/tmp/{HOSTILE}" in done.stderr


HOLD_SERVING_LOCK = """
import sys, time
from pathlib import Path
from indexer.workspace_lock import workspace_lock
from shared.workspace import Workspace
with workspace_lock(Workspace(Path(sys.argv[1])), serving=True):
    print("held", flush=True)
    time.sleep(60)
"""


@pytest.mark.e2e
def test_summarize_notice_of_a_server_that_does_not_answer_shows_the_escapes(
    tmp_path: Path,
) -> None:
    """``summarize`` beside a server holding the workspace that does not answer printed
    "summarize: the indexer holding <path> does not answer..." with the path's escapes
    raw (a notice, not a refusal: it went on to summarize here)."""
    workspace = tmp_path / f"w{HOSTILE}"
    (workspace / "en").mkdir(parents=True)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_SERVING_LOCK, str(workspace)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        _, shown = on_a_terminal(
            [*INDEXER, "summarize", "--workspace", str(workspace)], {"INDEXER_MODEL": ""}
        )
    finally:
        holder.kill()
        holder.communicate()
    assert b"does not answer" in shown, shown  # (then: no index to read here, exit 1)
    assert b"\x1b" not in shown and b"\x07" not in shown, shown
    assert b"\\x1b]0;PWNED\\x07" in shown, shown


def test_status_on_a_terminal_shows_the_escapes_of_the_workspace_path(tmp_path: Path) -> None:
    """``status`` printed "workspace: <path>" with the path's escapes raw."""
    workspace = tmp_path / f"w{HOSTILE}"
    (workspace / "en").mkdir(parents=True)
    code, shown = on_a_terminal([*INDEXER, "status", "--workspace", str(workspace)], stdout=True)
    assert code == 0 and b"server: not running" in shown, shown
    assert b"\x1b" not in shown and b"\x07" not in shown, shown
    assert b"\\x1b]0;PWNED\\x07" in shown, shown
