"""End to end, a server meeting file permissions on the workspace's own files and
folders (as root here, without the capabilities that pass over them): each refusal is
one plain line that says what to do, never a traceback, and a stop is never cut short."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fastmcp import Client
from helpers.indexer_process import spawn_indexer, start_indexer
from helpers.permissions import as_plain_user, chmod

from indexer.health import server_health
from shared.workspace import Workspace

DEADLINE = 15.0


def put(ws: Path, rel: str, text: str, lang: str = "en") -> Path:
    path = ws / "memory" / "languages" / lang / "vault" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def served_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace of twenty English notes and an Italian one, served once and stopped
    (its state folder, index and history made): served once for the module, copied by
    each test that starts from it (``indexed``)."""
    ws = tmp_path_factory.mktemp("served-once") / "ws"
    for number in range(20):
        put(ws, f"n{number}.md", f"# N{number}\n\nbody {number}\n")
    put(ws, "x.md", "# X\n\nciao\n", lang="it")
    assert start_indexer(ws).stop() == 0
    return ws


def indexed(served_once: Path, tmp_path: Path) -> Path:
    """A copy of ``served_once`` (a workspace a server indexed and stopped on)."""
    ws = tmp_path / "ws"
    shutil.copytree(served_once, ws, symlinks=True)
    return ws


def failed_start(ws: Path) -> tuple[int, str]:
    """The exit status and the output of a start, as a plain user, that must fail."""
    proc = spawn_indexer(ws, prefix=as_plain_user())
    status = proc.wait(timeout=60)
    return status, Path(proc.log_path).read_text()  # type: ignore[attr-defined]


def test_a_read_only_index_stops_the_start_with_a_plain_message(
    served_once: Path, tmp_path: Path, modes: dict[Path, int]
) -> None:
    """A read-only index (mode 0444) ended the start on a raw ``sqlite3.OperationalError``
    traceback. It is not replaced: a file made read-only may be so on purpose."""
    ws = indexed(served_once, tmp_path)
    index = Workspace(ws).index_path
    chmod(modes, index, 0o444)
    status, output = failed_start(ws)
    assert status == 1
    assert "Traceback" not in output
    last = output.strip().splitlines()[-1]
    assert last.startswith(f"indexer serve: the index {index} cannot be written")
    assert "make the file writable" in last and "rebuilt from the vaults" in last
    assert index.stat().st_mode & 0o777 == 0o444  # left as the user made it


def test_an_unwritable_workspace_gets_advice_that_fits(
    served_once: Path, tmp_path: Path, modes: dict[Path, int]
) -> None:
    """The URL file could not be written for want of permission, and the message said to
    free some disk space."""
    ws = indexed(served_once, tmp_path)
    chmod(modes, ws, 0o555)
    status, output = failed_start(ws)
    assert status == 1
    last = output.strip().splitlines()[-1]
    assert last.startswith(f"indexer serve: cannot write {ws / 'indexer.mcp.url'}: Permission")
    assert "disk space" not in last
    assert "run the indexer as the user who owns the workspace" in last


def test_a_url_file_that_cannot_be_removed_does_not_cut_the_stop_short(
    tmp_path: Path, modes: dict[Path, int]
) -> None:
    """The workspace made read-only while serving: removing the URL file raised first at
    the stop, which then skipped closing the index and history and the clean-shutdown
    mark, and exited 1 on a raw ``[Errno 13]``."""
    ws = tmp_path / "ws"
    put(ws, "a.md", "# A\n\nalpha\n")
    server = start_indexer(ws, prefix=as_plain_user())
    chmod(modes, ws, 0o555)
    assert server.stop() == 0
    log = server.log()
    assert "Traceback" not in log and "Errno" not in log
    assert f"could not remove {ws / 'indexer.mcp.url'} (Permission denied)" in log
    assert log.strip().splitlines()[-1].endswith("indexer stopped")
    assert Workspace(ws).clean_mark.exists()


async def search(client: Client, lang: str, query: str) -> dict:
    return (await client.call_tool("search", {"lang": lang, "query": query})).structured_content


