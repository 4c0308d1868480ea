"""``indexer summarize`` names the notes it could not read: it said "6 note(s) could not
be read and were left out (see the log)", and the log was the server's or nobody's. Now
the first five, quoted as ``status`` quotes the files it names, then "and N more"; run
here and by a running indexer alike."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.indexer_process import QUIET_ENV, start_indexer

BAD = b"\xff\xfe not UTF-8\n"
# six unreadable notes: names in Arabic script, in Japanese with a space, plain ones
NAMES = ["d/ملاحظة.md", "d/日本 語.md", "d/c.md", "d/e.md", "d/f.md", "top.md"]


def workspace(root: Path) -> Path:
    vault = root / "ws" / "memory" / "languages" / "en" / "vault"
    (vault / "d").mkdir(parents=True)
    (vault / "ok.md").write_text("# ok\n\nreadable\n")
    for name in NAMES:
        (vault / name).write_bytes(BAD)
    return root / "ws"


def summarize(ws: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **QUIET_ENV, "INDEXER_WORKSPACE": "", "INDEXER_LLM_MODEL": ""}
    return subprocess.run(
        [sys.executable, "-m", "indexer", "summarize", "--workspace", str(ws)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def check_line(stdout: str) -> None:
    line = next(line for line in stdout.splitlines() if "could not be read" in line)
    head, _, names = line.partition(" were left out: ")
    assert head == "6 note(s) could not be read and"
    assert names.endswith(" and 1 more (see the log)"), line
    shown = names.removesuffix(" and 1 more (see the log)").split(", ")
    assert len(shown) == 5
    said = {"en/" + name for name in NAMES}
    for quoted in shown:
        assert quoted[0] == quoted[-1] == "'" and quoted[1:-1] in said, quoted
    assert "'en/d/ملاحظة.md'" in shown and "'en/d/日本 語.md'" in shown


def test_summarize_here_names_the_notes_it_left_out(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    vault = ws / "memory" / "languages" / "en" / "vault"
    done = summarize(ws)
    assert done.returncode == 0, done.stderr
    check_line(done.stdout)
    assert all((vault / name).read_bytes() == BAD for name in NAMES)


@pytest.mark.timeout(180)
def test_summarize_by_the_running_indexer_names_them_too(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    server = start_indexer(ws)
    try:
        done = summarize(ws)
        assert done.returncode == 0, done.stderr
        assert "(by the running indexer" in done.stdout
        check_line(done.stdout)
        vault = ws / "memory" / "languages" / "en" / "vault"
        assert all((vault / name).read_bytes() == BAD for name in NAMES)
    finally:
        assert server.stop() == 0
