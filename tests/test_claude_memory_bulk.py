"""The memory tool on big folders, against a real ``indexer serve``: a folder's
``delete`` keeps a few deletes in flight at once, and one cut short midway says how many
files it deleted (as many as are gone from disk) and that the others are still there
(seen through a stand-in for the server's port, ``helpers.mcp_proxy``); a ``rename``
that takes longer than one call may is waited for, or said to be still running."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.indexer_process import RunningIndexer, start_indexer, vault_dir, wait_for
from helpers.mcp_proxy import McpProxy, Seen
from helpers.memory_tool import outcome

from agent_client import ClientSettings, VaultMemoryTool
from agent_client.claude_memory import bulk, store

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
    # the deletes in flight when the port closed reached the server, their answers lost
    said = re.search(
        r"the command stopped part way \((\d+) file\(s\) of the folder were deleted"
        r"(?:, (\d+) more may have been)?, the others are still there\): view the path",
        text,
    )
    assert said, text
    deleted, maybe = int(said[1]), int(said[2] or 0)
    assert deleted <= gone <= deleted + maybe <= deleted + bulk.IN_FLIGHT, text


# -- a rename that takes longer than one call may ------------------------------------------

MOVED = 3000  # files: a move of several seconds, past the short timeout below
TIMEOUT = 0.5


@pytest.fixture(scope="module")
def slow_mover(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningIndexer]:
    """An indexer whose vault holds two folders of ``MOVED`` files each, made before it
    started (its start-up reconcile takes them in)."""
    workspace = tmp_path_factory.mktemp("slow") / "ws"
    for name in ("one", "two"):
        for i in range(MOVED):
            folder = workspace / "memory/languages/en/vault/mem" / name / f"d{i % 30:02d}"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"f{i:05d}.txt").write_text(f"file {i}\n")
    running = start_indexer(workspace, env={"INDEXER_SUMMARIES": "0"}, timeout=180)
    try:
        yield running
    finally:
        running.stop()


def short_timeout_tool(server: RunningIndexer) -> VaultMemoryTool:
    settings = ClientSettings(server.workspace, call_timeout=TIMEOUT)
    return VaultMemoryTool("en", folder="mem", settings=settings)


def test_a_rename_past_the_call_timeout_is_waited_for(slow_mover: RunningIndexer) -> None:
    """The move gets no answer within the timeout and goes on in the server; the tool
    waits until it sees it made (was: "indexer_offline ... may or may not have been
    made", and a view right after still showed the old folder)."""
    rename = {"command": "rename", "old_path": "/memories/one", "new_path": "/memories/won"}
    with short_timeout_tool(slow_mover) as tool:
        started = time.monotonic()
        text, is_error = outcome(tool, rename)
        took = time.monotonic() - started
        listing, _ = outcome(tool, {"command": "view", "path": "/memories"})
    assert (text, is_error) == ("Successfully renamed /memories/one to /memories/won", False)
    assert took > TIMEOUT  # (the case: a move longer than one call may take)
    assert "/memories/won/" in listing and "/memories/one/" not in listing, listing
    vault = vault_dir(slow_mover, "en") / "mem"
    assert not (vault / "one").exists()
    assert len(files_below(vault / "won")) == MOVED


def test_a_rename_still_running_past_the_wait_says_so(
    slow_mover: RunningIndexer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store, "MOVE_WAITS", 0)  # (no wait past the call's own timeout)
    rename = {"command": "rename", "old_path": "/memories/two", "new_path": "/memories/too"}
    with short_timeout_tool(slow_mover) as tool:
        text, is_error = outcome(tool, rename)
    assert is_error
    waited = re.fullmatch(
        r"timeout: the indexer gave no answer to the rename within (\S+) s,.*", text
    )
    assert waited is not None, text
    assert TIMEOUT <= float(waited[1]) < TIMEOUT + 2  # (the time waited, said as measured)
    assert text.endswith(
        " though it answers other calls: it may still be moving /memories/two (a large"
        " folder takes long) or have refused it; view /memories/two and /memories/too"
        " later to see whether it was renamed"
    )
    vault = vault_dir(slow_mover, "en") / "mem"
    wait_for(lambda: not (vault / "two").exists(), 120, what="the move to go on")
    assert len(files_below(vault / "too")) == MOVED
