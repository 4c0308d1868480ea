"""What a new user meets at the ``indexer`` command line, each found by an acceptance
pass: a closed standard stream, a ``~user`` that names no one, a path with spaces in a
command the message tells them to run, a workspace whose state belongs to another user,
a garbled URL file and a mistyped ``INDEXER_*`` variable. Each is one plain line (or a
warning), never a traceback, and nothing changes on disk."""

from __future__ import annotations

import errno
import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.indexer_process import QUIET_ENV, spawn_indexer, wait_for
from helpers.permissions import as_plain_user

from indexer.cli import exit_code, main
from indexer.settings import unknown_settings
from indexer.vault.oserrors import describe
from shared.errors import ForbiddenPathError


def snapshot(root: Path) -> dict[str, bytes | None]:
    """Every file and folder under ``root`` (None for a folder), but SQLite's shared
    memory and log files (a reader writes its marks there, and an empty log)."""
    if not root.exists():
        return {}
    return {
        str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None)
        for p in sorted(root.rglob("*"))
        if not p.name.endswith(("-shm", "-wal"))
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


def test_the_agent_client_says_a_home_of_no_one_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The agent client's settings expanded ``~user`` alike: a RuntimeError traceback."""
    from agent_client.cli import main as agent_main

    assert agent_main(["search", "--workspace", "~no-such-user-h151/w", "--lang", "en", "x"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "~no-such-user-h151" in err, err


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


@pytest.mark.parametrize(
    "command",
    [
        ["status"],
        ["search", "--lang", "en", "hello"],
        ["maintain", "--status"],
        ["history", "--lang", "en", "a.md"],
    ],
)
def test_a_workspace_of_another_user_is_said_in_words(ws: Path, command: list[str]) -> None:
    """Its state kept from this user (a server run by root or a service user, the state
    folder 0700): "[Errno 13] Permission denied: '.../index.sqlite'" said neither what
    nor what to do."""
    before = snapshot(ws)
    os.chmod(ws / ".indexer", 0)
    try:
        done = indexer(*command, "--workspace", str(ws), prefix=as_plain_user())
    finally:
        os.chmod(ws / ".indexer", 0o700)
    assert done.returncode == 1, done.stdout + done.stderr
    err = done.stderr
    assert err.count("\n") == 1 and "[Errno" not in err, err
    assert "permission denied" in err and str(ws / ".indexer") in err, err
    assert "run the command as" in err or "give that user the workspace" in err, err
    assert snapshot(ws) == before


def test_a_garbled_url_file_is_said_as_one(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A URL file of anything but one URL failed ``status`` altogether ("[Errno 22]
    indexer.mcp.url does not hold one URL"): status says it of the server and goes on."""
    (ws / "indexer.mcp.url").write_bytes(b"garbage\x00\xff\n")
    before = snapshot(ws)
    assert main(["status", "--workspace", str(ws)]) == 0
    out = capsys.readouterr().out
    assert "server: not running" in out and "does not hold one URL" in out, out
    assert "en: 1 note" in out
    assert main(["config-snippet", "--workspace", str(ws)]) == 1
    err = capsys.readouterr().err
    assert "[Errno" not in err and "indexer.mcp.url does not hold one URL" in err, err
    assert snapshot(ws) == before


def test_a_mistyped_setting_is_named_with_the_one_meant() -> None:
    """``INDEXER_TOKEN=secret`` (for ``INDEXER_MCP_TOKEN``) served without a token and
    ``INDEXER_PROT=8765`` on a free port, silently."""
    environ = {
        "INDEXER_TOKEN": "s",
        "INDEXER_PROT": "8765",
        "INDEXER_PORT": "1",
        "INDEXER_LLM_MODEL": "m",
        "INDEXER_FROBNICATE": "1",
        "HOME": "/",
    }
    assert unknown_settings(environ) == [
        ("INDEXER_FROBNICATE", None),
        ("INDEXER_PROT", "INDEXER_PORT"),
        ("INDEXER_TOKEN", "INDEXER_MCP_TOKEN"),
    ]


def test_serve_warns_of_a_mistyped_setting(tmp_path: Path) -> None:
    proc = spawn_indexer(tmp_path / "ws", env={"INDEXER_PROT": "8765"})
    try:
        wait_for(lambda: (tmp_path / "ws" / "indexer.mcp.url").exists(), 30, what="the URL")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=20)
    log = proc.log_path.read_text()  # type: ignore[attr-defined]
    assert (
        "INDEXER_PROT is not a setting of the indexer (ignored): did you mean INDEXER_PORT?" in log
    )


@pytest.mark.parametrize("command", [["serve"], ["status"], ["reindex"]])
def test_a_workspace_below_a_file_names_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    """``serve --workspace notes.md/w`` said "the workspace cannot hold a folder there (a
    system or virtual folder?)", exit 1, naming neither the file nor what to do."""
    (tmp_path / "notes.md").write_text("a note\n")
    before = snapshot(tmp_path)
    assert main([*command, "--workspace", str(tmp_path / "notes.md" / "w")]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"indexer {command[0]}: the workspace {tmp_path / 'notes.md' / 'w'} cannot be a"
        f" folder: {tmp_path / 'notes.md'} is a file\n"
    )
    assert snapshot(tmp_path) == before


def test_a_workspace_named_in_another_unicode_form_is_pointed_to(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--workspace`` typed with a decomposed é (a name pasted from macOS) for a folder
    made with a composed one was "no workspace (a typo?)": the two look alike."""
    made = tmp_path / "caf\u00e9 notes"
    made.mkdir()
    typed = tmp_path / "cafe\u0301 notes"
    before = snapshot(tmp_path)
    assert main(["status", "--workspace", str(typed)]) == 2
    err = capsys.readouterr().err
    assert f"there is no workspace at {typed}, but there is {made}" in err, err
    assert err.strip().endswith(f"use --workspace {shlex.quote(str(made))}"), err
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("code", [errno.EACCES, errno.EPERM, errno.EROFS])
def test_a_path_the_system_refuses_is_a_failure_not_bad_usage(code: int) -> None:
    """A refused path typed on the command line is bad usage (exit 2); the system's
    refusal (permission denied, a read-only file system), coded ``forbidden_path`` for a
    client too, is a command that failed (1): the user's arguments were right."""
    refused = describe(OSError(code, os.strerror(code)))
    assert refused is not None and refused.code == "forbidden_path"
    assert exit_code(refused) == 1
    assert exit_code(ForbiddenPathError("the path leaves the vault")) == 2


@pytest.mark.parametrize("refused", ["the file", "its folder"])
def test_status_says_which_part_of_the_index_this_user_may_not_use(ws: Path, refused: str) -> None:
    """``index: unreadable (operational: cannot read the index ... (unable to open
    database file): SQLite writes its -shm file beside it even to read; ...)`` blamed
    the -shm file of an index this user may not read at all, and showed a code word.
    Now the line names what is refused (the file, or the folder SQLite writes in) and
    whose it is; status still says the rest, exit 0, and changes nothing."""
    state = ws / ".indexer"
    for leftover in state.glob("index.sqlite-*"):  # (a server stopped: none left)
        leftover.unlink()
    before = snapshot(ws)
    place, mode = (state / "index.sqlite", 0) if refused == "the file" else (state, 0o555)
    kept = place.stat().st_mode & 0o7777
    os.chmod(place, mode)
    try:
        done = indexer("status", "--workspace", str(ws), prefix=as_plain_user())
    finally:
        os.chmod(place, kept)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    line = next(line for line in done.stdout.splitlines() if line.startswith("index: "))
    assert line.startswith("index: unreadable (") and "operational:" not in line, line
    assert f"{place}: permission denied to this user" in line, line
    assert "run the command as the user who runs the indexer" in line, line
    if refused == "its folder":
        assert "SQLite writes its -shm file beside the index even to read" in line, line
    else:
        assert "-shm" not in line, line
    assert "en: 1 note" not in done.stdout and "server: not running" in done.stdout
    assert snapshot(ws) == before
