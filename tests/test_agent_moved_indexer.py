"""An indexer that restarts on another port in the middle of a client's command.

The client reaches the indexer through a forwarding stand-in for its port
(``helpers.mcp_proxy``), which restarts the real ``indexer serve`` (``--port 0``: a new
port) at an exact point of a command, then stops listening: the old port refuses, and the
URL file names the new one. A memory-tool command that met this failed as
``indexer_offline`` (its next call found the old port refused); now a call is made again
on the new indexer, once, when that cannot change anything twice (``agent_client.repeats``):
a read, or a call none of whose requests left the client. A write whose answer was lost
on the way may have landed: it is not made again (the Memory Writer settles its own).

The stand-in may also only stop listening (no new start named): the memory tool tells
the model a change none of whose requests connected changed nothing, and one whose
answer was lost may have been made.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import os
from collections.abc import Iterator
from datetime import UTC
from typing import Any

import pytest
from helpers.indexer_process import RunningIndexer, start_indexer, vault_dir
from helpers.mcp_proxy import DROP, McpProxy, Reply, Seen, busy_reply
from helpers.memory_tool import outcome

from agent_client import CollectingNoticeSink, MemoryEntry, MemoryWriter, VaultMemoryTool
from agent_client.connection import open_session
from agent_client.discovery import discover
from agent_client.repeats import READ_ONLY_TOOLS, noting
from agent_client.results import Version
from agent_client.settings import ClientSettings
from shared.errors import IndexerOfflineError

JSON = {"content-type": "application/json"}


class Moving:
    """A real indexer reached through ``proxy``, whose port the URL file names, until
    ``restart_elsewhere`` (run by the proxy at a chosen request) moves it. The indexer
    is the module's: it outlives the stand-in (``running``: the one running now)."""

    def __init__(self, running: RunningIndexer, folder: str) -> None:
        self.workspace = workspace = running.workspace
        self.running = running
        self.folder = folder  # the memory tool's, in the vault
        self.proxy = McpProxy(self.running.url)
        self.restarts = 0
        url_file = workspace / "indexer.mcp.url"  # (as the server writes it: a rename)
        (workspace / "url.tmp").write_text(self.proxy.url + "\n")
        os.replace(workspace / "url.tmp", url_file)

    def restart_elsewhere(self) -> None:
        """Stop the indexer, start it again on a new port (it writes the URL file), and
        close the proxy's port: a later connection to it is refused."""
        self.running.stop()
        self.running = start_indexer(self.workspace)
        assert self.running.url != self.proxy.url
        self.proxy.close_port()
        self.restarts += 1

    def after(self, tool: str, then: str | None = None) -> None:
        """Restart elsewhere once the first ``tool`` call after now is answered by the old
        indexer, before the client has the answer; ``then``: ``DROP`` it on the way."""

        def hook(seen: Seen) -> str | None:
            if seen.tool != tool or self.restarts:
                return None
            self.restart_elsewhere()
            return then

        self.proxy.after = hook

    def stop(self) -> None:
        self.proxy.stop()


@pytest.fixture(scope="module")
def indexers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[RunningIndexer]]:
    """The module's indexer, the one running now: a test that restarts it elsewhere
    leaves the new one here for the next (an indexer of each test's own was a start of
    3-7 s at load, beside the restart that is the case)."""
    running = [start_indexer(tmp_path_factory.mktemp("module") / "ws")]
    try:
        yield running
    finally:
        running[0].stop()


@pytest.fixture
def shared(indexers: list[RunningIndexer]) -> RunningIndexer:
    return indexers[0]


_folders = itertools.count()


@pytest.fixture
def moving(indexers: list[RunningIndexer]) -> Iterator[Moving]:
    """A stand-in of the test's own for the module's indexer, which the test may restart
    elsewhere, the URL file naming it, and a memory folder of the test's own (its
    notes kept apart from the other tests' by it)."""
    served = Moving(indexers[0], f"m{next(_folders):03d}")
    try:
        yield served
    finally:
        served.stop()
        indexers[0] = served.running


