"""The history tools through fastmcp's in-memory client: schemas, results, and refusals
with their SPEC codes (the error mapping of every tool)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from fastmcp import Client
from fastmcp.exceptions import ToolError

from indexer.core import Core
from indexer.settings import Settings
from indexer.vault.fsops import etag_of
from indexer.vault.history.store import HistoryStore
from indexer.vault.sandbox import Sandbox
from indexer.vault.vault import Vault
from indexer.web.mcp import create_server
from shared.workspace import Workspace


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[Client]:
    ws = Workspace(tmp_path / "ws")
    store = HistoryStore(ws.history_dir, etag_of)
    store.open()
    vault = Vault(Sandbox(ws), max_file_bytes=64 * 1024, history=store)
    async with Client(create_server(Core(Settings(workspace=ws), vault))) as c:
        yield c
    store.close()


async def call(client: Client, tool: str, **args: object) -> dict:
    result = await client.call_tool(tool, args)
    assert isinstance(result.structured_content, dict)
    return result.structured_content


async def refused(client: Client, tool: str, code: str, **args: object) -> None:
    with pytest.raises(ToolError) as info:
        await client.call_tool(tool, args)
    assert str(info.value).startswith(code + ": "), str(info.value)


async def test_history_tools_round_trip(client: Client) -> None:
    first = await call(client, "write", lang="en", path="a.md", content="# A\n", reason="first")
    await call(client, "append", lang="en", path="a.md", content="more\n", reason="second")
    listed = await call(client, "history", lang="en", path="a.md", limit=1)
    assert [(v["version"], v["op"], v["reason"]) for v in listed["versions"]] == [
        (2, "append", "second")
    ]
    assert set(listed["versions"][0]) == {"version", "etag", "op", "actor", "reason", "at", "size"}
    old = await call(client, "read", lang="en", path="a.md", version=1)
    assert old["etag"] == first["etag"] and old["version"] == 1
    assert "+more" in (await call(client, "diff", lang="en", path="a.md", from_version=1))["diff"]
    back = await call(client, "restore", lang="en", path="a.md", version=1, reason="undo it")
    assert back == {"path": "a.md", "etag": first["etag"], "version": 3, "restored_from": 1}
    moved = await call(client, "move", lang="en", path="a.md", new_path="b/a.md")
    assert moved == {"path": "a.md", "new_path": "b/a.md", "etag": first["etag"], "relinked": []}
    await call(client, "delete", lang="en", path="b/a.md", reason="gone")
    await call(client, "write", lang="en", path="c.md", content="# C\n", reason="entry:e9 C")
    undone = await call(client, "undo", lang="en", entry_id="e9")
    assert undone["files"] == [
        {
            "path": "c.md",
            "from_version": 1,
            "to_version": None,
            "deleted": True,
            "unchanged": False,
            "version": 2,
        }
    ]
    assert not (await call(client, "stat", lang="en", path="c.md"))["exists"]


async def test_refusals_carry_their_codes(client: Client) -> None:
    await call(client, "write", lang="en", path="a.md", content="# A\n", reason="entry:e1 A")
    await call(client, "write", lang="en", path="b.md", content="# B\n")
    await refused(client, "write", "invalid_argument", lang="en", path="a.md", content="x",
                  reason="two\nlines")  # fmt: skip
    await refused(client, "append", "invalid_argument", lang="en", path="a.md", content="x",
                  reason="r" * 501)  # fmt: skip
    await refused(client, "read", "not_found", lang="en", path="a.md", version=9)
    await refused(client, "read", "invalid_argument", lang="en", path="a.md", version="one")
    await refused(client, "diff", "invalid_argument", lang="en", path="a.md", from_version=0)
    await refused(client, "restore", "conflict", lang="en", path="a.md", version=1, if_match="")
    await refused(client, "move", "conflict", lang="en", path="a.md", new_path="b.md")
    await refused(client, "move", "forbidden_path", lang="en", path="a.md", new_path="../fr/a.md")
    await refused(client, "history", "invalid_lang", lang="EN!", path="a.md")
    await refused(client, "undo", "not_found", lang="en", entry_id="e2")
    await refused(client, "undo", "invalid_argument", lang="en", entry_id="e 1")
    await refused(client, "undo", "invalid_argument", lang="en", entry_id="e1\n")
    for folder_spelling in ("a.md/", "a.md/.", "a.md/x/.."):  # a folder's, never the file's
        await refused(client, "diff", "forbidden_path", lang="en", path=folder_spelling,
                      from_version=1)  # fmt: skip
        await refused(client, "history", "forbidden_path", lang="en", path=folder_spelling)
        await refused(client, "restore", "forbidden_path", lang="en", path=folder_spelling,
                      version=1)  # fmt: skip
    await call(client, "write", lang="en", path="a.md", content="# A2\n")
    await refused(client, "undo", "conflict", lang="en", entry_id="e1")


async def test_links_out_of_the_vault_are_forbidden_to_every_history_tool(
    client: Client, tmp_path: Path
) -> None:
    """A link (to a file or a folder) that leads out of the vault is ``forbidden_path``
    to ``history``, ``diff``, ``read(version=)`` and ``restore`` alike, with history for
    that path or none (diff and restore said ``not_found``: no version there), and the
    file outside is left as it was."""
    await call(client, "write", lang="fa", path="یادداشت.md", content="# سلام\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "راز.md").write_text("# secret\n")
    root = tmp_path / "ws" / "memory" / "languages" / "fa" / "vault"
    (root / "پیوند.md").symlink_to(outside / "راز.md")
    (root / "پوشه").symlink_to(outside)
    for path in ("پیوند.md", "پوشه/راز.md"):
        await refused(client, "history", "forbidden_path", lang="fa", path=path)
        await refused(client, "diff", "forbidden_path", lang="fa", path=path, from_version=1)
        await refused(client, "read", "forbidden_path", lang="fa", path=path, version=1)
        await refused(client, "restore", "forbidden_path", lang="fa", path=path, version=1)
    assert sorted(p.name for p in outside.iterdir()) == ["راز.md"]
    assert (outside / "راز.md").read_text() == "# secret\n"
    # a note deleted, a link to the outside put in its place: its history is still read,
    # but nothing is read or written through the link
    await call(client, "write", lang="fa", path="رفته.md", content="# رفته\n")
    await call(client, "delete", lang="fa", path="رفته.md")
    (root / "رفته.md").symlink_to(outside / "راز.md")
    await refused(client, "diff", "forbidden_path", lang="fa", path="رفته.md", from_version=1)
    await refused(client, "restore", "forbidden_path", lang="fa", path="رفته.md", version=1)
    assert (outside / "راز.md").read_text() == "# secret\n"
    assert (root / "رفته.md").is_symlink()
