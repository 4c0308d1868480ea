"""The memory tool on big folders, against a real ``indexer serve`` reached through a
stand-in for its port (``helpers.mcp_proxy``) that watches the calls: a folder's
``delete`` keeps a few deletes in flight at once, and one cut short midway says how many
files it deleted (as many as are gone from disk) and that the others are still there."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.indexer_process import RunningIndexer, start_indexer, vault_dir
from helpers.mcp_proxy import McpProxy, Seen
from helpers.memory_tool import outcome

from agent_client import ClientSettings, VaultMemoryTool
from agent_client.claude_memory import bulk

pytestmark = pytest.mark.e2e
FILES = 60


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RunningIndexer]:
    running = start_indexer(tmp_path / "ws", env={"INDEXER_SUMMARIES": "0"})
    try:
        yield running
    finally:
        running.stop()


class Watching:
    """The proxy's view of the delete calls: how many are in flight, the most at once."""

    def __init__(self, close_after: int | None = None) -> None:
        self.in_flight = 0
        self.most = 0
        self.answered = 0
        self.close_after = close_after
        self.proxy: McpProxy | None = None

    def answer(self, seen: Seen) -> None:
        if seen.tool == "delete":
            self.in_flight += 1
            self.most = max(self.most, self.in_flight)

    def after(self, seen: Seen) -> None:
        if seen.tool == "delete":
            self.in_flight -= 1
            self.answered += 1
            if self.answered == self.close_after and self.proxy is not None:
                self.proxy.close_port()  # the indexer gone: no later delete connects


def through_proxy(server: RunningIndexer, watching: Watching) -> McpProxy:
    """The stand-in, named by the URL file (written as the server writes it)."""
    proxy = McpProxy(server.url, answer=watching.answer, after=watching.after)
    watching.proxy = proxy
    (server.workspace / "url.tmp").write_text(proxy.url + "\n")
    os.replace(server.workspace / "url.tmp", server.workspace / "indexer.mcp.url")
    return proxy


def big_folder(server: RunningIndexer, folder: str) -> Path:
    """``FILES`` notes and text files in 6 folders, written through the tool."""
    tool = VaultMemoryTool("en", folder=folder, settings=ClientSettings(server.workspace))
    with tool:
        for i in range(FILES):
            name = f"/memories/big/d{i % 6}/f{i:03d}.{'md' if i % 2 else 'txt'}"
            tool.call({"command": "create", "path": name, "file_text": f"file {i}\n"})
    return vault_dir(server, "en") / folder / "big"


def files_below(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file()] if folder.exists() else []


def test_a_folders_delete_keeps_a_few_deletes_in_flight(server: RunningIndexer) -> None:
    folder = big_folder(server, "m1")
    watching = Watching()
    proxy = through_proxy(server, watching)
    try:
        with VaultMemoryTool("en", folder="m1", settings=ClientSettings(server.workspace)) as tool:
            text, is_error = outcome(tool, {"command": "delete", "path": "/memories/big"})
    finally:
        proxy.stop()
    assert (text, is_error) == ("Successfully deleted /memories/big", False)
    assert not folder.exists()
    assert 1 < watching.most <= bulk.IN_FLIGHT  # (was 1: one delete after another)
    assert proxy.calls("delete") == FILES + 6 + 1  # each file, each folder, the folder


def test_a_delete_cut_short_says_how_many_files_went(server: RunningIndexer) -> None:
    folder = big_folder(server, "m2")
    watching = Watching(close_after=10)
    proxy = through_proxy(server, watching)
    try:
        with VaultMemoryTool("en", folder="m2", settings=ClientSettings(server.workspace)) as tool:
            text, is_error = outcome(tool, {"command": "delete", "path": "/memories/big"})
    finally:
        proxy.stop()
    assert is_error
    left = len(files_below(folder))
    gone = FILES - left
    assert 10 <= gone < FILES
    assert text.startswith("indexer_offline: "), text
    assert (
        f"the command stopped part way ({gone} file(s) of the folder were deleted, the others"
        " are still there): view the path" in text
    ), text
