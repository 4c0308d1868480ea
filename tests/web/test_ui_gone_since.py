"""A history view whose note went away under it, and a page whose indexer was started
again, in Chromium against a real ``indexer serve``: the page says what happened and the
way on (the note's new place; the command that opens the page again), and nothing on
disk changes. A diff "with current" of a note moved since showed every line removed, as if
emptied; a restore said "the note changed"; a restarted indexer on a new port was
"Try again once it is", which never answers, and a lost login "--workspace W"."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import threading
import time
from pathlib import Path
from urllib.parse import quote

import httpx2
import pytest
from helpers.indexer_process import RunningIndexer, start_indexer, vault_dir, wait_for
from helpers.ui_page import MD, Watch, open_link, visit
from playwright.sync_api import Browser, Page, expect

TOKEN = "gone-since-token"


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


def test_a_restarted_indexer_is_said_with_the_command_that_opens_the_page_again(
    browser: Browser, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    first = start_indexer(workspace)
    try:
        old_base = first.url.removesuffix("/mcp")
        three_versions(old_base, "rs", "n.md")
        context = browser.new_context()
        tab = context.new_page()
        tab.set_default_timeout(10_000)
        visit(tab, old_base, "#/rs/history/n.md")
    finally:
        first.stop(signal.SIGKILL)
    again = start_indexer(workspace)  # (a free port again: another address)
    try:
        tab.click("tr[data-version='1'] button.diff-current")
        error = tab.locator("#view > .error")
        expect(error).to_contain_text("unreachable: The indexer did not answer")
        expect(error).to_contain_text(
            f"If it was started again, it may be at a new address: open the page with "
            f"indexer open --workspace {workspace}."
        )
        expect(tab.locator("pre.diff")).to_be_hidden()
        # the way on: the page at the new address shows the diff
        visit(tab, again.url.removesuffix("/mcp"), "#/rs/history/n.md")
        started = time.monotonic()
        tab.click("tr[data-version='1'] button.diff-current")
        expect(tab.locator("pre.diff")).to_contain_text("-# v0")
        assert time.monotonic() - started < 10
        context.close()
    finally:
        again.stop()


def test_a_login_lost_to_a_restart_names_this_workspace_quoted(
    browser: Browser, tmp_path: Path
) -> None:
    """An indexer with a token started again on its port: its sessions are new, this tab's
    cookie none of them; the command to log in again names this workspace, quoted."""
    workspace = tmp_path / "it's a ws"
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = str(probe.getsockname()[1])
    args = ("--port", port, "--token", TOKEN)
    first = start_indexer(workspace, *args)
    context = browser.new_context()
    try:
        tab = context.new_page()
        tab.set_default_timeout(10_000)
        tab.goto(open_link(first))
        tab.wait_for_selector('body[data-ready=""]', state="attached")
        first.stop()
        (workspace / "indexer.mcp.url").unlink(missing_ok=True)
        again = start_indexer(workspace, *args)
        try:
            tab.click("a.status-link")
            error = tab.locator("#view > .error")
            quoted = str(workspace).replace("'", "'\\''")
            expect(error).to_have_text(
                f"Login needed. Open the page again with indexer open --workspace '{quoted}' "
                "(after the indexer starts again, its login is new)."
            )
        finally:
            again.stop()
    finally:
        first.stop()
        context.close()
