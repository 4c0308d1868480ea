"""``agent-client`` as a program on its own, no indexer running: ``python -m``, its help,
its exit statuses, and one line (never a traceback) when offline, when a Ctrl-C was
caught inside an ``exec`` or when stdout is closed."""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from agent_client.cli import build_parser


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    # The CLI reads its settings from the environment; keep the host's LLM out of it.
    for name in (
        "VAULT_LLM_MODEL",
        "AGENT_CLIENT_WORKSPACE",
        "AGENT_CLIENT_LLM",
        "AGENT_CLIENT_LANG",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AGENT_CLIENT_TZ", "UTC")


def test_an_offline_entry_is_said_in_one_line(tmp_path: Path) -> None:
    """The writer's error line and the CLI's notice said it twice."""
    for command in ("event", "remember"):
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "agent_client",
                command,
                "--workspace",
                str(tmp_path),
                "--lang",
                "en",
                "--title",
                "t",
                "x",
            ],
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 3, proc.stderr
        assert proc.stderr.count("\n") == 1 and "indexer_offline" in proc.stderr, proc.stderr


def test_a_ctrl_c_caught_inside_exec_still_ends_with_130(tmp_path: Path) -> None:
    """Under ``python -m`` CPython 3.11 ended by SIGINT (-2) once a ``KeyboardInterrupt``
    had left an ``exec`` of a string, caught or not: the SDKs' imports build classes so,
    and 1 Ctrl-C in a few while the command imported ended with a signal's status."""
    (tmp_path / "caught_in_exec.py").write_text(
        "import sys\n"
        "from shared.cli_usage import EXIT_INTERRUPTED, exit_with\n"
        "try:\n"
        "    exec('raise KeyboardInterrupt')\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', file=sys.stderr)\n"
        "exit_with(EXIT_INTERRUPTED)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    proc = subprocess.run(
        [sys.executable, "-m", "caught_in_exec"], capture_output=True, text=True, env=env
    )
    assert (proc.returncode, proc.stderr) == (130, "interrupted\n")


def test_python_m_agent_client_and_help_for_users() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "agent_client", "--help"], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert "``" not in proc.stdout and "exit status" in proc.stdout
    assert "  130  interrupted" in proc.stdout  # (the status a Ctrl-C ends with)
    for command in ("remember", "event", "edit", "delete", "search", "read"):
        assert command in proc.stdout

    def undocumented(parser: argparse.ArgumentParser) -> list[str]:
        missing = []
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    missing += [f"{sub.prog}: {name}" for name in undocumented(sub)]
            elif not action.help:
                missing.append("/".join(action.option_strings) or action.dest)
        return missing

    assert undocumented(build_parser()) == []


def test_a_command_started_with_stdout_closed_says_one_line(tmp_path: Path) -> None:
    """``agent-client ... >&-`` ended in a traceback (``'NoneType' ... 'flush'``)."""
    command = f"exec {shlex.quote(sys.executable)} -m agent_client remember --title t x >&-"
    env = {**os.environ, "AGENT_CLIENT_WORKSPACE": str(tmp_path), "AGENT_CLIENT_LANG": "en"}
    proc = subprocess.run(["sh", "-c", command], env=env, capture_output=True, text=True)
    assert proc.returncode == 3 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.count("\n") == 1 and "indexer_offline" in proc.stderr
