"""History, or the index, on a disk of its own that fills (a 3 MiB tmpfs over
``W/.indexer/history`` or ``W/.indexer`` in the server's own mount namespace, ``unshare
-m``; skipped, saying why, where that is not allowed): each failure is said in plain
words, and once space is freed all is caught up without a restart or another change."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest
from fastmcp import Client
from helpers.indexer_process import QUIET_ENV, RunningIndexer, wait_for

pytestmark = pytest.mark.e2e


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RunningIndexer]:
    """A server whose history is on a 3 MiB tmpfs of its own."""
    yield from small_disk_server(tmp_path, ".indexer/history")


@pytest.fixture
def index_server(tmp_path: Path) -> Iterator[RunningIndexer]:
    """A server whose ``.indexer`` (the index) is on a 3 MiB tmpfs, history on another."""
    yield from small_disk_server(tmp_path, ".indexer", ".indexer/history")


def small_disk_server(tmp_path: Path, *mounted: str) -> Iterator[RunningIndexer]:
    if shutil.which("unshare") is None:
        pytest.skip("unshare(1) is missing: cannot give the server a small disk of its own")
    ws = tmp_path / "ws"
    ws.mkdir()
    script = "".join(
        f'mkdir -p "$1/{folder}" && mount -t tmpfs -o size=3m tmpfs "$1/{folder}" || exit 97\n'
        for folder in mounted
    )
    script += 'exec "$2" -m indexer serve --workspace "$1"\n'
    log_path = tmp_path / "serve.log"
    with open(log_path, "w") as log_file:
        proc = subprocess.Popen(
            ["unshare", "-m", "sh", "-c", script, "sh", str(ws), sys.executable],
            stdout=subprocess.DEVNULL,
            stderr=log_file,
            env={**os.environ, **QUIET_ENV, "INDEXER_SUMMARIES": "0"},
        )

    def url() -> str | None:
        if proc.poll() is not None:
            return "exited"
        with contextlib.suppress(OSError):
            return (ws / "indexer.mcp.url").read_text().strip() or None
        return None

    found = wait_for(url, 30, what="the server's URL file")
    if found == "exited":
        pytest.skip(f"no private tmpfs here (unshare -m + mount: {log_path.read_text()[:200]})")
    running = RunningIndexer(ws, proc, found, None, log_path)
    try:
        yield running
    finally:
        running.stop()


async def data(client: Client, tool: str, **args: object) -> dict:
    result = await client.call_tool(tool, args)
    assert isinstance(result.structured_content, dict)
    return result.structured_content


async def eventually(check: Callable[[], Awaitable[bool]], what: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not await check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.2)


async def test_outside_changes_history_could_not_take_are_recorded_once_it_can(
    server: RunningIndexer,
) -> None:
    """They were indexed, logged with a traceback ("change listener failed"), and never
    recorded: the note's history lacked the text until a tool changed the note."""
    history = Path(f"/proc/{server.process.pid}/root") / server.workspace.relative_to("/")
    history = history / ".indexer" / "history"  # (as the server's mount namespace sees it)
    note = server.workspace / "memory" / "languages" / "en" / "vault" / "n.md"
    async with server.client() as c:
        await data(c, "write", lang="en", path="n.md", content="# n\n\nfirst\n")
        filler = history / "filler.bin"
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
        with contextlib.suppress(OSError):  # (to the last block: ENOSPC)
            while os.write(fd, b"\0" * 65536):
                pass
        os.close(fd)
        note.write_text("# n\n\nedited outside quokka\n")
        (note.parent / "new.md").write_text("# new\n\nmade outside wombat\n")

        async def indexed() -> bool:
            found = await data(c, "search", lang="en", query="quokka OR wombat")
            return len(found["results"]) == 2

        await eventually(indexed, "the outside changes in the index", 15)
        versions = (await data(c, "history", lang="en", path="n.md"))["versions"]
        assert [v["op"] for v in versions] == ["write"]  # (history is full)
        filler.unlink()

        async def recorded() -> bool:
            versions = (await data(c, "history", lang="en", path="n.md"))["versions"]
            made = (await data(c, "history", lang="en", path="new.md"))["versions"]
            return len(versions) == 2 and len(made) == 1

        await eventually(recorded, "the outside changes in history, once it has room", 30)
        current = (await data(c, "read", lang="en", path="n.md"))["etag"]
        versions = (await data(c, "history", lang="en", path="n.md"))["versions"]
        assert (versions[0]["actor"], versions[0]["etag"]) == ("external", current)
    assert "Traceback" not in server.log()
    assert "recorded once history can take them" in server.log()


