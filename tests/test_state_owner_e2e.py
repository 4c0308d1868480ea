"""End to end, the state folder ``W/.indexer`` on a shared machine: it holds a copy of
every note (the index) and every version (history), so another user must neither own
it nor read it. One another user owns (planted as a link, or made before the first
start) is refused in words with nothing written there; one of ours left open to others
(made by a person's ``mkdir``, 0755 or 0777) is made 0700."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.indexer_process import start_indexer, wait_for

NOBODY = 65534


def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    vault = ws / "memory" / "languages" / "en" / "vault"
    vault.mkdir(parents=True)
    (vault / "a.md").write_text("# A\n\nprivate words\n", encoding="utf-8")
    return ws


@pytest.mark.skipif(os.geteuid() != 0, reason="making another user's folder needs root")
@pytest.mark.parametrize("linked", [True, False], ids=["linked", "made-before"])
@pytest.mark.parametrize("command", ["serve", "reindex"])
def test_a_state_folder_another_user_owns_is_refused(
    tmp_path: Path, linked: bool, command: str
) -> None:
    """The index and history were made, readable (0644), in a folder another user owned
    and could write (a link planted in a shared workspace, a folder made before the
    first start): that user read every note and could swap the databases."""
    ws = workspace(tmp_path)
    theirs = tmp_path / "theirs" if linked else ws / ".indexer"
    theirs.mkdir()
    os.chmod(theirs, 0o777)
    os.chown(theirs, NOBODY, NOBODY)
    if linked:
        (ws / ".indexer").symlink_to(theirs)
    args = [sys.executable, "-m", "indexer", command, "--workspace", str(ws)]
    done = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert f"the state folder {ws / '.indexer'} belongs to another user" in last, last
    assert "Traceback" not in done.stderr
    assert list(theirs.iterdir()) == []  # nothing written there
    assert not (ws / "indexer.mcp.url").exists()


def test_a_state_folder_of_ours_open_to_others_is_made_private(tmp_path: Path) -> None:
    """A ``W/.indexer`` a person made (``mkdir``: 0755, or 0777 under umask 0000) kept its
    mode, and the index and history in it (0644) were readable by every local user."""
    ws = workspace(tmp_path)
    (ws / ".indexer").mkdir()
    os.chmod(ws / ".indexer", 0o777)
    start_indexer(ws).stop()
    assert stat.S_IMODE((ws / ".indexer").stat().st_mode) == 0o700


def test_the_folders_a_start_makes_are_not_open_to_all_under_umask_0000(
    tmp_path: Path,
) -> None:
    """A start on a workspace that did not exist made it, its parents, ``memory`` and
    ``memory/languages`` 0777 under umask 0000 (``mkdir(parents=True)`` leaves the
    parents to the umask): any local user could then replace the URL file (the client
    sends its token where it points), plant a vault, or put their own state folder in
    place. Made 0755 less the umask, as the tools make a note's folder."""
    ws = tmp_path / "new" / "ws"
    args = [sys.executable, "-m", "indexer", "serve", "--workspace", str(ws)]
    old = os.umask(0)
    try:  # (not the test helper: it makes the workspace itself)
        server = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    finally:
        os.umask(old)
    try:
        wait_for(lambda: (ws / "indexer.mcp.url").exists() or server.poll() is not None, 30)
    finally:
        server.terminate()
        assert server.wait(30) == 0
    for folder in (tmp_path / "new", ws, ws / "memory", ws / "memory" / "languages"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o755, folder


def test_a_start_warns_of_workspace_folders_others_may_write(tmp_path: Path) -> None:
    """A workspace or vault any local user may write let them replace the URL file or
    plant notes, and the start said nothing: now it says so, once, with the chmod to run
    (and changes no mode: the folders are the user's)."""
    ws = workspace(tmp_path)
    vault = ws / "memory" / "languages" / "en" / "vault"
    os.chmod(ws, 0o777)
    os.chmod(vault, 0o777)
    server = start_indexer(ws)
    server.stop()
    log = server.log_path.read_text() if server.log_path else ""
    lines = [line for line in log.splitlines() if "other users may write" in line]
    assert len(lines) == 1, log
    assert f"{ws} (by every user)" in lines[0] and f"{vault} (by every user)" in lines[0]
    assert f"chmod go-w {ws} " in lines[0]
    assert stat.S_IMODE(ws.stat().st_mode) == 0o777  # told, not changed
    quiet = tmp_path / "quiet"
    os.chmod(ws, 0o755)
    os.chmod(vault, 0o755)
    ws.rename(quiet)
    again = start_indexer(quiet)
    again.stop()
    assert again.log_path is not None
    assert "other users may write" not in again.log_path.read_text()
