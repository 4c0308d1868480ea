"""The page behind a token, in headless Chromium: 401 without the cookie, then
``indexer open``'s one-time link logs the browser in with an HttpOnly, Strict cookie."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from helpers.indexer_process import RunningIndexer
from helpers.ui_page import open_link, seeded_token_server
from playwright.sync_api import Browser, expect

TOKEN = "browser-login-token"


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningIndexer]:
    yield from seeded_token_server(tmp_path_factory.mktemp("login") / "ws", TOKEN, "--token", TOKEN)


def test_login_link_opens_the_page_once(browser: Browser, guarded: RunningIndexer) -> None:
    base = guarded.url.removesuffix("/mcp")
    context = browser.new_context()
    page = context.new_page()
    try:
        refused = page.goto(f"{base}/ui/")
        assert refused is not None and refused.status == 401
        expect(page.locator("h1")).to_have_text("Login needed")

        link = open_link(guarded)
        page.goto(link)
        page.wait_for_selector('body[data-ready=""]', state="attached")
        assert page.url == f"{base}/ui/"
        expect(page.locator('a.vault[data-lang="lg"]')).to_contain_text("1 note")
        (cookie,) = context.cookies()
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and cookie["path"] == "/"
        assert TOKEN not in cookie["value"]
        assert page.evaluate("document.cookie") == ""  # HttpOnly: no script can read it
        page.goto(f"{base}/ui/#/lg/note/hello.md")
        page.wait_for_selector('body[data-ready="#/lg/note/hello.md"]', state="attached")
        expect(page.locator("article.note-body")).to_contain_text("behind a token")
    finally:
        context.close()

    other = browser.new_context()  # another browser profile replays the used link
    try:
        again = other.new_page().goto(link)
        assert again is not None and again.status == 401
        assert other.cookies() == []
    finally:
        other.close()