@pytest.fixture
def cut(moving: Moving) -> Moving:
    """The stand-in, for the tests that never restart the indexer: only its port closes."""
    return moving


def settings_of(moving: Moving) -> ClientSettings:
    return ClientSettings(workspace=moving.workspace, tz=UTC)


def memory_tool(moving: Moving) -> VaultMemoryTool:
    return VaultMemoryTool("en", folder=moving.folder, settings=settings_of(moving))


def memory(tool: VaultMemoryTool, **inp: Any) -> str:
    text, is_error = outcome(tool, inp)
    assert not is_error, text
    return str(text)


def test_a_memory_tool_edit_goes_on_at_the_new_port(moving: Moving) -> None:
    """``str_replace`` reads the file from the indexer, which then restarts on a new
    port; its write finds the old port refused (nothing of it sent) and is made at the
    new port: the command succeeds, its change is on disk once, one version in history."""
    tool = memory_tool(moving)
    try:
        memory(tool, command="create", path="/memories/m.md", file_text="one\n")
        moving.after("read")
        said = memory(
            tool, command="str_replace", path="/memories/m.md", old_str="one", new_str="two"
        )
        assert said.startswith("The memory file has been edited.")
        assert moving.restarts == 1
        assert moving.proxy.calls("write") == 1  # the create's: the edit's went to the new port
        assert memory(tool, command="view", path="/memories/m.md").endswith("\ttwo\n     2\t")
    finally:
        tool.close()
    text = (vault_dir(moving.running, "en") / moving.folder / "m.md").read_text()
    assert text.endswith("\n---\ntwo\n") and text.count("two") == 1, text
    versions = asyncio.run(history(settings_of(moving), f"{moving.folder}/m.md"))
    assert [(v["op"], v["reason"]) for v in versions] == [
        ("write", "memory_tool:str_replace"),
        ("write", "memory_tool:create"),
    ]


async def history(settings: ClientSettings, path: str) -> list[Version]:
    async with open_session(settings) as session:
        return (await session.vault("en").history(path))["versions"]


@pytest.mark.parametrize("tool", ["stat", "append"])
async def test_a_call_whose_answer_was_lost_is_made_again_only_if_it_reads(
    moving: Moving, tool: str
) -> None:
    """The old indexer ran the call, then restarted elsewhere, and its answer never came:
    a ``stat`` is asked again at the new port and answered; an ``append`` may have landed
    (it had), so it is not made again: the client says the indexer is offline, and the
    line is in the note once. The next call goes to the new port."""
    note = f"{moving.folder}/a.md"
    async with open_session(settings_of(moving)) as session:
        vault = session.vault("en")
        await vault.write(note, "# A\n")
        moving.after(tool, then=DROP)
        if tool == "stat":
            assert (await vault.stat(note))["exists"]
            assert moving.proxy.calls("stat") == 1  # the old indexer's; then the new one's
        else:
            with pytest.raises(IndexerOfflineError):
                await vault.append(note, "appended\n")
        assert moving.restarts == 1
        landed = "appended\n" if tool == "append" else ""
        assert (await vault.read(note))["content"].endswith(f"\n# A\n{landed}")
        assert session.endpoint == discover(
            moving.workspace / "indexer.mcp.url", moving.workspace / "indexer.mcp.token"
        )
    text = (vault_dir(moving.running, "en") / note).read_text()
    assert text.endswith(f"\n# A\n{landed}") and text.count("appended") == (1 if landed else 0)


async def test_the_read_only_tools_are_those_the_indexer_marks_so(shared: RunningIndexer) -> None:
    """``READ_ONLY_TOOLS`` (made again after a lost answer) are the tools the indexer
    marks ``readOnlyHint``: a tool that changes something is never among them."""
    async with shared.client() as client:
        tools = await client.list_tools()
    marked = {t.name for t in tools if t.annotations and t.annotations.read_only_hint}
    assert marked == READ_ONLY_TOOLS


