"""A note of another group than the one a file made again gets comes back no more open
than it was: history keeps its mode, not its group, so a 0640 note of group A deleted
and restored (or its delete undone) was 0640 under the process's group B, readable by
every member of B where only A could read it. Its group bits count as its bits for
others then (as ``indexer.jobs.group_bits`` narrows USER.md); in a set-group-ID folder
of A, the file comes back under A, its mode as it was. Real groups: chown needs root."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator

import pytest
from fastmcp import Client
from helpers.history import entry_reason, vault_file
from helpers.indexer_process import RunningIndexer, start_indexer

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(os.geteuid() != 0, reason="a file of another group needs root (chown)"),
]

OTHER_GROUP = 54_321  # (any number: root may give a file a group with no name)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningIndexer]:
    ws = tmp_path_factory.mktemp("groups") / "ws"
    running = start_indexer(ws, env={"INDEXER_SUMMARIES": "0"})
    try:
        yield running
    finally:
        running.stop()


async def call(client: Client, tool: str, **args: object) -> None:
    await client.call_tool(tool, args)


def bits_and_group(path: os.PathLike[str]) -> tuple[int, int]:
    info = os.stat(path)
    return stat.S_IMODE(info.st_mode), info.st_gid


async def test_a_note_of_another_group_comes_back_closed_to_the_process_group(
    server: RunningIndexer,
) -> None:
    lang, ws = "mg", server.workspace
    async with server.client() as c:
        for name in ("سرّ.md", "b.md"):
            await call(c, "write", lang=lang, path=name, content="# A\n\nfor group A\n")
            os.chown(vault_file(ws, lang, name), -1, OTHER_GROUP)
            os.chmod(vault_file(ws, lang, name), 0o640)
        await call(c, "delete", lang=lang, path="سرّ.md")
        await call(c, "restore", lang=lang, path="سرّ.md", version=1)
        await call(c, "delete", lang=lang, path="b.md", reason=entry_reason("G1", "gone"))
        await call(c, "undo", lang=lang, entry_id="G1")
    assert bits_and_group(vault_file(ws, lang, "سرّ.md")) == (0o600, os.getegid())
    assert bits_and_group(vault_file(ws, lang, "b.md")) == (0o600, os.getegid())


async def test_in_a_set_group_id_folder_of_the_group_its_mode_is_kept(
    server: RunningIndexer,
) -> None:
    lang, ws = "mh", server.workspace
    async with server.client() as c:
        await call(c, "write", lang=lang, path="team/n.md", content="# A\n\nfor group A\n")
        folder = vault_file(ws, lang, "team")
        os.chown(folder, -1, OTHER_GROUP)
        os.chmod(folder, 0o2770)
        os.chown(vault_file(ws, lang, "team/n.md"), -1, OTHER_GROUP)
        os.chmod(vault_file(ws, lang, "team/n.md"), 0o640)
        await call(c, "write", lang=lang, path="team/mine.md", content="# B\n\nfor B\n")
        os.chown(vault_file(ws, lang, "team/mine.md"), -1, os.getegid())  # (not A's)
        os.chmod(vault_file(ws, lang, "team/mine.md"), 0o640)
        for name in ("team/n.md", "team/mine.md"):
            await call(c, "delete", lang=lang, path=name)
            await call(c, "restore", lang=lang, path=name, version=1)
    assert bits_and_group(vault_file(ws, lang, "team/n.md")) == (0o640, OTHER_GROUP)
    # (one of the process's group made again in A's folder is A's: not readable by A)
    assert bits_and_group(vault_file(ws, lang, "team/mine.md")) == (0o600, OTHER_GROUP)
