"""A history view whose note went away under it, in Chromium against a real ``indexer
serve``: the page says what happened and the way on (the note's new place), and nothing
on disk changes. A diff "with current" of a note moved since showed every line removed, as
if emptied; a restore said "the note changed"."""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path
from urllib.parse import quote

import httpx2
import pytest
from helpers.indexer_process import RunningIndexer, vault_dir, wait_for
from helpers.ui_page import MD, Watch, visit
from playwright.sync_api import Page, expect


@pytest.fixture(scope="module")
def base(server: RunningIndexer) -> str:
    return server.url.removesuffix("/mcp")


def three_versions(base: str, lang: str, path: str) -> None:
    with httpx2.Client(base_url=base + "/api/v1") as http:
        for n in range(3):
            text = f"# v{n}\n\nשלום עולם {n}\n你好世界{n}\n"
            assert http.put(f"/{lang}/notes/{path}", content=text.encode(), headers=MD).is_success


def moved_by_mcp(server: RunningIndexer, lang: str, path: str, new_path: str) -> None:
    """The MCP ``move`` tool, as an agent calls it (a thread of its own: Playwright's sync
    API holds this one's event loop)."""

    async def call() -> None:
        async with server.client() as client:
            await client.call_tool("move", {"lang": lang, "path": path, "new_path": new_path})

    failed: list[BaseException] = []
    thread = threading.Thread(target=lambda: _run(call, failed))
    thread.start()
    thread.join()
    assert not failed, failed


def _run(call, failed: list[BaseException]) -> None:
    try:
        asyncio.run(call())
    except BaseException as err:  # (told to the test's thread)
        failed.append(err)


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def history_hash(lang: str, path: str) -> str:
    return f"#/{lang}/history/" + "/".join(quote(part, safe="") for part in path.split("/"))


@pytest.mark.parametrize("how", ["mcp move", "mv outside"])
def test_a_note_moved_while_its_history_is_open_is_said_with_its_new_place(
    page: tuple[Page, Watch], server: RunningIndexer, base: str, how: str
) -> None:
    lang = "gm" if how == "mcp move" else "gx"
    old, new = "מסמך/שלום (1).md", "מסמך/新しい.md"
    three_versions(base, lang, old)
    tab, watch = page
    watch.accept_dialogs = True
    visit(tab, base, history_hash(lang, old))
    folder = vault_dir(server, lang)
    if how == "mcp move":
        moved_by_mcp(server, lang, old, new)
    else:
        os.rename(folder / old, folder / new)

        def recorded() -> bool:
            with httpx2.Client(base_url=base + "/api/v1") as http:
                newest = http.get(f"/{lang}/history/{old}", params={"limit": 1}).json()
            return newest["versions"][0].get("moved_to") == new

        wait_for(recorded, 15, what="the watcher's record of the move")
    before = snapshot(folder)

    tab.click("tr[data-version='1'] button.diff-current")
    gone = tab.locator("#view > #gone")
    expect(gone).to_contain_text(f"{old} was moved to {new} since this page showed it")
    expect(tab.locator("pre.diff")).to_be_hidden()  # (not every line "removed")
    assert gone.locator("a").get_attribute("href") == history_hash(lang, new)
    isolated = "e => getComputedStyle(e).unicodeBidi"  # (its "(1)" kept with its name)
    assert [gone.locator(s).evaluate(isolated) for s in (".name", "a")] == ["isolate"] * 2

    tab.select_option("#diff-to", "3")  # two versions: their diff stands, wherever the note is
    tab.click("#show-diff")
    expect(tab.locator("pre.diff")).to_contain_text("-# v1")
    expect(tab.locator("pre.diff")).to_contain_text("+# v2")
    expect(gone).to_have_count(0)

    tab.click("tr[data-version='1'] button.restore")
    expect(gone).to_contain_text(f"Not restored: {old} was moved to {new}")
    assert snapshot(folder) == before  # (nothing restored to the old place)
    gone.locator("a").click()
    expect(tab.locator("h1")).to_have_text(f"History of {new.split('/')[-1]}")
    assert not watch.errors
