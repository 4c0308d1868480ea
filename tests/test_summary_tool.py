"""The ``summary`` tool through the in-memory MCP client, and summaries beside the other
tools: indexed for ``search(type="summary")``, never in ``find``/``grep``, a default
``search`` or the note counts."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from fastmcp import Client
from fastmcp.exceptions import ToolError
from helpers.snapshots import snapshot

from indexer.core import Core
from indexer.daemon import build_core
from indexer.settings import Settings
from indexer.web.mcp import create_server
from shared.workspace import Workspace

NOTES = {
    "items/go.md": "---\ntype: item\n---\n# Go\n\nThe past tense of go is went.\n",
    "items/be.md": "# Be\n\nwas, were, been\n",
    "events/2026/11/29.md": "# 2026-11-29\n\n## Event\nThe learner went to the park.\n",
}


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[tuple[Client, Core]]:
    core = build_core(Settings(workspace=Workspace(tmp_path / "ws")))
    assert core.index is not None and core.summaries is not None
    async with Client(create_server(core)) as client:
        for path, content in NOTES.items():
            await client.call_tool("write", {"lang": "en", "path": path, "content": content})
        core.summaries.dirty.take()
        await core.summaries.run_pass()
        core.summaries.dirty.done()
        yield client, core
    assert core.jobs is not None
    core.jobs.stop()
    core.index.close()


async def call(client: Client, tool: str, **args: object) -> dict:
    result = await client.call_tool(tool, args)
    assert isinstance(result.structured_content, dict)
    return result.structured_content


async def test_the_summary_tool_answers_for_a_folder(served: tuple[Client, Core]) -> None:
    client, _ = served
    tools = {t.name: t for t in await client.list_tools()}
    assert set(tools["summary"].input_schema["properties"]) == {"lang", "path"}
    assert tools["summary"].annotations is not None
    assert tools["summary"].annotations.read_only_hint is True
    items = await call(client, "summary", lang="en", path="items")
    assert set(items) == {
        "path", "abstract", "overview", "child_count", "categories", "generated_by",
        "updated", "stale",
    }  # fmt: skip
    assert items["path"] == "items" and items["abstract"] == "2 notes: note, item"
    assert items["overview"].startswith("# Overview\n") and items["stale"] is False
    root = await call(client, "summary", lang="en")
    assert root["path"] == "" and root["abstract"] == "2 notes: folder"
    assert root["categories"] == ["folder"] and root["child_count"] == 2


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("../en", "forbidden_path"),
        (".indexer", "forbidden_path"),
        # (a summary file is a file, as read takes it: it was refused as a hidden path)
        ("items/.overview.md", "invalid_argument"),
        (".overview.md", "invalid_argument"),
        ("../.overview.md", "forbidden_path"),
        ("items/.hidden/.overview.md", "forbidden_path"),
        ("nowhere", "not_found"),
        ("items/go.md", "invalid_argument"),
    ],
)
async def test_a_refused_summary_changes_nothing(
    served: tuple[Client, Core], tmp_path: Path, path: str, code: str
) -> None:
    client, _ = served
    before = snapshot(tmp_path / "ws" / "memory")
    with pytest.raises(ToolError) as info:
        await client.call_tool("summary", {"lang": "en", "path": path})
    assert str(info.value).startswith(f"{code}: ")
    assert snapshot(tmp_path / "ws" / "memory") == before


async def test_summaries_stay_out_of_find_grep_search_and_counts(
    served: tuple[Client, Core], tmp_path: Path
) -> None:
    client, _ = served
    vault = tmp_path / "ws" / "memory" / "languages" / "en" / "vault"
    assert (vault / "items" / ".overview.md").is_file()
    found = await call(client, "find", lang="en", pattern="**/*")
    assert sorted(found["paths"]) == sorted(NOTES)
    grep = await call(client, "grep", lang="en", pattern="notes?:|Overview", glob="**/*")
    assert grep["matches"] == []
    plain = await call(client, "search", lang="en", query="note OR notes")
    assert plain["results"] == [] and plain["total"] == 0
    went = await call(client, "search", lang="en", query="went")
    assert {r["path"] for r in went["results"]} == {"items/go.md", "events/2026/11/29.md"}
    summaries = await call(client, "search", lang="en", query="note OR notes", type="summary")
    paths = {r["path"] for r in summaries["results"]}
    assert paths == {
        ".overview.md",
        "items/.overview.md",
        "events/.overview.md",
        "events/2026/.overview.md",
        "events/2026/11/.overview.md",
    }
    scoped = await call(client, "search", lang="en", query="note", type="summary", path="items")
    assert [r["path"] for r in scoped["results"]] == ["items/.overview.md"]
    assert (await call(client, "status"))["langs"] == {"en": 3}


async def test_a_note_deeper_than_every_tool_reaches_is_in_no_summary(
    served: tuple[Client, Core], tmp_path: Path
) -> None:
    """32 folders deep, a note is out of find, the index and read; the summary of its
    folder listed it (``- depth 31 ...``), child_count 1."""
    client, core = served
    folder = "/".join(f"d{n}" for n in range(32))
    on_disk = core.settings.workspace.vault_dir("en") / folder
    on_disk.mkdir(parents=True)
    (on_disk / "n.md").write_text("# Too deep\n\nDEEPWORD\n")
    (on_disk.parent / "m.md").write_text("# Deep enough\n\nshallower\n")
    with pytest.raises(ToolError, match=r"^not_found: .* holds no notes"):
        await call(client, "summary", lang="en", path=folder)
    above = await call(client, "summary", lang="en", path=folder.rsplit("/", 1)[0])
    assert above["child_count"] == 1 and "shallower" in above["overview"]


async def redo(core: Core) -> None:
    """A pass over the folders the changes so far marked, as the server's loop runs it."""
    assert core.summaries is not None
    await core.summaries.run_pass(dirty=core.summaries.dirty.take())
    core.summaries.dirty.done()