async def test_a_full_index_disk_is_said_plainly_and_caught_up_once_freed(
    index_server: RunningIndexer,
) -> None:
    """The writes go on (the vault and history have room), the index says it is behind,
    and catches up once freed; its failed catch-ups were logged with a traceback each."""
    state = Path(f"/proc/{index_server.process.pid}/root") / index_server.workspace.relative_to("/")
    state = state / ".indexer"
    async with index_server.client() as c:
        await data(c, "write", lang="en", path="first.md", content="# first\n\nbefore\n")
        filler = state / "filler.bin"
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
        with contextlib.suppress(OSError):  # (to the last block: ENOSPC)
            while os.write(fd, b"\0" * 65536):
                pass
        os.close(fd)
        for n in range(5):
            words = " ".join(f"kiwi{n}x{k}" for k in range(2000))
            await data(c, "write", lang="en", path=f"n{n}.md", content=f"# n{n}\n\n{words}\n")
        status = await data(c, "status")
        assert status["index_partial"] is True and "full" in status["sync"]["reason"], status
        filler.unlink()

        async def caught_up() -> bool:
            found = await data(c, "search", lang="en", query="kiwi4x1999")
            return [hit["path"] for hit in found["results"]] == ["n4.md"] and not found["partial"]

        await eventually(caught_up, "the index to catch up once freed", 30)
    log = index_server.log()
    assert "database or disk is full" in log and "Traceback" not in log, log[-3000:]


async def test_outside_changes_waiting_at_a_stop_are_recorded_after_the_restart(
    tmp_path: Path,
) -> None:
    """A server stopped while history's disk was still full, its outside change waiting
    for room (``Unrecorded``), left the clean mark: the next start, on a disk with room,
    saw nothing to tell (the index had the change) and the change was never recorded,
    as before the retry was made. Two servers in turn on one 3 MiB tmpfs (one mount
    namespace: ``unshare -m``, a shell that starts the second once told)."""
    if shutil.which("unshare") is None:
        pytest.skip("unshare(1) is missing: cannot give history a small disk of its own")
    ws = tmp_path / "ws"
    (ws / ".indexer" / "history").mkdir(parents=True)
    script = (
        'mount -t tmpfs -o size=3m tmpfs "$1/.indexer/history" || exit 97\n'
        '"$2" -m indexer serve --workspace "$1" & echo $! > "$3/first.pid"; wait $!\n'
        'while [ ! -e "$3/go" ]; do sleep 0.05; done\n'
        'exec "$2" -m indexer serve --workspace "$1"\n'
    )
    log_path = tmp_path / "serve.log"
    url_file = ws / "indexer.mcp.url"

    def url() -> str | None:
        if proc.poll() is not None:
            return "exited"
        with contextlib.suppress(OSError):
            return url_file.read_text().strip() or None
        return None

    with open(log_path, "w") as log_file:
        proc = subprocess.Popen(
            ["unshare", "-m", "sh", "-c", script, "sh", str(ws), sys.executable, str(tmp_path)],
            stdout=subprocess.DEVNULL,
            stderr=log_file,
            env={**os.environ, **QUIET_ENV, "INDEXER_SUMMARIES": "0"},
        )
    try:
        found = wait_for(url, 30, what="the first server's URL file")
        if found == "exited":
            pytest.skip(f"no private tmpfs here (unshare -m + mount: {log_path.read_text()[:200]})")
        first = RunningIndexer(ws, proc, found, None, log_path)
        history = Path(f"/proc/{proc.pid}/root") / ws.relative_to("/") / ".indexer" / "history"
        note = ws / "memory" / "languages" / "en" / "vault" / "n.md"
        async with first.client() as c:
            await data(c, "write", lang="en", path="n.md", content="# n\n\nfirst\n")
            filler = history / "filler.bin"
            fill(filler)
            note.write_text("# n\n\nedited outside quokka\n")

            async def indexed() -> bool:
                found = await data(c, "search", lang="en", query="quokka")
                return len(found["results"]) == 1

            await eventually(indexed, "the outside change in the index", 15)
            versions = (await data(c, "history", lang="en", path="n.md"))["versions"]
            assert [v["op"] for v in versions] == ["write"]  # (history is full)
        fill(history / "more.bin")  # (what its failed writes freed: the stop's retry fails)
        os.kill(int((tmp_path / "first.pid").read_text()), signal.SIGTERM)
        stopped = "INFO indexer: indexer stopped"
        wait_for(lambda: stopped in log_path.read_text() or None, 30, what="the first's stop")
        assert "the next start compares history with the files" in log_path.read_text()
        filler.unlink()
        (history / "more.bin").unlink()
        (tmp_path / "go").touch()
        found = wait_for(url, 30, what="the second server's URL file")
        assert found != "exited", log_path.read_text()[-3000:]
        second = RunningIndexer(ws, proc, found, None, log_path)
        async with second.client() as c:

            async def recorded() -> bool:
                versions = (await data(c, "history", lang="en", path="n.md"))["versions"]
                return len(versions) == 2

            await eventually(recorded, "the outside change in history after the restart", 30)
            current = (await data(c, "read", lang="en", path="n.md"))["etag"]
            versions = (await data(c, "history", lang="en", path="n.md"))["versions"]
            assert (versions[0]["actor"], versions[0]["etag"]) == ("external", current)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    log = log_path.read_text()
    assert "Traceback" not in log, log[-3000:]


def fill(path: Path) -> None:
    """A file as large as the disk lets it be (to its last block: ENOSPC)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with contextlib.suppress(OSError):
        while os.write(fd, b"\0" * 4096):
            pass
    os.close(fd)
