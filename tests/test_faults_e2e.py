"""Faults injected into a real ``indexer serve``: a full disk, a file size limit, a server
too busy to read its file events.

- ``RLIMIT_FSIZE`` is set on the running server (``prlimit``; no privilege needed): the
  index (already larger) cannot grow while small notes still can, and an append can
  write only part of its text.
- The server is stopped (``SIGSTOP``) while more notes arrive than the kernel's inotify
  queue holds (``fs.inotify.max_queued_events``; 5,096 here): it overflows for certain.
- A full disk is a 1 MiB tmpfs over ``W/memory`` in the server's own mount namespace
  (``unshare -m``; skipped, saying why, where that is not allowed).

Each test uses a lang of its own on the module's one server.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest
from fastmcp import Client
from fastmcp.exceptions import ToolError
from helpers.indexer_process import QUIET_ENV, RunningIndexer, wait_for

pytestmark = pytest.mark.e2e


def vault(ws: Path, lang: str) -> Path:
    return ws / "memory" / "languages" / lang / "vault"


async def data(client: Client, tool: str, **args: object) -> dict:
    result = await client.call_tool(tool, args)
    assert isinstance(result.structured_content, dict)
    return result.structured_content


async def eventually(
    check: Callable[[], Awaitable[bool]], what: str, timeout: float = 30.0
) -> None:
    deadline = time.monotonic() + timeout
    while not await check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.1)


@contextlib.contextmanager
def file_size_limit(pid: int, limit: int) -> Iterator[None]:
    """``RLIMIT_FSIZE`` of the running process ``pid`` lowered to ``limit`` for the block."""
    old = resource.prlimit(pid, resource.RLIMIT_FSIZE)
    resource.prlimit(pid, resource.RLIMIT_FSIZE, (limit, old[1]))
    try:
        yield
    finally:
        resource.prlimit(pid, resource.RLIMIT_FSIZE, old)


async def test_index_write_failures_say_partial_and_catch_up(server: RunningIndexer) -> None:
    """The index's files made immutable (``chattr +i``: refused even to root) while notes
    are written: the writes (and their history) succeed, the index says it is behind,
    and catches up once it can be written again."""
    lang = "fi"
    index_files = [server.workspace / ".indexer" / f"index.sqlite{end}" for end in ("", "-wal")]
    async with server.client() as c:
        await data(c, "write", lang=lang, path="first.md", content="# first\nbefore\n")
        with immutable(index_files):
            for n in range(10):
                text = f"# note {n}\nzucchini word{n}\n"
                await data(c, "write", lang=lang, path=f"n{n}.md", content=text)
            status = await data(c, "status")
            assert status.get("index_partial") is True, status
            assert "index" in (status["sync"]["reason"] or ""), status["sync"]
            found = await data(c, "search", lang=lang, query="zucchini")
            assert found["partial"] is True

        async def caught_up() -> bool:
            found = await data(c, "search", lang=lang, query="zucchini", limit=50)
            return len(found["results"]) == 10 and not found["partial"]

        await eventually(caught_up, "the index to catch up once it can be written again")
        assert (await data(c, "status")).get("index_partial") is False


@contextlib.contextmanager
def immutable(paths: list[Path]) -> Iterator[None]:
    """``chattr +i`` on ``paths`` for the block; skips the test where that cannot be set."""
    if shutil.which("chattr") is None:
        pytest.skip("chattr (e2fsprogs) is not installed")
    done: list[Path] = []
    try:
        for path in paths:
            if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode:
                pytest.skip(f"this file system cannot make {path.name} immutable")
            done.append(path)
        yield
    finally:
        for path in done:
            subprocess.run(["chattr", "-i", str(path)], check=True)


async def test_a_failed_append_leaves_no_fragment(server: RunningIndexer) -> None:
    lang = "fj"
    note = vault(server.workspace, lang) / "log.md"
    async with server.client() as c:
        await data(c, "write", lang=lang, path="log.md", content="# log\n" + "x" * 20_000)
        before = note.read_bytes()
        limit = file_size_limit(server.process.pid, len(before) + 16_384)
        with limit, pytest.raises(ToolError) as info:
            await c.call_tool("append", {"lang": lang, "path": "log.md", "content": "y" * 60_000})
        text = str(info.value)
        # The limit hits the note (cut back: too_large) or, first, the history that must
        # record the change (refused before the note is touched): nothing changed either way.
        assert text.startswith(("too_large: ", "internal: the history could not record"))
        assert "nothing was changed" in text, text
        assert note.read_bytes() == before
        await data(c, "append", lang=lang, path="log.md", content="\nnext\n")
        assert note.read_bytes() == before + b"\nnext\n"


def files_to_overflow() -> int:
    """Notes to create (3 inotify events each the watcher asks for: created, modified,
    closed after writing) to overflow the kernel's event queue."""
    queue = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    if queue > 100_000:
        pytest.skip(f"fs.inotify.max_queued_events is {queue}: too many files to overflow it")
    return queue // 3 + 1_000