@pytest.mark.parametrize(
    ("command", "lost"),
    [("str_replace", "write"), ("delete", "delete")],
)
def test_a_memory_tool_change_whose_answer_was_lost_says_it_may_have_landed(
    moving: Moving, command: str, lost: str
) -> None:
    """The old indexer made the change, restarted elsewhere, and its answer never came:
    the change is not made again (it may have landed: here it had), and the model is told
    to look before trying again, not that nothing was changed."""
    tool = memory_tool(moving)
    inputs = {
        "str_replace": {"path": "/memories/m.md", "old_str": "one", "new_str": "two"},
        "delete": {"path": "/memories/m.md"},
    }[command]
    try:
        memory(tool, command="create", path="/memories/m.md", file_text="one\n")
        moving.after(lost, then=DROP)
        text, is_error = outcome(tool, {"command": command, **inputs})
    finally:
        tool.close()
    assert moving.restarts == 1
    said = "its change may or may not have been made: view the path before trying again"
    assert is_error and said in str(text) and "nothing was changed" not in str(text), text
    folder = vault_dir(moving.running, "en") / moving.folder
    landed = {
        "str_replace": lambda: (folder / "m.md").read_text().endswith("\ntwo\n"),
        "delete": lambda: not (folder / "m.md").exists(),
    }[command]
    assert landed(), sorted(p.name for p in folder.iterdir())


def cut_after(moving: Moving, tool: str | None, then: str | None = None) -> None:
    """Close the stand-in's port (the indexer gone, no new start named) once the first
    ``tool`` call after now is answered, before the client has the answer (``then``:
    ``DROP`` it on the way); with no ``tool``, at once."""
    if tool is None:
        moving.proxy.close_port()
        return

    def hook(seen: Seen) -> str | None:
        if seen.tool != tool:
            return None
        moving.proxy.after = lambda seen: None
        moving.proxy.close_port()
        return then

    moving.proxy.after = hook


CHANGES: dict[str, dict[str, Any]] = {
    "create": {"path": "/memories/n.md", "file_text": "new\n"},
    "str_replace": {"path": "/memories/m.md", "old_str": "one", "new_str": "two"},
    "insert": {"path": "/memories/m.md", "insert_line": 0, "insert_text": "zero\n"},
    "delete": {"path": "/memories/m.md"},
    "rename": {"old_path": "/memories/m.md", "new_path": "/memories/r.md"},
}
# The memory folder after each change made: its files, and m.md's body.
MADE: dict[str, tuple[list[str], str | None]] = {
    "create": (["m.md", "n.md"], "one\n"),
    "str_replace": (["m.md"], "two\n"),
    "insert": (["m.md"], "zero\none\n"),
    "delete": ([], None),
    "rename": (["r.md"], None),
}


@pytest.mark.parametrize(
    ("command", "cut_at", "then"),
    [
        ("create", None, None),
        ("str_replace", "read", None),
        ("insert", "read", None),
        ("delete", "stat", None),
        ("str_replace", "write", DROP),
        ("create", "write", DROP),
        ("delete", "delete", DROP),
        ("rename", "move", DROP),
    ],
)
def test_a_change_refused_before_it_was_sent_is_said_to_be_unchanged(
    cut: Moving, command: str, cut_at: str | None, then: str | None
) -> None:
    """The indexer's port closes in the middle of a memory-tool change, no new start
    named (nothing to make it again on). A change none of whose requests connected was
    not made: the model is told "nothing was changed" (it was told the change "may or
    may not have been made" though not a byte of it left); one whose request went out
    and whose answer was lost may have landed (here it had): the model is told so."""
    tool = memory_tool(cut)
    try:
        memory(tool, command="create", path="/memories/m.md", file_text="one\n")
        writes = cut.proxy.calls("write")
        cut_after(cut, cut_at, then)
        text, is_error = outcome(tool, {"command": command, **CHANGES[command]})
    finally:
        tool.close()
    made = then == DROP
    assert cut.restarts == 0 and is_error, text
    maybe = "its change may or may not have been made: view the path before trying again"
    said = maybe if made else "nothing was changed"
    offline = "indexer_offline: the memory store (the vault indexer) is offline"
    assert f"{offline}; {said}. Try again later." == str(text), text
    assert cut.proxy.calls("write") == writes + (1 if made and cut_at == "write" else 0)
    folder = vault_dir(cut.running, "en") / cut.folder
    names, body = MADE[command] if made else (["m.md"], "one\n")
    assert sorted(p.name for p in folder.iterdir()) == names
    if body is not None:
        assert (folder / "m.md").read_text().endswith(f"\n---\n{body}")


