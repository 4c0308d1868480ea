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


def on_a_terminal(command: list[str], env: dict[str, str] | None = None) -> tuple[int, bytes]:
    """``command``'s exit status and what it wrote to stderr, a pseudo-terminal."""
    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=follower,
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
