"""The agent client against an indexer without history (an older one), in memory.

Such a server validates tool arguments strictly and has no ``reason`` parameter: the
client must not send one, or every write of the writer would be refused. Built here as
the round-1 tool set over the real vault, next to today's server as the control.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path

import pytest
from anthropic.lib.tools import ToolError
from fastmcp import Client, FastMCP
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext

from agent_client.claude_memory import store as store_module
from agent_client.claude_memory.paths import check
from agent_client.claude_memory.store import MAX_LISTED, Kind, MemoryStore
from agent_client.claude_memory.texts import ListedItem, Listing, view_directory
from agent_client.connection import VaultSession
from agent_client.discovery import Endpoint
from agent_client.events import append_event
from agent_client.merge.journal import WriteJournal
from agent_client.merge.knowledge import merge_knowledge
from agent_client.settings import ClientSettings
from indexer.core import Core
from indexer.settings import Settings
from indexer.vault.body_sizes import BodySizes
from indexer.vault.fsops import etag_of
from indexer.vault.history.store import HistoryStore
from indexer.vault.sandbox import Sandbox
from indexer.vault.vault import Vault as ServerVault
from indexer.web.mcp import create_server, refusals
from shared.errors import NotFoundError, VaultError
from shared.models import MemoryEntry
from shared.workspace import Workspace

T0 = datetime(2026, 11, 29, 20, 0, 0, tzinfo=UTC)


def round_one_server(vault: ServerVault) -> FastMCP:
    """The file tools as they were before history: no ``reason``, no history tools."""
    mcp = FastMCP("vault-before-history", mask_error_details=True, strict_input_validation=True)

    def read(lang: str, path: str, offset: int = 0, limit: int | None = None) -> dict:
        return vault.read(lang, path, offset, limit)

    def write(
        lang: str, path: str, content: str, encoding: str = "utf-8", if_match: str | None = None
    ) -> dict:
        return vault.write(lang, path, content, encoding, if_match)

    def stat(lang: str, path: str) -> dict:
        return vault.stat(lang, path)

    def append(lang: str, path: str, content: str, create: bool = True) -> dict:
        return vault.append(lang, path, content, create)

    def grep(
        lang: str,
        pattern: str,
        path: str = "",
        glob: str = "**/*.md",
        fixed: bool = False,
        ignore_case: bool = False,
        limit: int = 100,
    ) -> dict:
        return vault.grep(lang, pattern, path, glob, fixed, ignore_case, limit)

    def delete(lang: str, path: str) -> dict:
        return vault.delete(lang, path)

    for tool in (read, write, stat, append, grep, delete):
        mcp.tool(name=tool.__name__)(refusals(tool))
    return mcp


@asynccontextmanager
async def session_on(server: FastMCP) -> AsyncIterator[VaultSession]:
    async with Client(server) as client:
        yield VaultSession(client, Endpoint("memory://vault"), call_timeout=10.0)


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path / "ws")


def entry(kind: str = "knowledge", title: str = "Go") -> MemoryEntry:
    return MemoryEntry("en", kind, title, "gone: past participle", [], T0)  # type: ignore[arg-type]


async def test_an_older_server_gets_no_reason_and_says_what_it_lacks(
    workspace: Workspace,
) -> None:
    server = round_one_server(ServerVault(Sandbox(workspace), max_file_bytes=1 << 20))
    async with session_on(server) as session:
        with pytest.raises(VaultError):  # what sending a reason would get
            await session.call(
                "write", {"lang": "en", "path": "a.md", "content": "# A\n", "reason": "x"}
            )
        vault = session.vault("en")
        assert not await vault.has_history()
        await vault.write("a.md", "# A\n", reason="entry:e1 A")
        await vault.append("a.md", "more\n", reason="entry:e1 A")
        await vault.delete("a.md", reason="entry:e1 A")

        event = entry("event", "Lesson")
        assert (await append_event(vault, event, UTC))["path"] == "events/2026/11/29.md"
        settings = ClientSettings(workspace=workspace.root, tz=UTC)
        outcome = await merge_knowledge(vault, entry(), settings, llm_client=lambda: None)  # type: ignore[arg-type,return-value]
        assert outcome.method == "fallback"
        assert outcome.confirmation.updated_files == ["items/go.md"]

        calls = {
            "history": lambda: vault.history("items/go.md"),
            "diff": lambda: vault.diff("items/go.md", 1),
            "read": lambda: vault.read("items/go.md", version=1),
            "restore": lambda: vault.restore("items/go.md", 1),
            "undo": lambda: vault.undo("e1"),
        }
        for name, call in calls.items():
            with pytest.raises(NotFoundError, match=rf"has no `{name}` tool \(it predates"):
                await call()

        journal = WriteJournal(vault, entry(title="Went"))
        await journal.write("items/went.md", "# Went\n", if_match="")
        assert await journal.rollback() == "this indexer keeps no history to undo with"
        assert (workspace.vault_dir("en") / "items/went.md").exists()  # left as it is


async def test_todays_server_gets_the_reason(workspace: Workspace) -> None:
    store = HistoryStore(workspace.history_dir, etag_of)
    store.open()
    try:
        vault = ServerVault(Sandbox(workspace), max_file_bytes=1 << 20, history=store)
        server = create_server(Core(Settings(workspace=workspace), vault))
        async with session_on(server) as session:
            handle = session.vault("en")
            assert await handle.has_history()
            event = entry("event", "Lesson\tone")
            await append_event(handle, event, UTC)
        rows = store.versions("en", "events/2026/11/29.md", 10)
        assert [r.reason for r in rows] == [f"entry:{event.id} Lesson one"] * 2
    finally:
        store.close()


class Calls(Middleware):
    """The tools a server was asked to run, in order."""

    def __init__(self) -> None:
        self.names: list[str] = []

    async def on_call_tool(self, context: MiddlewareContext, call_next: CallNext) -> object:
        self.names.append(context.message.name)
        return await call_next(context)


def before_sizes_server(vault: ServerVault) -> FastMCP:
    """``read``, ``stat`` and ``find`` as they were before ``find`` had ``sizes``."""
    mcp = FastMCP("vault-before-sizes", mask_error_details=True, strict_input_validation=True)

    def read(lang: str, path: str, offset: int = 0, limit: int | None = None) -> dict:
        return vault.read(lang, path, offset, limit)

    def stat(lang: str, path: str) -> dict:
        return vault.stat(lang, path)

    def find(
        lang: str, pattern: str = "**/*.md", path: str = "", limit: int = 200, dirs: bool = False
    ) -> dict:
        return vault.find(lang, pattern, path, limit, dirs)

    for tool in (read, stat, find):
        mcp.tool(name=tool.__name__)(refusals(tool))
    return mcp


async def _listing(server: FastMCP) -> tuple[list[ListedItem], list[str]]:
    calls = Calls()
    server.add_middleware(calls)
    async with session_on(server) as session:
        listing = await MemoryStore(session.vault("en"), "memories").listing(check("/memories"))
        listed = listing.items
    return listed, calls.names


async def test_a_memory_listing_is_two_calls_and_an_older_server_shows_the_same(
    workspace: Workspace,
) -> None:
    """``view`` of a memory folder: today's server measures every file in its two
    ``find`` calls (it was one ``read`` per note); on a server whose ``find`` has no
    ``sizes`` (it refuses the argument), the client measures each file as before."""
    vault = ServerVault(Sandbox(workspace), max_file_bytes=1 << 20)
    for i in range(20):
        vault.write("en", f"memories/n{i}.md", f"note {i}\n")
    vault.write("en", "memories/sub/deep.md", "---\ntrailing_newlines: 3\n---\nthree\n")
    vault.write("en", "memories/sub/plain.txt", "---\nkept: as is\n---\n")
    vault.write("en", "memories/sub/x/too_deep.md", "not listed\n")
    settings = Settings(workspace=workspace, max_file_bytes=1 << 20)
    listed, names = await _listing(create_server(Core(settings, vault)))
    assert names == ["find", "find"]
    assert ListedItem("n7.md", len("note 7\n")) in listed
    assert ListedItem("sub/deep.md", len("three\n\n\n")) in listed
    assert ListedItem("sub/plain.txt", len("---\nkept: as is\n---\n")) in listed
    assert len(listed) == 24  # 20 notes, sub/, and its two files and one folder
    before, names = await _listing(before_sizes_server(vault))
    assert before == listed
    assert names.count("find") == 2 and names.count("read") == 21


async def test_a_memory_listing_measures_the_notes_the_server_had_no_time_for(
    workspace: Workspace,
) -> None:
    """A server that ran out of ``find_sizes_max_seconds`` gives no size for the notes
    left (not their size on disk, which counts the frontmatter): the client measures
    each of those itself, and the listing shows what a fully measured one shows."""
    vault = ServerVault(Sandbox(workspace), max_file_bytes=1 << 20)
    for i in range(3):
        vault.write("en", f"memories/n{i}.md", f"---\ntrailing_newlines: {i}\n---\nnote\n")
    vault.write("en", "memories/sub/plain.txt", "---\nkept: as is\n---\n")
    settings = Settings(workspace=workspace, max_file_bytes=1 << 20)
    measured, names = await _listing(create_server(Core(settings, vault)))
    assert names == ["find", "find"]
    assert ListedItem("n0.md", len("note")) in measured
    vault.body_sizes, vault.find_sizes_max_seconds = BodySizes(), 0.0  # nothing known
    listed, names = await _listing(create_server(Core(settings, vault)))
    assert listed == measured
    assert names.count("find") == 2 and names.count("read") == 3


async def test_a_big_memory_listing_asks_find_again_instead_of_reading_each_note(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder whose notes the server cannot measure within one ``find``'s time: the
    client asks ``find`` again, which goes on past the notes it measured and kept, and
    reads none (a 20,000-note folder was ~18,000 reads, 50-127 s). Large YAML blocks
    (another program's) make each note slow to measure here; the rounds' bound is
    lifted so that a loaded machine's slower rounds cannot make the count flaky."""
    monkeypatch.setattr(store_module, "MAX_SIZE_ROUNDS", 1000)
    vault = ServerVault(Sandbox(workspace), max_file_bytes=1 << 20)
    block = "---\ntags:\n" + "".join(f"  - tag-{j}\n" for j in range(3000)) + "---\n"
    folder = workspace.vault_dir("en") / "memories" / "sub"
    folder.mkdir(parents=True)
    notes = 60
    for i in range(notes):
        (folder / f"n{i:02d}.md").write_text(f"{block}note {i}\n", encoding="utf-8")
    settings = Settings(workspace=workspace, max_file_bytes=1 << 20)
    vault.body_sizes, vault.find_sizes_max_seconds = BodySizes(settled_ns=0), 0.05
    listed, names = await _listing(create_server(Core(settings, vault)))
    assert names.count("read") == 0 and names.count("stat") == 0
    # more than one round, each past a note at least (at load 25 one round measured one)
    assert 3 <= names.count("find") <= notes + 1
    assert listed == [ListedItem("sub/", 4096)] + [
        ListedItem(f"sub/n{i:02d}.md", len(f"note {i}\n")) for i in range(notes)
    ]


