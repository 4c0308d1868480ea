"""The files the indexer itself takes away within another operation keep their mode on
their history row, as a delete's do: a file an undo deletes (a note the entry made, a
file renamed back), an image moved with its note, a file of a moved folder, a folder's
``.overview.md`` that went with its folder (deleted, emptied by an undo, moved) come
back 0600 when restored, not 0644 less the umask (their rows recorded no mode)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastmcp import Client
from helpers.history import entry_reason, vault_file
from helpers.indexer_process import RunningIndexer, start_indexer, wait_for
from test_mode_kept_e2e import NO_SUMMARIES, call, mode_of, private_note

pytestmark = pytest.mark.e2e

SUMMARY = "---\ntype: summary\ntitle: {folder}/\n---\n\nwhat is in here\n"
PNG = "iVBORw0KGgo="


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningIndexer]:
    running = start_indexer(tmp_path_factory.mktemp("modes") / "ws", env=NO_SUMMARIES)
    try:
        yield running
    finally:
        running.stop()


def private_summary(ws: Path, lang: str, folder: str) -> Path:
    """A folder summary as the job writes one (here by hand: the job is off), 0600."""
    file = vault_file(ws, lang, f"{folder}/.overview.md")
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(SUMMARY.format(folder=folder))
    os.chmod(file, 0o600)
    return file


async def restored(c: Client, ws: Path, lang: str, path: str, version: int = 1) -> int:
    """The mode of ``path`` restored (its ``version``) where no file is."""
    assert not vault_file(ws, lang, path).exists()
    await call(c, "restore", lang=lang, path=path, version=version, if_match="")
    return mode_of(vault_file(ws, lang, path))


async def test_a_note_an_undo_deleted_and_its_lone_summary_come_back_private(
    server: RunningIndexer,
) -> None:
    """Undo of the entry that made ``ev/day.md`` deletes it, and the summary the job
    left in its emptied folder goes with the folder (``lone_summaries.drop``)."""
    lang, ws = "ua", server.workspace
    async with server.client() as c:
        reason = entry_reason("C1", "made")
        await call(c, "write", lang=lang, path="ev/day.md", content="# day\n", reason=reason)
        os.chmod(vault_file(ws, lang, "ev/day.md"), 0o600)
        private_summary(ws, lang, "ev")
        await call(c, "undo", lang=lang, entry_id="C1")
        assert not vault_file(ws, lang, "ev").exists()
        assert await restored(c, ws, lang, "ev/day.md") == 0o600
        assert await restored(c, ws, lang, "ev/.overview.md") == 0o600


async def test_a_note_renamed_back_by_an_undo_keeps_its_mode_where_it_was_moved(
    server: RunningIndexer,
) -> None:
    """The undo's delete row at the path the entry moved the note to (a rename back)."""
    lang, ws = "ub", server.workspace
    async with server.client() as c:
        await private_note(c, ws, lang, "a.md")
        reason = entry_reason("M1", "move")
        await call(c, "move", lang=lang, path="a.md", new_path="moved/a.md", reason=reason)
        await call(c, "undo", lang=lang, entry_id="M1")
        assert mode_of(vault_file(ws, lang, "a.md")) == 0o600
        assert await restored(c, ws, lang, "moved/a.md") == 0o600


async def test_an_image_moved_with_its_note_keeps_its_mode_at_its_old_path(
    server: RunningIndexer,
) -> None:
    lang, ws = "uc", server.workspace
    async with server.client() as c:
        await private_note(c, ws, lang, "n.md")
        image = "n.md.assets/p.png"
        await call(c, "write", lang=lang, path=image, content=PNG, encoding="base64")
        os.chmod(vault_file(ws, lang, image), 0o600)
        await call(c, "move", lang=lang, path="n.md", new_path="m.md")
        assert await restored(c, ws, lang, image) == 0o600


async def test_the_files_and_summary_of_a_moved_folder_keep_their_modes_at_their_old_paths(
    server: RunningIndexer,
) -> None:
    lang, ws = "ud", server.workspace
    async with server.client() as c:
        await private_note(c, ws, lang, "f/a.md")
        private_summary(ws, lang, "f")
        await call(c, "move", lang=lang, path="f", new_path="g")
        assert await restored(c, ws, lang, "f/a.md") == 0o600
        assert await restored(c, ws, lang, "f/.overview.md") == 0o600


async def test_the_summary_of_a_deleted_folder_comes_back_private(
    server: RunningIndexer,
) -> None:
    lang, ws = "ue", server.workspace
    async with server.client() as c:
        await private_note(c, ws, lang, "f/a.md")
        await call(c, "delete", lang=lang, path="f/a.md")
        private_summary(ws, lang, "f")
        await call(c, "delete", lang=lang, path="f")
        assert not vault_file(ws, lang, "f").exists()
        assert await restored(c, ws, lang, "f/.overview.md") == 0o600


async def test_a_summary_the_job_removes_comes_back_private(tmp_path: Path) -> None:
    """The summaries job removes the summary of a folder whose last note went (its row
    kept no mode: a restore made it 0644 less the umask)."""
    lang = "uf"
    env = {"INDEXER_LLM_MODEL": "", "INDEXER_SUMMARIES_DEBOUNCE": "0.1"}  # (the fallback)
    server = start_indexer(tmp_path / "ws", env=env)
    ws = server.workspace
    summary = vault_file(ws, lang, "f/.overview.md")
    try:
        async with server.client() as c:
            await private_note(c, ws, lang, "f/a.md")
            wait_for(summary.exists, 30, what="the job's summary of f/")
            os.chmod(summary, 0o600)
            await call(c, "delete", lang=lang, path="f/a.md")
            wait_for(lambda: not summary.exists(), 30, what="the summary removed by the job")
            assert vault_file(ws, lang, "f").is_dir()  # (the job's removal, not the delete's)
            rows = (await call(c, "history", lang=lang, path="f/.overview.md"))["versions"]
            assert rows[0]["op"] == "delete" and rows[0]["actor"] == "job:summaries", rows
            assert await restored(c, ws, lang, "f/.overview.md") == 0o600
    finally:
        server.stop()


async def test_a_folder_renamed_by_another_program_keeps_its_files_modes_at_their_old_paths(
    server: RunningIndexer,
) -> None:
    """``mv f g`` outside the tools: the watcher's catch-up pairs each rename
    (``outside.observe_renames``), and the old path's deletion row takes the file's mode
    at its new path (one stat): its row had none."""
    lang, ws = "ug", server.workspace
    async with server.client() as c:
        await private_note(c, ws, lang, "f/a.md")
        os.rename(vault_file(ws, lang, "f"), vault_file(ws, lang, "g"))

        async def gone() -> bool:
            rows = (await call(c, "history", lang=lang, path="f/a.md"))["versions"]
            return rows[0]["op"] == "delete"

        deadline = asyncio.get_running_loop().time() + 30
        while not await gone():
            assert asyncio.get_running_loop().time() < deadline, "the rename recorded"
            await asyncio.sleep(0.05)
        assert await restored(c, ws, lang, "f/a.md") == 0o600
