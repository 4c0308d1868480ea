"""Long texts in the page, in Chromium against a real ``indexer serve``: a note shown as
plain text is laid out a block of lines at a time, as each nears the screen (a 5 MB note
of Latin, Hebrew and Chinese was laid out whole: 62-64 s of layout at load 17, on the way
from Save to the note view too), its text unchanged."""

from __future__ import annotations

import httpx2
import pytest
from helpers.indexer_process import RunningIndexer
from helpers.ui_page import TEXT, Watch, visit
from playwright.sync_api import Page, expect

BLOCK = 100  # lines a block (lib.js: LINES_A_BLOCK)


@pytest.fixture(scope="module")
def base(server: RunningIndexer) -> str:
    return server.url.removesuffix("/mcp")


def long_text(lines: int) -> str:
    """Lines in several scripts, a blank one at each block's end and start, a tab, a line
    far wider than the page, and no final line break."""
    words = ("plain words", "שלום עולם", "你好世界", "مرحبا بالعالم", "\tafter a tab")
    text = [f"{n} {words[n % len(words)]}" for n in range(lines)]
    for n in range(BLOCK - 1, lines, BLOCK):
        text[n] = ""
        if n + 1 < lines:
            text[n + 1] = ""
    text[150] = "wide " * 600
    return "\n".join(text)


def test_a_long_plain_text_is_laid_out_a_block_of_lines_at_a_time(
    page: tuple[Page, Watch], base: str
) -> None:
    text = long_text(2_550)
    with httpx2.Client(base_url=base + "/api/v1") as http:
        http.put("/lt/notes/long.txt", content=text.encode(), headers=TEXT).raise_for_status()
    tab, watch = page
    visit(tab, base, "#/lt/note/long.txt")
    pre = tab.locator("pre.plain-text")
    assert pre.evaluate("e => e.textContent") == text  # (not a character moved)
    blocks = pre.locator(":scope > span.lines")
    assert blocks.count() == 26
    style = "e => [getComputedStyle(e).contentVisibility, getComputedStyle(e).unicodeBidi]"
    assert blocks.first.evaluate(style) == ["auto", "plaintext"]
    assert blocks.last.evaluate(style) == ["auto", "plaintext"]
    assert all(b.endswith("\n") for b in blocks.all_text_contents()[:-1])  # whole lines
    blocks.nth(1).scroll_into_view_if_needed()  # the wide line scrolls in its <pre>,
    wide = "() => { const e = document.querySelector('pre.plain-text');\n" + (
        "return e.scrollWidth > e.clientWidth + 1000; }"
    )
    tab.wait_for_function(wide)  # (once its block is laid out, the frame after)
    assert not watch.errors


def test_a_long_diff_is_laid_out_a_block_of_lines_at_a_time(
    page: tuple[Page, Watch], base: str
) -> None:
    """A 1 MB note's diff with every line changed was 33,000 lines laid out at once
    (33-36 s at load 13); each line keeps its +/- in the left column."""
    text = long_text(1_200)
    with httpx2.Client(base_url=base + "/api/v1") as http:
        http.put("/lt/notes/diffed.txt", content=text.encode(), headers=TEXT).raise_for_status()
        changed = "\n".join(f"{line} +" for line in text.split("\n"))
        http.put("/lt/notes/diffed.txt", content=changed.encode(), headers=TEXT).raise_for_status()
        diff = http.get("/lt/diff/diffed.txt", params={"from": 1}).json()["diff"]
    tab, watch = page
    visit(tab, base, "#/lt/history/diffed.txt")
    tab.click("tr[data-version='1'] button.diff-current")
    shown = tab.locator("pre.diff")
    expect(shown).to_be_visible()
    blocks = shown.locator(":scope > span.lines")
    expect_lines = len(diff.split("\n"))
    assert blocks.count() == -(-expect_lines // BLOCK)
    assert shown.evaluate("e => e.textContent") == diff + "\n"
    style = "e => [getComputedStyle(e).contentVisibility, getComputedStyle(e).unicodeBidi]"
    assert blocks.first.evaluate(style) == ["auto", "normal"]  # (the +/- stays at the left)
    hebrew = shown.locator("span.add .line-text", has_text="שלום עולם").first
    assert hebrew.evaluate("e => getComputedStyle(e).unicodeBidi") == "plaintext"
    assert not watch.errors