@pytest.mark.parametrize("refusal", ["busy", "session gone"])
@pytest.mark.parametrize(("command", "refused_tool"), [("create", "write"), ("delete", "delete")])
def test_a_change_refused_unread_then_offline_is_said_to_be_unchanged(
    cut: Moving, refusal: str, command: str, refused_tool: str
) -> None:
    """The indexer refuses a change's request unread (busy at its cap: a 503; or a
    session it no longer knows: a 404), then its port closes before the client asks
    again: nothing of the change ran, and the model is told "nothing was changed" (it
    was told the change "may or may not have been made": an answer had come back)."""
    gone = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Session not found"}}
    reply = busy_reply() if refusal == "busy" else Reply(404, json.dumps(gone).encode(), JSON)

    def answer(seen: Seen) -> Reply | None:
        if seen.tool != refused_tool:
            return None
        cut.proxy.answer = lambda seen: None
        cut.proxy.close_port()
        return reply

    tool = memory_tool(cut)
    try:
        memory(tool, command="create", path="/memories/m.md", file_text="one\n")
        asked = cut.proxy.calls(refused_tool)
        cut.proxy.answer = answer
        text, is_error = outcome(tool, {"command": command, **CHANGES[command]})
    finally:
        tool.close()
    offline = "indexer_offline: the memory store (the vault indexer) is offline"
    assert is_error and str(text) == f"{offline}; nothing was changed. Try again later.", text
    assert cut.proxy.calls(refused_tool) == asked + 1
    folder = vault_dir(cut.running, "en") / cut.folder
    assert sorted(p.name for p in folder.iterdir()) == ["m.md"]


def test_what_a_change_sent_counts_only_its_own_requests() -> None:
    """A command's noting counts the requests of the changing calls made within, not
    those of a read (the tool list) or of connecting again; a changing call of which
    nothing was noted (no ``NotingTransport`` under it) counts as sent: nothing is known,
    so the model is told to look."""
    with noting() as command:
        with noting():  # a read, or connecting again
            pass
        assert (command.refused, command.sent) == (0, 0)
        with noting(changing=True):
            pass
    assert (command.refused, command.sent) == (0, 1)


def test_the_writer_merges_again_at_the_new_start_an_entry_whose_write_was_lost(
    moving: Moving, caplog: pytest.LogCaptureFixture
) -> None:
    """A knowledge merge's write reaches the old indexer, which restarts elsewhere; its
    answer never comes. The call is not made again (it was sent), so the Memory Writer's
    own retry settles it (``SessionKeeper.moved``): the merge's writes are taken back at
    the new start, and the entry is merged there once: one note, its text once."""
    sink = CollectingNoticeSink()
    writer = MemoryWriter(settings_of(moving), sink)
    try:
        writer.submit([MemoryEntry("en", "knowledge", "Kiwi", "A kiwi is a fruit.")])
        assert writer.flush(60)
        moving.after("write", then=DROP)
        with caplog.at_level(logging.INFO, logger="agent_client.writer"):
            writer.submit([MemoryEntry("en", "knowledge", "Mango", "A mango is a fruit.")])
            assert writer.flush(60)
    finally:
        writer.close()
    assert moving.restarts == 1
    assert [(n.ok, n.error) for n in sink.notices] == [(True, None), (True, None)]
    assert any("the indexer restarted; trying it there" in r.getMessage() for r in caplog.records)
    items = vault_dir(moving.running, "en") / "items"
    assert sorted(p.name for p in items.glob("[!.]*.md")) == ["kiwi.md", "mango.md"]
    assert (items / "mango.md").read_text().count("A mango is a fruit.") == 1
