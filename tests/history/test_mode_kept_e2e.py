"""A note's permissions come back with it: a 0600 note deleted (or moved away) and
restored, or its delete undone, is 0600 again, not 0644 (history kept the bytes, not
the mode: a note the user made private came back readable by everyone). A history file
from before the ``mode`` column still restores, with the default mode."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastmcp import Client
from fastmcp.exceptions import ToolError
from helpers.history import entry_reason, vault_file
from helpers.indexer_process import RunningIndexer, start_indexer
from helpers.snapshots import snapshot

from indexer.sqlite_lib import sqlite3
from indexer.vault.history import schema
from shared.workspace import Workspace

pytestmark = pytest.mark.e2e

NO_SUMMARIES = {"INDEXER_SUMMARIES": "0"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningIndexer]:
    running = start_indexer(tmp_path_factory.mktemp("modes") / "ws", env=NO_SUMMARIES)
    try:
        yield running
    finally:
        running.stop()


async def call(client: Client, tool: str, **args: object) -> dict:
    result = await client.call_tool(tool, args)
    assert isinstance(result.structured_content, dict)
    return result.structured_content


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def default_mode() -> int:
    """What a new file gets: 0644 less the process umask (the server inherits ours)."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o644 & ~umask


async def private_note(client: Client, ws: Path, lang: str, path: str, mode: int = 0o600) -> Path:
    await call(client, "write", lang=lang, path=path, content=f"# {path}\n\nmine alone\n")
    file = vault_file(ws, lang, path)
    os.chmod(file, mode)
    return file


async def test_a_private_note_deleted_and_restored_is_private_again(
    server: RunningIndexer,
) -> None:
    lang, ws = "ma", server.workspace
    async with server.client() as c:
        file = await private_note(c, ws, lang, "secret.md")
        other = await private_note(c, ws, lang, "shared.md", 0o640)
        await call(c, "delete", lang=lang, path="secret.md")
        await call(c, "delete", lang=lang, path="shared.md")
        await call(c, "restore", lang=lang, path="secret.md", version=1, if_match="")
        await call(c, "restore", lang=lang, path="shared.md", version=1)
    assert mode_of(file) == 0o600
    assert mode_of(other) == 0o640  # (as it was, not narrowed nor widened by the umask)


async def test_the_images_of_a_private_note_come_back_private(server: RunningIndexer) -> None:
    lang, ws = "mb", server.workspace
    png = "iVBORw0KGgo="
    async with server.client() as c:
        note = await private_note(c, ws, lang, "n.md")
        await call(
            c, "write", lang=lang, path="n.md.assets/p.png", content=png, encoding="base64"
        )  # fmt: skip
        image = vault_file(ws, lang, "n.md.assets/p.png")
        os.chmod(image, 0o600)
        await call(c, "delete", lang=lang, path="n.md")
        assert not image.exists()
        await call(c, "restore", lang=lang, path="n.md", version=1)
    assert (mode_of(note), mode_of(image)) == (0o600, 0o600)


async def test_an_undone_delete_brings_the_note_back_private(server: RunningIndexer) -> None:
    lang, ws = "mc", server.workspace
    async with server.client() as c:
        file = await private_note(c, ws, lang, "secret.md")
        await call(c, "delete", lang=lang, path="secret.md", reason=entry_reason("D1", "gone"))
        assert not file.exists()
        await call(c, "undo", lang=lang, entry_id="D1")
    assert mode_of(file) == 0o600


async def test_a_private_note_moved_away_keeps_its_mode_back_at_its_old_path(
    server: RunningIndexer,
) -> None:
    """Undo of a move renames the file back (its mode with it); a restore of the old
    path after the move makes a new file there, with the mode the note had as it left."""
    lang, ws = "md", server.workspace
    async with server.client() as c:
        file = await private_note(c, ws, lang, "a.md")
        await private_note(c, ws, lang, "b.md")
        reason = entry_reason("M1", "move")
        await call(c, "move", lang=lang, path="a.md", new_path="moved/a.md", reason=reason)
        await call(c, "undo", lang=lang, entry_id="M1")
        assert mode_of(file) == 0o600
        await call(c, "move", lang=lang, path="b.md", new_path="moved/b.md")
        await call(c, "restore", lang=lang, path="b.md", version=1, if_match="")
    assert mode_of(vault_file(ws, lang, "b.md")) == 0o600
    assert mode_of(vault_file(ws, lang, "moved/b.md")) == 0o600


async def test_restore_over_an_existing_file_keeps_that_files_mode_and_refusals_change_nothing(
    server: RunningIndexer,
) -> None:
    """The recorded mode is for a file made again: one that is there keeps its own; a
    refused restore changes neither bytes nor mode."""
    lang, ws = "me", server.workspace
    async with server.client() as c:
        file = await private_note(c, ws, lang, "n.md")
        await call(c, "delete", lang=lang, path="n.md")
        await call(c, "write", lang=lang, path="n.md", content="# n\n\nnew\n")
        assert mode_of(file) == default_mode()
        before = snapshot(vault_file(ws, lang, ""))
        restore = {"lang": lang, "path": "n.md", "version": 1, "if_match": ""}
        with pytest.raises(ToolError, match=r"^conflict: "):
            await c.call_tool("restore", restore)
        with pytest.raises(ToolError, match=r"^invalid_argument: version 2 of n\.md records"):
            await c.call_tool("restore", {"lang": lang, "path": "n.md", "version": 2})
        assert snapshot(vault_file(ws, lang, "")) == before
        await call(c, "restore", lang=lang, path="n.md", version=1)
    assert mode_of(file) == default_mode()


async def test_a_history_file_without_the_mode_column_still_restores(tmp_path: Path) -> None:
    """An older indexer's history (no ``versions.mode``): the column is added at the
    start, the old rows restore with the default mode, new deletes record theirs."""
    ws = tmp_path / "ws"
    server = start_indexer(ws, env=NO_SUMMARIES)
    try:
        async with server.client() as c:
            await private_note(c, ws, "en", "old.md")
            await call(c, "delete", lang="en", path="old.md")
    finally:
        assert server.stop() == 0
    history = Workspace(ws).history_dir / schema.FILE_NAME
    conn = sqlite3.connect(history)
    conn.execute("ALTER TABLE versions DROP COLUMN mode")  # (the shape an older one made)
    conn.close()
    server = start_indexer(ws, env=NO_SUMMARIES)
    try:
        async with server.client() as c:
            await call(c, "restore", lang="en", path="old.md", version=1, if_match="")
            assert mode_of(vault_file(ws, "en", "old.md")) == default_mode()
            await private_note(c, ws, "en", "new.md")
            await call(c, "delete", lang="en", path="new.md")
            await call(c, "restore", lang="en", path="new.md", version=1, if_match="")
            assert mode_of(vault_file(ws, "en", "new.md")) == 0o600
    finally:
        assert server.stop() == 0
    conn = sqlite3.connect(history)
    columns = [row[1] for row in conn.execute("PRAGMA table_info(versions)")]
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    conn.close()
    assert columns[-1] == "mode" and version == schema.SCHEMA_VERSION == 1