async def test_lost_file_events_are_caught_up(server: RunningIndexer) -> None:
    lang = "fk"
    count = files_to_overflow()
    folder = vault(server.workspace, lang) / "burst"
    async with server.client() as c:
        await data(c, "write", lang=lang, path="start.md", content="# start\n")
        folder.mkdir()
        (folder / "probe.md").write_text("# probe\n")  # indexed: the folder is watched

        async def watched() -> bool:
            return (await data(c, "status"))["langs"].get(lang) == 2

        await eventually(watched, "the new folder to be watched")
        os.kill(server.process.pid, signal.SIGSTOP)  # too busy to read its events
        try:
            for n in range(count):
                (folder / f"n{n}.md").write_text(f"burst note {n}")
        finally:
            os.kill(server.process.pid, signal.SIGCONT)

        async def all_indexed() -> bool:
            status = await data(c, "status")
            return status["langs"].get(lang) == count + 2 and status.get("index_partial") is False

        await eventually(all_indexed, f"the {count} notes made while events were lost", 60)
        # found by the catch-up, as the watcher would have: in history (they got none)
        for n in (0, count - 1):
            rows = (await data(c, "history", lang=lang, path=f"burst/n{n}.md"))["versions"]
            assert [(v["op"], v["actor"]) for v in rows] == [("baseline", "external")], n
    wait_for(lambda: "overflow" in server.log(), 5, what="the overflow in the server's log")


def tmpfs_serve(tmp_path: Path, mounted: str, size: str) -> RunningIndexer:
    """A server whose ``W/<mounted>`` (``""``: all of ``W``) is a tmpfs of ``size`` of its
    own (``unshare -m``); its files are seen through ``/proc/<pid>/root``."""
    if shutil.which("unshare") is None:
        pytest.skip("unshare(1) is missing: cannot give the server a small disk of its own")
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    script = (
        f'mount -t tmpfs -o size={size} tmpfs "$1/{mounted}" || exit 97\n'
        'exec "$2" -m indexer serve --workspace "$1"\n'
    )
    log_path = tmp_path / "serve-tmpfs.log"
    with open(log_path, "w") as log_file:
        proc = subprocess.Popen(
            ["unshare", "-m", "sh", "-c", script, "sh", str(ws), sys.executable],
            stdout=subprocess.DEVNULL,
            stderr=log_file,
            env={**os.environ, **QUIET_ENV},
        )

    def url() -> str | None:
        if proc.poll() is not None:
            return "exited"
        path = Path(f"/proc/{proc.pid}/root") / ws.relative_to("/") / "indexer.mcp.url"
        with contextlib.suppress(OSError):
            return path.read_text().strip() or None
        return None

    found = wait_for(url, 30, what="the tmpfs server's URL file")
    if found == "exited":
        pytest.skip(
            "this machine does not allow a private mount namespace with a tmpfs "
            f"(unshare -m + mount: {log_path.read_text().strip()[:200]})"
        )
    return RunningIndexer(ws, proc, found, None, log_path)


@pytest.fixture
def tmpfs_server(tmp_path: Path) -> Iterator[RunningIndexer]:
    """A server whose ``W/memory`` is a 1 MiB tmpfs of its own (``unshare -m``)."""
    running = tmpfs_serve(tmp_path, "memory", "1m")
    try:
        yield running
    finally:
        running.stop()


