"""The README's shell blocks, run as written against a real ``indexer serve``: the Quick
start's commands beside ``make run`` (its ``workspace`` folder), the agent-client
session (``~/vault-memory``), and ``indexer open --print``. Each line must succeed and
print what the README says it prints; only the placeholders a reader fills in are
filled in (the entry id ``undo`` takes, the workspace ``W``). That every flag named
exists is ``test_readme_flags``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from fnmatch import fnmatch
from pathlib import Path

import pytest
from helpers.indexer_process import RunningIndexer, start_indexer

README = Path(__file__).resolve().parent.parent / "README.md"
BIN = Path(sys.executable).parent  # where this environment's `indexer` and `agent-client` are


def code_block(after: str) -> list[str]:
    """The command lines of the first code block after the text ``after``."""
    text = README.read_text(encoding="utf-8").split(after, 1)[1]
    block = re.search(r"```(?:sh)?\n(.*?)```", text, re.S)
    assert block, f"no code block after {after!r}"
    return [line for line in block.group(1).splitlines() if line.strip()]


def run_line(line: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    """One line through bash, as a reader's terminal runs it (this environment's
    commands on the PATH, a home folder of the test's own)."""
    env = {**os.environ, "HOME": str(home), "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    for name in ("AGENT_CLIENT_WORKSPACE", "AGENT_CLIENT_LANG", "INDEXER_WORKSPACE"):
        env.pop(name, None)
    return subprocess.run(
        ["bash", "-c", line], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


@pytest.fixture
def home(tmp_path: Path) -> Iterator[tuple[Path, RunningIndexer]]:
    """A home folder whose ~/vault-memory a server serves (the README's workspace)."""
    home = tmp_path / "home"
    server = start_indexer(home / "vault-memory")
    try:
        yield home, server
    finally:
        server.stop()


def test_quick_start_commands_run_beside_make_run(tmp_path: Path) -> None:
    """``make run`` serves ./workspace of the checkout; the lines after it run there."""
    server = start_indexer(tmp_path / "workspace")
    try:
        lines = [line for line in code_block("## Quick start\n") if "make run" not in line]
        assert len(lines) == 3, lines
        outputs = []
        for line in lines:
            proc = run_line(line.replace(".venv/bin/", f"{BIN}/"), tmp_path, tmp_path)
            assert proc.returncode == 0, (line, proc.stdout, proc.stderr)
            outputs.append(proc.stdout)
        snippet, status, search = outputs
        assert f'"url": "{server.url}"' in snippet
        assert f"server: running at {server.url}" in status
        assert "no notes match" in search
    finally:
        server.stop()


def test_the_agent_client_session_runs_as_written(
    home: tuple[Path, RunningIndexer],
) -> None:
    """The block under the agent-client table: ``undo 3f2a...`` is given the entry id
    the ``history`` line before it shows (its reason, ``entry:<id> Past tense of go``)."""
    home_dir, server = home
    lines = code_block("| `undo ENTRY_ID [--dry-run]`")
    assert lines[0].startswith("export AGENT_CLIENT_WORKSPACE=~/vault-memory"), lines
    exports = lines[0]
    entry = ""
    for line in lines[1:]:
        if "3f2a..." in line:
            assert entry, "no entry id shown before the undo line"
            line = line.replace("3f2a...", entry)
        proc = run_line(f"{exports}\n{line}", home_dir, home_dir)
        assert proc.returncode == 0, (line, proc.stdout, proc.stderr)
        if line.startswith("agent-client history"):
            found = re.search(r"entry:([0-9a-f]{32}) Past tense of go$", proc.stdout, re.M)
            assert found, proc.stdout
            entry = found.group(1)
        if line.startswith("agent-client undo"):
            assert proc.stdout == "deleted items/past-tense-of-go.md (the entry created it)\n"
    note = server.workspace / "memory/languages/en/vault/items/past-tense-of-go.md"
    assert "\nlevel: 1\n" in note.read_text(encoding="utf-8")
    server.stop()
    assert unexplained(server.workspace) == []


def unexplained(workspace: Path) -> list[str]:
    """The files and folders of ``workspace`` and of its ``.indexer/`` that the README's
    "Workspace layout" does not name (a reader finding ``.agent-client/`` in theirs
    found no word of it there)."""
    layout = code_block("## Workspace layout\n")
    named = set()
    for line in layout:
        first = line.split()[0].removeprefix("W/")
        named.add(first.split("/")[0] + ("/" if "/" in first else ""))
    missing = []
    for folder, prefix in ((workspace, ""), (workspace / ".indexer", ".indexer/")):
        for entry in folder.iterdir():
            name = entry.name + ("/" if entry.is_dir() else "")
            if name not in named and not any(fnmatch(name, pattern) for pattern in named):
                missing.append(prefix + name)
    return sorted(missing)


def test_indexer_open_print_prints_the_page(home: tuple[Path, RunningIndexer]) -> None:
    home_dir, server = home
    line = next(line for line in code_block("## Browser page and REST API\n") if "--print" in line)
    proc = run_line(line.replace(" W ", " ~/vault-memory "), home_dir, home_dir)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == server.url.removesuffix("/mcp") + "/ui/\n"