async def test_an_unreadable_vault_is_one_plain_warning_and_search_says_partial(
    served_once: Path, tmp_path: Path, modes: dict[Path, int]
) -> None:
    """A lang folder shut at start logged a PermissionError traceback for each note the
    start-up reconcile dropped ("change listener failed"), no line said the vault could
    not be read, and search on it answered nothing with ``partial: false``: its notes
    stay in the index (they are not gone), and search says it is partial."""
    ws = indexed(served_once, tmp_path)  # twenty notes in en, one in it
    lang_folder = ws / "memory" / "languages" / "en"
    chmod(modes, lang_folder, 0o000)
    server = start_indexer(ws, prefix=as_plain_user())
    try:
        async with server.client() as c:
            other = await search(c, "it", "ciao")
            assert other["total"] == 1 and not other["partial"]
            kept = await search(c, "en", "body")  # what was indexed stays found
            assert kept["partial"] and kept["total"] == 20, kept
            # status, /health and `indexer status` tell it too (they said all was whole)
            status = (await c.call_tool("status", {})).data
            assert status["index_partial"] and "cannot be read" in status["sync"]["reason"]
            assert list(status["sync"]["unreadable_vaults"]) == ["en"]
            health = server_health(server.url, Workspace(ws)) or {}
            assert health["index_partial"] and list(health["unreadable_vaults"]) == ["en"]
            told = subprocess.run(
                [sys.executable, "-m", "indexer", "status", "--workspace", str(ws)],
                capture_output=True,
                text=True,
            )
            assert f"the vault en cannot be read (Permission denied ({lang_folder}))" in told.stdout
            os.chmod(lang_folder, 0o755)
            deadline = time.monotonic() + DEADLINE
            while (found := await search(c, "en", "body"))["total"] != 20 or found["partial"]:
                assert time.monotonic() < deadline, f"the vault never came back: {found}"
                await asyncio.sleep(0.05)
            assert (server_health(server.url, Workspace(ws)) or {})["unreadable_vaults"] == {}
    finally:
        assert server.stop() == 0
    log = server.log()
    assert "Traceback" not in log and "change listener failed" not in log
    warned = [line for line in log.splitlines() if "the vault en cannot be read" in line]
    assert len(warned) == 1
    assert f"(Permission denied: {lang_folder})" in warned[0]


async def test_a_folder_made_unreadable_while_serving_keeps_its_notes_found(
    tmp_path: Path, modes: dict[Path, int]
) -> None:
    """A folder a person shuts (chmod 000) while the server runs: the watcher and every
    reconcile after took its notes out of the index, as if deleted."""
    ws = tmp_path / "ws"
    put(ws, "open/a.md", "# A\n\nlantern\n")
    put(ws, "shut/b.md", "# B\n\nlantern\n")
    server = start_indexer(ws, prefix=as_plain_user())
    try:
        async with server.client() as c:
            assert (await search(c, "en", "lantern"))["total"] == 2
            chmod(modes, ws / "memory/languages/en/vault/shut", 0o000)
            put(ws, "open/c.md", "# C\n\nlantern\n")  # a change the watcher syncs after
            deadline = time.monotonic() + DEADLINE
            while (await search(c, "en", "lantern"))["total"] != 3:
                assert time.monotonic() < deadline, "the new note was never indexed"
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.5)  # (the watcher heard the chmod too)
            assert (await search(c, "en", "lantern"))["total"] == 3
    finally:
        assert server.stop() == 0
    server = start_indexer(ws, prefix=as_plain_user())  # a start's reconcile keeps them too
    try:
        async with server.client() as c:
            assert (await search(c, "en", "lantern"))["total"] == 3
    finally:
        assert server.stop() == 0


@pytest.mark.parametrize("command", ["serve", "reindex", "maintain", "summarize"])
def test_a_workspace_that_cannot_hold_the_state_folder_is_refused_in_words(
    tmp_path: Path, modes: dict[Path, int], command: str
) -> None:
    """A workspace where ``W/.indexer`` cannot be made (not this user's to write; /proc)
    ended every command on a raw ``[Errno 13] Permission denied: '.../.indexer'``
    (``[Errno 2]`` on /proc, ``[Errno 30]`` on a read-only disk): now what, where and
    what to do, with the same exit status (1)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    chmod(modes, ws, 0o555)
    cases = [(ws, "give that user the workspace")]
    if Path("/proc/self").is_dir():
        cases.append((Path("/proc"), "use a workspace folder of your own"))
    for where, advice in cases:
        args = [sys.executable, "-m", "indexer", command, "--workspace", str(where)]
        done = subprocess.run([*as_plain_user(), *args], capture_output=True, text=True, timeout=60)
        assert done.returncode == 1, done.stderr
        last = done.stderr.strip().splitlines()[-1]
        state = where / ".indexer"
        assert last.startswith(f"indexer {command}: the indexer cannot make its state"), last
        assert f"in {state}: " in last and advice in last, last
        assert "Errno" not in done.stderr and "Traceback" not in done.stderr
    assert not (ws / ".indexer").exists()