async def test_a_memory_listing_past_the_vaults_largest_find_is_cut_and_says_so(
    workspace: Workspace,
) -> None:
    """``view`` of a folder of more than ``MAX_LISTED`` files: the first of them and a
    last line saying the listing is cut (it was ``too_large``, advising to view a
    folder below, which a folder of files has not)."""
    vault = ServerVault(Sandbox(workspace), max_file_bytes=1 << 20)
    vault.write("en", "memories/a.txt", "a")
    folder = workspace.vault_dir("en") / "memories"
    for i in range(MAX_LISTED + 2):
        (folder / f"f{i:05d}.txt").write_bytes(b"x\n")
    settings = Settings(workspace=workspace, max_file_bytes=1 << 20)
    async with session_on(create_server(Core(settings, vault))) as session:
        listing = await MemoryStore(session.vault("en"), "memories").listing(check("/memories"))
    assert listing.cut and len(listing.items) == MAX_LISTED
    assert listing.items[:2] == [ListedItem("a.txt", 1), ListedItem("f00000.txt", 2)]
    shown = view_directory("/memories", listing)
    assert shown.splitlines()[-1].startswith("(listing cut: /memories holds more files")
    assert f"; {MAX_LISTED} are shown." in shown
    assert "listing cut" not in view_directory("/memories", Listing(listing.items))


