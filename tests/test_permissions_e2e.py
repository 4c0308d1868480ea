"""End to end, a server that meets file permissions as any user's does (as root here,
without the capabilities that pass over them): folders and notes it may not read
leave the rest of the index whole, and are seen once they may be read again."""

from __future__ import annotations

import asyncio
import ctypes
import os
import signal
import stat
import threading
import time
from pathlib import Path

import pytest
from fastmcp import Client
from helpers.indexer_process import start_indexer
from helpers.permissions import as_plain_user, chmod

DEADLINE = 15.0


def vault(ws: Path, lang: str = "en") -> Path:
    return ws / "memory" / "languages" / lang / "vault"


def put(ws: Path, rel: str, text: str, lang: str = "en") -> Path:
    path = vault(ws, lang) / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


async def data(client: Client, tool: str, **args) -> dict:
    return (await client.call_tool(tool, args)).structured_content


async def found(client: Client, query: str) -> list[str]:
    result = await data(client, "search", lang="en", query=query)
    return sorted(hit["path"] for hit in result["results"])


async def eventually(client: Client, query: str, paths: list[str]) -> None:
    deadline = time.monotonic() + DEADLINE
    while await found(client, query) != paths:
        if time.monotonic() > deadline:
            raise AssertionError(f"search for {query!r} never found {paths}")
        await asyncio.sleep(0.05)


async def test_unreadable_folders_leave_the_index_whole_and_are_seen_once_readable(
    tmp_path: Path, modes: dict[Path, int]
) -> None:
    """A lang folder without search permission stopped the index of every vault (an
    error at every retry); a folder or note that could not be read at start was never
    watched or indexed after its permissions came back (while grep found it)."""
    ws = tmp_path / "ws"
    put(ws, "a.md", "# A\n\nalpha\n")
    put(ws, "locked/n.md", "# N\n\ngamma\n")
    solo = put(ws, "solo.md", "# Solo\n\ndelta\n")
    put(ws, "x.md", "# X\n\nciao\n", lang="it")
    chmod(modes, ws / "memory/languages/it", 0o644)
    chmod(modes, vault(ws) / "locked", 0o000)
    chmod(modes, solo, 0o000)
    server = start_indexer(ws, prefix=as_plain_user())
    try:
        async with server.client() as c:
            assert await found(c, "alpha") == ["a.md"]
            status = await data(c, "status")
            assert status["index_ready"] and status["langs"] == {"en": 1}
            assert await found(c, "gamma") == [] and await found(c, "delta") == []
            os.chmod(vault(ws) / "locked", 0o755)
            os.chmod(solo, 0o644)
            await eventually(c, "gamma", ["locked/n.md"])
            await eventually(c, "delta", ["solo.md"])
            put(ws, "locked/later.md", "# Later\n\nepsilon\n")  # the folder is watched now
            await eventually(c, "epsilon", ["locked/later.md"])
            assert not (await data(c, "search", lang="en", query="alpha"))["partial"]
    finally:
        assert server.stop() == 0
    assert "Traceback" not in server.log()


async def test_a_note_made_unreadable_while_down_does_not_stall_the_start(
    tmp_path: Path, modes: dict[Path, int]
) -> None:
    """After a crash, the start compares history with every file it knows: one note it
    may not read raised at every retry, and search said ``partial`` for good."""
    ws = tmp_path / "ws"
    server = start_indexer(ws, prefix=as_plain_user())
    async with server.client() as c:
        for name in ("secret.md", "b.md"):
            await data(c, "write", lang="en", path=name, content=f"# {name}\n\nbeta\n")
    server.stop(signal.SIGKILL)
    chmod(modes, vault(ws) / "secret.md", 0o000)
    put(ws, "new.md", "# New\n\nfreshword\n")
    server = start_indexer(ws, prefix=as_plain_user())
    try:
        async with server.client() as c:
            assert await found(c, "freshword") == ["new.md"]
            deadline = time.monotonic() + DEADLINE
            while (await data(c, "search", lang="en", query="beta"))["partial"]:
                assert time.monotonic() < deadline, "search stayed partial"
                await asyncio.sleep(0.05)
    finally:
        assert server.stop() == 0
    assert "Traceback" not in server.log()


