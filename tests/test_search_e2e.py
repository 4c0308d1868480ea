"""End to end: search through a real ``indexer serve`` over HTTP, the index kept current by
tool writes (read-your-writes), by the watcher (external edits) and by the start-up
reconcile; grep through the server equals a full scan.

The tests that only need a running server share the module's (``server``, each with a
vault of its own); the restart tests start their own."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest
from fastmcp import Client
from fastmcp.exceptions import ToolError
from helpers.indexer_process import RunningIndexer, start_indexer

DEADLINE = 15.0


def vault(ws: Path, lang: str = "en") -> Path:
    return ws / "memory" / "languages" / lang / "vault"


async def data(client: Client, tool: str, **args) -> dict:
    return (await client.call_tool(tool, args)).structured_content


async def found(client: Client, lang: str, query: str, **args) -> list[str]:
    result = await data(client, "search", lang=lang, query=query, **args)
    return sorted(hit["path"] for hit in result["results"])


async def eventually(check, what: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while not await check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


async def ready(client: Client) -> None:
    async def check() -> bool:
        return bool((await data(client, "status"))["index_ready"])

    await eventually(check, "index_ready")


async def test_read_your_writes_through_mcp(server: RunningIndexer) -> None:
    async with server.client() as c:
        await ready(c)
        text = "---\ntitle: 東京の電車\ntags: [travel]\n---\nThe trains of Tokyo are punctual.\n"
        await data(c, "write", lang="ja", path="items/trains.md", content=text)
        assert await found(c, "ja", "punctual") == ["items/trains.md"]  # no waiting
        assert await found(c, "ja", "電車", tags=["travel"]) == ["items/trains.md"]
        await data(c, "append", lang="ja", path="items/trains.md", content="\nShinkansen too.\n")
        assert await found(c, "ja", "shinkansen") == ["items/trains.md"]
        await data(c, "delete", lang="ja", path="items/trains.md")
        assert await found(c, "ja", "punctual") == []
        status = await data(c, "status")
        assert status["index_ready"] is True and "ja" not in status["langs"]


async def test_searches_on_the_loop_beside_appends_read_their_writes(
    server: RunningIndexer,
) -> None:
    """``search`` runs on the event loop and moves to a thread when appends wait to be
    indexed: four clients appending and searching at once each find their own text at
    once, and a search of every note beside them answers whole."""
    lang = "en-loop"
    async with server.client() as first:
        await ready(first)
        for n in range(4):
            await data(first, "write", lang=lang, path=f"c{n}.md", content=f"# C{n}\n\nokapi\n")

    async def client(n: int) -> None:
        async with server.client() as c:
            for round_ in range(15):
                word = f"zebu{n}x{round_}"
                await data(c, "append", lang=lang, path=f"c{n}.md", content=f"\n{word}\n")
                assert await found(c, lang, word) == [f"c{n}.md"]
                assert await found(c, lang, "okapi") == [f"c{i}.md" for i in range(4)]

    await asyncio.gather(*(client(n) for n in range(4)))


async def test_a_vault_id_in_another_case_is_refused_never_a_second_vault(
    server: RunningIndexer,
) -> None:
    """``zh-hans`` for the vault ``zh-Hans`` (a language tag's case means nothing): a
    write made a second vault, a search answered "no match"; both say which id to use."""
    languages = server.workspace / "memory" / "languages"
    async with server.client() as c:
        await ready(c)
        await data(c, "write", lang="zh-Hans", path="猫.md", content="# 猫\n\n猫咪 cat\n")
        for tool, args in [
            ("search", {"query": "cat"}),
            ("write", {"path": "b.md", "content": "x"}),
            ("append", {"path": "b.md", "content": "x"}),
            ("read", {"path": "猫.md"}),
            ("find", {}),
            ("recall", {"query": "cat"}),
        ]:
            with pytest.raises(ToolError, match=r"invalid_lang: .*use 'zh-Hans'"):
                await c.call_tool(tool, {"lang": "zh-hans", **args})
        zh = [p.name for p in languages.iterdir() if p.name.casefold() == "zh-hans"]
        assert zh == ["zh-Hans"]
        assert await found(c, "zh-Hans", "cat") == ["猫.md"]


async def test_a_tools_first_write_to_a_new_vault_leaves_search_whole(
    server: RunningIndexer,
) -> None:
    """The vault's folder a tool made at its first write was heard as another program's
    change: searches said ``partial`` for the next half second (18 of the first 20)."""
    async with server.client() as c:
        await ready(c)

        async def whole() -> bool:
            return not (await data(c, "status"))["sync"]["partial"]

        await eventually(whole, "no change left to apply")
        for number in range(20):
            path = f"new/depth{number % 3}/n{number}.md"
            await data(c, "write", lang="nn-NO", path=path, content=f"# n\n\nword{number}\n")
            result = await data(c, "search", lang="nn-NO", query=f"word{number}")
            assert result["partial"] is False, number
            assert [hit["path"] for hit in result["results"]] == [path]


async def test_external_edits_become_visible(server: RunningIndexer) -> None:
    lang = "en-ext"
    root = vault(server.workspace, lang)
    async with server.client() as c:
        await ready(c)
        (root / "ext").mkdir(parents=True)
        (root / "ext" / "a.md").write_text("an outside quince\n")

        async def visible(query: str, expected: list[str]):
            async def check() -> bool:
                return await found(c, lang, query) == expected

            return check

        await eventually(await visible("quince", ["ext/a.md"]), "an external create")
        tmp = root / "ext" / ".a.md.tmp.x1"
        tmp.write_text("an outside medlar\n")
        os.replace(tmp, root / "ext" / "a.md")
        await eventually(await visible("medlar", ["ext/a.md"]), "an editor-style save")
        os.replace(root / "ext" / "a.md", root / "ext" / "b.md")
        await eventually(await visible("medlar", ["ext/b.md"]), "an external rename")
        (root / "ext" / "b.md").unlink()
        await eventually(await visible("medlar", []), "an external delete")


async def test_hostile_queries_never_break_the_tool(server: RunningIndexer) -> None:
    lang = "en-hostile"
    async with server.client() as c:
        await data(c, "write", lang=lang, path="a.md", content="plain words here\n")
        for query in ['"', "NEAR(a b)", "a:b", "*", "x" * 10_000, "東", '"unbalanced here']:
            try:
                result = await data(c, "search", lang=lang, query=query)
                assert isinstance(result["results"], list)
            except ToolError as err:
                assert str(err).startswith("invalid_argument: "), str(err)
        for query in ["", "x" * 10_241]:
            with pytest.raises(ToolError, match=r"^invalid_argument: "):
                await c.call_tool("search", {"lang": lang, "query": query})
        with pytest.raises(ToolError, match=r"^invalid_argument: "):
            await c.call_tool("search", {"lang": lang, "query": "plain", "limit": 0})


async def test_a_prefix_query_through_the_server(server: RunningIndexer) -> None:
    """``datab*`` finds and marks ``database`` (it was the word ``datab``: nothing found,
    nothing said); a prefix too short is refused saying so; grep reads ``*`` as a regex."""
    lang = "en-prefix"
    async with server.client() as c:
        await data(c, "write", lang=lang, path="db.md", content="Tuning the Database.\n")
        await data(c, "write", lang=lang, path="data.md", content="Plain data here.\n")
        result = await data(c, "search", lang=lang, query="datab* OR postg*")
        assert [hit["path"] for hit in result["results"]] == ["db.md"]
        assert "**Database**" in result["results"][0]["snippet"]
        with pytest.raises(ToolError, match=r"^invalid_argument: .*at least 3 characters"):
            await c.call_tool("search", {"lang": lang, "query": "da*"})
        grep = await data(c, "grep", lang=lang, pattern="datab*", ignore_case=True)
        assert {m["path"] for m in grep["matches"]} == {"data.md", "db.md"}


async def test_grep_through_the_server_equals_a_full_scan(server: RunningIndexer) -> None:
    lang = "en-grep"
    root = vault(server.workspace, lang)
    for n in range(40):
        (root / f"d{n % 4}").mkdir(parents=True, exist_ok=True)
        (root / f"d{n % 4}" / f"f{n}.md").write_text(f"line {n}\nNeedle{n % 7} in Hay\n")
    async with server.client() as c:
        await ready(c)
        await eventually(
            lambda: _count_is(c, lang, 40), "40 notes indexed"
        )  # the watcher or the reconcile
        (root / "late.md").write_text("needle3 written after indexing\n")
        with (root / "d1" / "f1.md").open("a") as out:  # indexed, then appended to
            out.write("needle3 appended\n")
        (root / "d2" / "f2.md").write_text("line 2\nNeedle3 in Hay\n")  # the same size
        result = await data(c, "grep", lang=lang, pattern="needle3", ignore_case=True, limit=1000)
        paths = sorted({m["path"] for m in result["matches"]})
        expected = sorted(
            p.relative_to(root).as_posix()
            for p in root.rglob("*.md")
            if "needle3" in p.read_text().lower() and not p.name.startswith(".")
        )
        assert paths == expected and {"late.md", "d1/f1.md", "d2/f2.md"} <= set(paths)


async def _count_is(c: Client, lang: str, count: int) -> bool:
    return (await data(c, "status"))["langs"].get(lang) in (count, count + 1)


async def found_after_start(workspace: Path, query: str) -> list[str]:
    """Start an indexer on ``workspace``, wait for its reconcile, search, stop it."""
    server = start_indexer(workspace)
    try:
        async with server.client() as c:
            await ready(c)
            return await found(c, "en", query)
    finally:
        server.stop()


async def test_restart_reconciles_changes_made_while_down(workspace: Path) -> None:
    server = start_indexer(workspace)
    try:
        async with server.client() as c:
            await data(c, "write", lang="en", path="keep.md", content="kept plum\n")
            await data(c, "write", lang="en", path="gone.md", content="gone plum\n")
    finally:
        server.stop()
    root = vault(workspace)
    (root / "gone.md").unlink()
    (root / "new.md").write_text("new plum\n")
    assert await found_after_start(workspace, "plum") == ["keep.md", "new.md"]
    workspace.joinpath(".indexer", "index.sqlite").unlink()
    for suffix in ("-wal", "-shm"):
        workspace.joinpath(".indexer", f"index.sqlite{suffix}").unlink(missing_ok=True)
    assert await found_after_start(workspace, "plum") == ["keep.md", "new.md"]
