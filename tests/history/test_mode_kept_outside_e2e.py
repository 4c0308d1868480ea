"""A note another program removes keeps its mode on its deletion's history row, taken
from the index's row (``indexer.index.gone_modes``): the file is gone when the watcher
hears of it, and the row recorded none, so a restore made a 0600 note 0644 less the
umask, readable by all. An ``rm`` while serving, an ``rm`` while no indexer ran, and a
note moved out of the vault and back under another name (a deletion the watcher pairs
by time) all come back as they were."""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastmcp import Client
from helpers.history import vault_file
from helpers.indexer_process import RunningIndexer, start_indexer, wait_for
from test_mode_kept_e2e import NO_SUMMARIES, call, private_note
from test_mode_kept_within_e2e import restored

from indexer.sqlite_lib import sqlite3
from indexer.vault.scan import stored_ns
from shared.workspace import Workspace

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningIndexer]:
    running = start_indexer(tmp_path_factory.mktemp("modes") / "ws", env=NO_SUMMARIES)
    try:
        yield running
    finally:
        running.stop()


def indexed_as_now(ws: Path, lang: str, path: str) -> None:
    """Wait until the index's row of the file has its stat now (a ``chmod`` heard)."""
    ctime = stored_ns(vault_file(ws, lang, path).stat().st_ctime_ns)

    def seen() -> bool:
        conn = sqlite3.connect(f"file:{Workspace(ws).index_path}?mode=ro", uri=True)
        try:
            query = "SELECT ctime_ns FROM notes WHERE lang = ? AND path = ?"
            row = conn.execute(query, (lang, path)).fetchone()
        finally:
            conn.close()
        return row is not None and row[0] == ctime

    wait_for(seen, 30, what=f"the index's row of {path} as the file is now")


async def until_gone(c: Client, lang: str, path: str, moved_to: str | None = None) -> None:
    """Wait until history's latest version of ``path`` is its deletion (naming
    ``moved_to``, when given)."""
    deadline = asyncio.get_running_loop().time() + 30
    while True:
        rows = (await call(c, "history", lang=lang, path=path))["versions"]
        if rows[0]["op"] == "delete" and rows[0].get("moved_to") == moved_to:
            return
        assert asyncio.get_running_loop().time() < deadline, rows[0]
        await asyncio.sleep(0.05)


def removed_by_another_program(file: Path) -> None:
    subprocess.run(["rm", "--", str(file)], check=True)


async def test_notes_removed_by_rm_come_back_with_their_modes(server: RunningIndexer) -> None:
    """Written through the tools, made 0600 and 0640 by their owner (the group the
    process's, as a file made again there gets it), then ``rm`` (the second's folder
    with it: ``rm -r``): each as it was."""
    lang, ws = "oa", server.workspace
    async with server.client() as c:
        secret = await private_note(c, ws, lang, "secret.md")
        shared = await private_note(c, ws, lang, "d/shared.md", 0o640)
        indexed_as_now(ws, lang, "secret.md")
        indexed_as_now(ws, lang, "d/shared.md")
        removed_by_another_program(secret)
        subprocess.run(["rm", "-r", "--", str(shared.parent)], check=True)
        await until_gone(c, lang, "secret.md")
        await until_gone(c, lang, "d/shared.md")
        assert await restored(c, ws, lang, "secret.md") == 0o600
        assert await restored(c, ws, lang, "d/shared.md") == 0o640


async def test_a_note_another_program_made_private_and_removed_comes_back_private(
    server: RunningIndexer,
) -> None:
    """Made 0600 by another program (its creation recorded by the watcher), then gone."""
    lang, ws = "ob", server.workspace
    file = vault_file(ws, lang, "diary.md")
    file.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write("# diary\n\nmine alone\n")
    async with server.client() as c:
        deadline = asyncio.get_running_loop().time() + 30
        while not (await call(c, "history", lang=lang, path="diary.md"))["versions"]:
            assert asyncio.get_running_loop().time() < deadline, "the new file recorded"
            await asyncio.sleep(0.05)
        removed_by_another_program(file)
        await until_gone(c, lang, "diary.md")
        assert await restored(c, ws, lang, "diary.md") == 0o600


async def test_a_note_moved_out_and_back_under_another_name_keeps_its_mode(
    server: RunningIndexer, tmp_path: Path
) -> None:
    """Moved out of the vault (a deletion, recorded), then back as ``b.md``: the two
    pair by time (``pairing``), the deletion's row keeping the mode the index's row had."""
    lang, ws = "oc", server.workspace
    async with server.client() as c:
        note = await private_note(c, ws, lang, "a.md")
        indexed_as_now(ws, lang, "a.md")
        aside = tmp_path / "a.md"
        subprocess.run(["mv", "--", str(note), str(aside)], check=True)
        await until_gone(c, lang, "a.md")
        subprocess.run(["mv", "--", str(aside), str(vault_file(ws, lang, "b.md"))], check=True)
        await until_gone(c, lang, "a.md", moved_to="b.md")
        assert await restored(c, ws, lang, "a.md") == 0o600


async def test_a_note_removed_while_no_indexer_ran_comes_back_private(tmp_path: Path) -> None:
    """The start's reconcile removes the row and tells the deletion (``offline``)."""
    lang = "od"
    server = start_indexer(tmp_path / "ws", env=NO_SUMMARIES)
    ws = server.workspace
    try:
        async with server.client() as c:
            note = await private_note(c, ws, lang, "a.md")
            indexed_as_now(ws, lang, "a.md")
        server.stop()
        removed_by_another_program(note)
        server = start_indexer(ws, env=NO_SUMMARIES)
        async with server.client() as c:
            await until_gone(c, lang, "a.md")
            assert await restored(c, ws, lang, "a.md") == 0o600
    finally:
        server.stop()