async def test_a_cut_memory_listing_names_the_folders_of_the_items_it_shows(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A level cut short lists its files (the walk gives a folder after all of them):
    a folder whose items the next level lists is shown too (it was left out, its items
    shown without it, and the cut line said to view a folder the listing did not name)."""
    monkeypatch.setattr(store_module, "MAX_LISTED", 3)
    vault = ServerVault(Sandbox(workspace), max_file_bytes=1 << 20)
    for i in range(4):
        vault.write("en", f"memories/f{i}.txt", "x")
    vault.write("en", "memories/sub/s.txt", "s")
    settings = Settings(workspace=workspace, max_file_bytes=1 << 20)
    async with session_on(create_server(Core(settings, vault))) as session:
        listing = await MemoryStore(session.vault("en"), "memories").listing(check("/memories"))
    assert listing.cut
    assert [item.rel for item in listing.items] == [
        "f0.txt",
        "f1.txt",
        "f2.txt",
        "sub/",
        "sub/s.txt",
    ]


async def test_a_folder_delete_past_the_vaults_largest_find_checks_all_before_deleting(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder of more than ``MAX_LISTED`` entries (3 here): a hidden file past the
    first listing refuses the delete before anything is deleted (the first find counted
    only as far as it went: 10,000 notes went, then ``forbidden_path``); a subfolder
    listed before all it holds is taken in a later round (it was 'not empty', after its
    first files went)."""
    monkeypatch.setattr(store_module, "MAX_LISTED", 3)
    vault = ServerVault(Sandbox(workspace), max_file_bytes=1 << 20)
    for i in range(4):
        vault.write("en", f"memories/top/n{i}.md", f"# n{i}\n")
        vault.write("en", f"memories/sub/a/n{i}.md", f"# n{i}\n")
    hidden = workspace.vault_dir("en") / "memories/top/b/.hidden.txt"
    hidden.parent.mkdir()
    hidden.write_text("another program's\n")
    settings = Settings(workspace=workspace, max_file_bytes=1 << 20)
    async with session_on(create_server(Core(settings, vault))) as session:
        store = MemoryStore(session.vault("en"), "memories")
        with pytest.raises(ToolError, match=r"forbidden_path: .*'b/\.hidden\.txt'") as refused:
            await store.delete(check("/memories/top"), Kind.DIR)
        assert "were deleted" not in str(refused.value)
        assert sorted(p.name for p in hidden.parent.parent.iterdir()) == [
            "b",
            "n0.md",
            "n1.md",
            "n2.md",
            "n3.md",
        ]
        await store.delete(check("/memories/sub"), Kind.DIR)
    assert not (workspace.vault_dir("en") / "memories/sub").exists()