async def test_a_full_disk_is_said_plainly_and_changes_nothing(
    tmpfs_server: RunningIndexer,
) -> None:
    ws, pid = tmpfs_server.workspace, tmpfs_server.process.pid
    inside = Path(f"/proc/{pid}/root") / vault(ws, "en").relative_to("/")  # its mount view
    async with tmpfs_server.client() as c:
        await data(c, "write", lang="en", path="a.md", content="# a\n" + "a" * 1000)
        filler = inside / "filler.bin"
        with open(filler, "wb") as f:  # fill the tmpfs, leaving 16 KB
            free = os.statvfs(inside).f_bavail * os.statvfs(inside).f_frsize
            f.write(b"\0" * max(0, free - 16_384))
        before = (inside / "a.md").read_bytes()
        for tool, args in (
            ("append", {"path": "a.md", "content": "b" * 60_000}),
            ("write", {"path": "a.md", "content": "# a\n" + "c" * 60_000}),
            ("write", {"path": "new/b.md", "content": "# b\n" + "d" * 60_000}),
        ):
            with pytest.raises(ToolError) as info:
                await c.call_tool(tool, {"lang": "en", **args})
            text = str(info.value)
            assert text.startswith("internal: no space is left on the disk"), text
            assert "nothing was changed" in text
        assert (inside / "a.md").read_bytes() == before
        left = sorted(p.name for p in inside.iterdir() if p.name != ".overview.md")
        assert left == ["a.md", "filler.bin"]  # (the folder's summary may come and go)
        filler.unlink()
        await data(c, "append", lang="en", path="a.md", content="\nfits now\n")
        assert (inside / "a.md").read_bytes() == before + b"\nfits now\n"


async def test_deletes_free_space_on_a_full_disk_and_are_recorded(tmp_path: Path) -> None:
    """The whole workspace on a full disk: history could not record a delete (even of a
    text it held already), so nothing could be deleted through the tools to free space.
    The space history keeps for that (``history.reserve``) lets deletes through, each
    recorded; a write is still refused, and the space is kept again once there is room."""
    server = tmpfs_serve(tmp_path, "", "4m")
    try:
        ws = Path(f"/proc/{server.process.pid}/root") / server.workspace.relative_to("/")
        reserve = ws / ".indexer" / "history" / "reserve"
        async with server.client() as c:
            for name in ("a", "b"):
                await data(c, "write", lang="en", path=f"{name}.md", content=f"# {name}\n")
            assert reserve.stat().st_size == 1 << 20
            filler = ws / "filler.bin"
            fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
            with contextlib.suppress(OSError):  # (to the last block: ENOSPC)
                while os.write(fd, b"\0" * 4096):
                    pass
            os.close(fd)
            with pytest.raises(ToolError, match=r"no space is left|disk is full"):
                await data(c, "write", lang="en", path="c.md", content="# c\n" + "c" * 9000)
            for name in ("a", "b"):
                done = await data(c, "delete", lang="en", path=f"{name}.md")
                assert done == {"path": f"{name}.md", "deleted": True}
                versions = await data(c, "history", lang="en", path=f"{name}.md")
                assert versions["versions"][0]["op"] == "delete"
            assert not reserve.exists()
            assert "the space kept for deletes" in server.log()
            filler.unlink()
            await data(c, "write", lang="en", path="d.md", content="# d\n")
            assert reserve.stat().st_size == 1 << 20  # (kept again)
    finally:
        server.stop()


FULL_START = """
mount -t tmpfs -o size=2m tmpfs "$1" || exit 97
mkdir -p "$1/memory/languages/en/vault/d"
printf '# N\\n\\nbody\\n' > "$1/memory/languages/en/vault/d/n.md"
"$2" -m indexer serve --workspace "$1" 2>/dev/null &
server=$!
while [ ! -s "$1/indexer.mcp.url" ]; do sleep 0.05; kill -0 $server || exit 96; done
sleep 1
{ kill -KILL $server; wait $server; } 2>/dev/null
mv "$1/memory/languages/en/vault/d/n.md" "$1/memory/languages/en/vault/d/m.md"
dd if=/dev/zero of="$1/filler" bs=64k 2>/dev/null
dd if=/dev/zero of="$1/filler2" bs=512 2>/dev/null
dd if=/dev/zero of="$1/filler3" bs=1 2>/dev/null
exec "$2" -m indexer serve --workspace "$1"
"""


