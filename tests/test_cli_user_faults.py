"""What a new user meets at the ``indexer`` command line, each found by an acceptance
pass: a closed standard stream, a ``~user`` that names no one, a path with spaces in a
command the message tells them to run. Each is one plain line (or a warning), never a
traceback, and nothing changes on disk."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.indexer_process import QUIET_ENV, wait_for

from indexer.cli import main


def snapshot(root: Path) -> dict[str, bytes | None]:
    """Every file and folder under ``root`` (None for a folder)."""
    if not root.exists():
        return {}
    return {
        str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None)
        for p in sorted(root.rglob("*"))
    }


def indexer(*args: str, shell: str = "", prefix: list[str] | None = None, **kw: object):
    """``indexer ARGS`` as a process; ``shell``: redirections its shell applies first."""
    words = " ".join(shlex.quote(w) for w in [*(prefix or []), sys.executable, "-m", "indexer"])
    line = f"exec {words} {' '.join(shlex.quote(a) for a in args)} {shell}"
    env = {**os.environ, **QUIET_ENV}
    env.pop("INDEXER_WORKSPACE", None)
    return subprocess.run(
        ["sh", "-c", line], capture_output=True, text=True, env=env, timeout=60, **kw
    )


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    vault = tmp_path / "my ws é" / "memory" / "languages" / "en" / "vault"
    vault.mkdir(parents=True)
    (vault / "a.md").write_text("---\ntitle: Hello\n---\nhello world\n")
    assert main(["reindex", "--workspace", str(vault.parents[3])]) == 0
    return vault.parents[3]


@pytest.mark.parametrize(
    "command",
    [
        ["status"],
        ["status", "--json"],
        ["search", "--lang", "en", "hello"],
        ["maintain", "--status"],
    ],
)
def test_a_closed_stdout_is_no_traceback(ws: Path, command: list[str]) -> None:
    """``indexer status >&-``: Python leaves ``sys.stdout`` None, and the final flush
    raised AttributeError with a traceback (exit 1)."""
    done = indexer(*command, "--workspace", str(ws), shell=">&- <&-")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""


def test_a_server_started_with_closed_streams_stops_cleanly(tmp_path: Path) -> None:
    """``indexer serve >&- <&-``: its lock files took descriptors 0 and 1 (where a stray
    write lands in them), and its stop ended in a traceback with status 1 (a supervisor's
    "failed": restarted)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    log = tmp_path / "serve.log"
    env = {**os.environ, **QUIET_ENV}
    line = f"exec {shlex.quote(sys.executable)} -m indexer serve --workspace {shlex.quote(str(ws))}"
    with open(log, "w") as err:
        proc = subprocess.Popen(["sh", "-c", line + " >&- <&-"], stderr=err, env=env)
    try:
        wait_for(lambda: (ws / "indexer.mcp.url").exists(), 30, what="the URL file")
        fds = {fd: os.readlink(f"/proc/{proc.pid}/fd/{fd}") for fd in ("0", "1")}
        assert fds == {"0": os.devnull, "1": os.devnull}, fds
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0, log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "Traceback" not in log.read_text()


@pytest.mark.parametrize("command", [["status"], ["serve"], ["reindex"]])
def test_a_home_of_no_one_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    """``--workspace ~nosuchuser/w`` raised RuntimeError ("Could not determine home
    directory.") with a traceback."""
    before = snapshot(tmp_path)
    assert main([*command, "--workspace", "~no-such-user-h151/w"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "~no-such-user-h151" in err and "home" in err, err
    assert snapshot(tmp_path) == before


def test_the_command_a_message_suggests_can_be_pasted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A workspace named with a space was suggested as ``indexer serve --workspace
    /x/my ws``, which a shell runs as three words (and for config-snippet alike)."""
    missing = tmp_path / "my missing ws"
    assert main(["status", "--workspace", str(missing)]) == 2
    err = capsys.readouterr().err
    suggested = err.split("`")[1]
    assert shlex.split(suggested) == ["indexer", "serve", "--workspace", str(missing)]
    there = tmp_path / "it's here"
    there.mkdir()
    assert main(["config-snippet", "--workspace", str(there)]) == 1
    err = capsys.readouterr().err
    suggested = err.split("(", 1)[1].rsplit(")", 1)[0]
    assert shlex.split(suggested) == ["indexer", "serve", "--workspace", str(there)]
    assert not missing.exists() and list(there.iterdir()) == []