def chmod_when_written(path: Path, mode: int) -> threading.Thread:
    """A thread that takes ``mode`` away from ``path`` the moment it is next written (as
    a backup or sync tool may at any time), by inotify; started and armed on return."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init()
    if fd < 0 or libc.inotify_add_watch(fd, str(path).encode(), 0x2) < 0:  # IN_MODIFY
        pytest.skip("inotify is not available here")

    def run() -> None:
        try:
            os.read(fd, 4096)
            os.chmod(path, mode)
        finally:
            os.close(fd)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


async def test_an_append_that_landed_is_answered_as_done(
    tmp_path: Path, modes: dict[Path, int]
) -> None:
    """A note made unreadable between the append and the server's look at it: the call
    said "permission denied; nothing was changed" though the text was there (and in
    history), and a client trying again appended it twice."""
    ws = tmp_path / "ws"
    note = put(ws, "events/day.md", "# Day\n\nfirst event\n")
    server = start_indexer(ws, prefix=as_plain_user())
    try:
        async with server.client() as c:
            modes.setdefault(note, 0o644)
            watcher = chmod_when_written(note, 0o200)
            done = await data(c, "append", lang="en", path="events/day.md", content="second\n")
            watcher.join(5)
            assert note.read_bytes() == b"# Day\n\nfirst event\nsecond\n"  # (root reads)
            os.chmod(note, 0o644)
            assert done["etag"] == (await data(c, "read", lang="en", path="events/day.md"))["etag"]
            versions = (await data(c, "history", lang="en", path="events/day.md"))["versions"]
            assert versions[0]["op"] == "append" and versions[0]["etag"] == done["etag"]
    finally:
        assert server.stop() == 0


async def test_find_with_sizes_passes_over_what_may_not_be_read(
    tmp_path: Path, modes: dict[Path, int]
) -> None:
    """One note or folder the indexer may not read failed ``find(sizes=true)`` for the
    whole vault (the memory tool's listing), where a plain ``find`` passed over it."""
    ws = tmp_path / "ws"
    put(ws, "a.md", "# A\n\nalpha\n")
    put(ws, "b.txt", "plain\n")
    chmod(modes, put(ws, "secret.md", "# S\n"), 0o000)
    put(ws, "shut/c.md", "# C\n")
    chmod(modes, vault(ws) / "shut", 0o644)  # listed, not entered
    server = start_indexer(ws, prefix=as_plain_user())
    try:
        async with server.client() as c:
            plain = await data(c, "find", lang="en", pattern="**/*")
            sized = await data(c, "find", lang="en", pattern="**/*", sizes=True)
    finally:
        assert server.stop() == 0
    assert sized["paths"] == plain["paths"]
    assert "secret.md" in sized["paths"] and "a.md" in sized["paths"]
    assert sized["sizes"] == {"a.md": 11, "b.txt": 6}
    assert "secret.md" not in sized["body_sizes"]


async def test_a_write_keeps_the_group_of_a_shared_note(tmp_path: Path) -> None:
    """A note of another user in a group the indexer's user is in: the write could not
    give it back to its owner (only root may) and dropped its group as well, so the
    group's other members could no longer read it."""
    if os.geteuid() != 0:
        pytest.skip("the test makes a note of another user, which needs root")
    ws = tmp_path / "ws"
    note = put(ws, "shared.md", "# Shared\n")
    os.chown(note, 4242, 4343)
    os.chmod(note, 0o660)
    prefix = [*as_plain_user(), "--groups=4343"]
    prefix[1] += ",-chown"  # (root without the power to give files away: any user)
    server = start_indexer(ws, prefix=prefix)
    try:
        async with server.client() as c:
            await data(c, "write", lang="en", path="shared.md", content="# Shared\n\nmore\n")
    finally:
        assert server.stop() == 0
    info = note.stat()
    assert (info.st_gid, stat.S_IMODE(info.st_mode)) == (4343, 0o660)
    assert "more" in note.read_text()