async def test_a_hand_edit_the_job_wrote_over_comes_back_through_history(
    served: tuple[Client, Core], tmp_path: Path
) -> None:
    """README: "A summary you edited is made again (history keeps each version)"; that
    version was recorded but every tool refused ``.overview.md`` (forbidden_path), so the
    edit was lost. History, read, diff and restore reach a folder's summary; the other
    tools still refuse it, and every other dot-file."""
    client, core = served
    overview = tmp_path / "ws" / "memory" / "languages" / "en" / "vault" / "items" / ".overview.md"
    overview.write_text(overview.read_text() + "\nMY REMARK: the deadline is 3 March.\n")
    await call(client, "write", lang="en", path="items/do.md", content="# Do\n\ndid, done\n")
    await redo(core)
    assert "MY REMARK" not in overview.read_text()  # made again, as README says
    path = "items/.overview.md"
    versions = (await call(client, "history", lang="en", path=path))["versions"]
    texts = {
        v["version"]: (await call(client, "read", lang="en", path=path, version=v["version"]))
        for v in versions
    }
    edited = [n for n, old in texts.items() if "MY REMARK" in old["content"]]
    assert len(edited) == 1, versions
    diff = (await call(client, "diff", lang="en", path=path, from_version=edited[0]))["diff"]
    assert "-MY REMARK: the deadline is 3 March." in diff
    current = await call(client, "read", lang="en", path=path)
    assert current["content"] == overview.read_text()
    assert (await call(client, "stat", lang="en", path=path))["etag"] == current["etag"]
    back = await call(
        client, "restore", lang="en", path=path, version=edited[0], if_match=current["etag"]
    )
    assert back["restored_from"] == edited[0]
    assert overview.read_text() == texts[edited[0]]["content"]
    assert "MY REMARK" in (await call(client, "summary", lang="en", path="items"))["overview"]
    for tool, args in [
        ("write", {"path": path, "content": "x"}),
        ("append", {"path": path, "content": "x"}),
        ("delete", {"path": path}),
        ("move", {"path": path, "new_path": "items/kept.md"}),
        ("history", {"path": "items/.hidden.md"}),
        ("history", {"path": "items/.Overview.md"}),
        ("history", {"path": ".obsidian/.overview.md"}),
        ("history", {"path": "items/go.md.assets/.overview.md"}),
        ("read", {"path": ".overview.md/x.md"}),
    ]:
        with pytest.raises(ToolError, match=r"^forbidden_path: "):
            await client.call_tool(tool, {"lang": "en", **args})
    assert overview.read_text() == texts[edited[0]]["content"]
    listed = await call(client, "find", lang="en", pattern="**/*")
    assert not any(".overview.md" in p for p in listed["paths"])


async def test_an_emptied_folders_edited_summary_is_read_back_from_history(
    served: tuple[Client, Core], tmp_path: Path
) -> None:
    """The summary of a folder emptied of notes goes with them, a hand edit too: its
    versions are still read and restored (the folder comes back with it)."""
    client, core = served
    overview = tmp_path / "ws" / "memory" / "languages" / "en" / "vault" / "items" / ".overview.md"
    overview.write_text(overview.read_text() + "\nMY REMARK\n")
    for note in ("items/go.md", "items/be.md"):
        await call(client, "delete", lang="en", path=note)
    await redo(core)
    assert not overview.exists()
    path = "items/.overview.md"
    versions = (await call(client, "history", lang="en", path=path))["versions"]
    assert versions[0]["op"] == "delete"
    edited = versions[1]["version"]
    old = await call(client, "read", lang="en", path=path, version=edited)
    assert old["content"].endswith("\nMY REMARK\n")
    await call(client, "restore", lang="en", path=path, version=edited, if_match="")
    assert overview.read_text() == old["content"]