def test_a_start_on_a_full_disk_says_why_in_one_line(tmp_path: Path) -> None:
    """A workspace on a full disk (a tmpfs of the test's own): the start failed on the
    index's first write with "internal: the history could not record this change ...
    nothing was changed" and a traceback; it names the disk and the file it needs."""
    if shutil.which("unshare") is None:
        pytest.skip("unshare(1) is missing: cannot give the server a small disk of its own")
    ws = tmp_path / "ws"
    ws.mkdir()
    done = subprocess.run(
        ["unshare", "-m", "sh", "-c", FULL_START, "sh", str(ws), sys.executable],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **QUIET_ENV, "INDEXER_SUMMARIES": "0"},
    )
    if done.returncode in (96, 97):
        pytest.skip(f"no private tmpfs here (unshare -m + mount: {done.stderr.strip()[:200]})")
    assert done.returncode != 0
    lines = [line for line in done.stderr.splitlines() if not line[:4].isdigit()]  # (logs)
    assert lines == [
        f"indexer serve: cannot write {ws}/indexer.mcp.url: No space left on device; clients"
        " find the server through it (free some disk space, then start again)"
    ], done.stderr
    assert "Traceback" not in done.stderr


def test_an_append_cut_short_by_the_system_is_cut_back(tmp_path: Path) -> None:
    """``fsops.append_at`` in a process whose file size limit stops it part way: the
    error goes up and the file keeps exactly its old bytes (no torn fragment)."""
    note = tmp_path / "log.md"
    note.write_bytes(b"# log\n" + b"x" * 20_000)
    before = note.read_bytes()
    script = (
        "import errno, os, resource, signal, sys\n"
        "from indexer.vault import fsops\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        f"limit = {len(before) + 16_384}\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))\n"
        "fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)\n"
        "try:\n"
        "    fsops.append_at(fd, 'log.md', b'y' * 60_000, create=False)\n"
        "except OSError as err:\n"
        "    sys.exit(0 if err.errno == errno.EFBIG else 3)\n"
        "sys.exit(2)\n"
    )
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True)
    assert done.returncode == 0, done.stderr
    assert note.read_bytes() == before


def test_files_that_cannot_be_written_beside_are_not_called_damaged(tmp_path: Path) -> None:
    """SQLite writes the -wal and -shm files even to read; when the disk cannot take them
    (full: "disk I/O error"), history was called damaged ("move it aside ... start a new
    history") and ``indexer search`` deleted the index, then failed on a traceback. Here
    ``RLIMIT_FSIZE`` of 0 refuses every write, as a full disk does."""
    ws = tmp_path / "ws"
    (vault(ws, "en") / "items").mkdir(parents=True)
    (vault(ws, "en") / "items" / "a.md").write_text("# Alpha\n\nzebra crossing\n")
    env = {**os.environ, **QUIET_ENV}

    def indexer(*args: str, limited: bool = False) -> subprocess.CompletedProcess[str]:
        def no_writes() -> None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))

        command = [sys.executable, "-m", "indexer", args[0], "--workspace", str(ws), *args[1:]]
        return subprocess.run(
            command, env=env, capture_output=True, text=True, timeout=60,
            preexec_fn=no_writes if limited else None,
        )  # fmt: skip

    assert "items/a.md" in indexer("search", "--lang", "en", "zebra").stdout
    state = ws / ".indexer"
    files = {p: p.read_bytes() for p in (state / "index.sqlite", state / "history/history.sqlite")}
    for args in (("history", "--lang", "en", "items/a.md"), ("search", "--lang", "en", "zebra")):
        done = indexer(*args, limited=True)
        said = done.stdout + done.stderr
        assert done.returncode == 1 and "Traceback" not in said, said
        assert "the disk reported an I/O error" in said and "damaged" not in said, said
        assert {p: p.read_bytes() for p in files} == files  # nothing deleted, nothing changed
    status = indexer("status", limited=True)
    assert "the disk reported an I/O error" in status.stdout and "as this user" not in status.stdout
    assert "items/a.md" in indexer("search", "--lang", "en", "zebra").stdout
