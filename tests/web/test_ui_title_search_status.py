"""Three things an acceptance pass found on the page, against a real ``indexer serve``: a
note's heading is the title search gives it (the page showed ``go.md`` where search said
``Go``); the search box on the home page searched the alphabetically first vault unsaid
(北京 in ``ar``: "Nothing found."); the status panel said "index ready" while the file
watcher had stopped."""

from __future__ import annotations

import os
from pathlib import Path

import httpx2
import pytest
from helpers.indexer_process import RunningIndexer, start_indexer, vault_dir, wait_for
from helpers.ui_page import MD, Watch, note_file, settled, visit
from playwright.sync_api import Page, expect

# path -> text; each holds "quokka" so that one search lists them all
NOTES = {
    "go.md": "# Go\n\nquokka\n",
    "plain.md": "quokka, no heading at all\n",
    "named.md": "---\ntitle: From the frontmatter\n---\n# Not this\n\nquokka\n",
    "code first.md": "```sh\n# install deps\n```\n\n## Second level\n\n# Real title\n\nquokka\n",
    "underlined.md": "Underlined title\n================\n\nquokka\n",
    "dir/kept.txt": "# a heading in a text file is text\nquokka\n",
}


@pytest.fixture(scope="module")
def base(server: RunningIndexer) -> str:
    return server.url.removesuffix("/mcp")


def search_titles(base: str, lang: str, query: str) -> dict[str, str]:
    with httpx2.Client(base_url=base + "/api/v1", timeout=30) as http:
        found = http.get(f"/{lang}/search", params={"q": query, "limit": 50}).json()
    return {hit["path"]: hit["title"] for hit in found["results"]}


def test_a_notes_heading_is_the_title_search_gives_it(
    page: tuple[Page, Watch], base: str, server: RunningIndexer
) -> None:
    for path, text in NOTES.items():  # (written as another program does: the watcher)
        note_file(server, "en", path).parent.mkdir(parents=True, exist_ok=True)
        note_file(server, "en", path).write_text(text, encoding="utf-8")
    wait_for(lambda: len(search_titles(base, "en", "quokka")) == len(NOTES), 30, what="the index")
    titles = search_titles(base, "en", "quokka")
    assert titles["go.md"] == "Go" and titles["plain.md"] == "plain", titles
    tab, watch = page
    for path in NOTES:
        hash_ = "#/en/note/" + "/".join(part.replace(" ", "%20") for part in path.split("/"))
        visit(tab, base, hash_)
        expect(tab.locator("h1.note-title")).to_have_text(titles[path])
        expect(tab.locator("nav.crumbs")).to_contain_text(path.split("/")[-1])  # the path stays
    assert not watch.errors


def test_the_search_box_says_which_vault_it_searches(
    page: tuple[Page, Watch], base: str, server: RunningIndexer
) -> None:
    with httpx2.Client(base_url=base + "/api/v1", timeout=30) as http:
        for lang, path, text in (
            ("ar", "m.md", "# مدينة\n\nنص\n"),
            ("zh-Hans", "城市.md", "# 城市\n\n北京是首都。\n"),
        ):
            assert http.put(f"/{lang}/notes/{path}", content=text.encode(), headers=MD).is_success
    wait_for(lambda: search_titles(base, "zh-Hans", "北京"), 30, what="the index")
    tab, watch = page
    visit(tab, base, "#/")
    tab.fill("#search-input", "北京")
    tab.press("#search-input", "Enter")
    # several vaults, none opened: it asks instead of searching ar
    expect(tab.locator("#message")).to_contain_text("Pick the vault to search")
    assert tab.evaluate("location.hash") == "#/"
    # the vault last opened is the one searched, from the home page too, and said so
    visit(tab, base, "#/zh-Hans")
    tab.click("a.brand")
    settled(tab, "#/")
    expect(tab.locator("#search-input")).to_have_attribute("placeholder", "Search zh-Hans")
    tab.fill("#search-input", "北京")
    tab.press("#search-input", "Enter")
    expect(tab.locator("#view h1")).to_have_text("Search 北京 in zh-Hans")
    expect(tab.locator("ol.search-results a")).to_have_text(["城市"])
    assert tab.evaluate("location.hash").startswith("#/zh-Hans/search?q=")
    assert not watch.errors


def test_the_status_panel_says_the_file_watcher_stopped(
    page: tuple[Page, Watch], tmp_path: Path
) -> None:
    server = start_indexer(tmp_path / "ws")
    languages = server.workspace / "memory" / "languages"
    try:
        root = server.url.removesuffix("/mcp")
        with httpx2.Client(base_url=root + "/api/v1", timeout=30) as http:
            assert http.put("/en/notes/n.md", content=b"# N\n", headers=MD).is_success
            tab, watch = page
            visit(tab, root, "#/status")
            expect(tab.locator("section.status")).to_contain_text("file watchingon:")
            # a restore moved the folder away: the watcher stops and polls
            languages.rename(tmp_path / "away")

            def watcher() -> str:
                return http.get("/status").json()["sync"]["watcher"]["state"]

            wait_for(lambda: watcher() == "polling", 15, what="the watcher to stop")
            tab.reload()  # (the same address again: the page would not load anew)
            settled(tab, "#/status")
            row = tab.locator("section.status tr", has_text="file watching")
            expect(row.locator("td")).to_contain_text("stopped")
            expect(row.locator("td")).to_contain_text("periodic reconcile")
            index = tab.locator("section.status tr", has=tab.locator("th", has_text="index"))
            expect(index.first.locator("td")).to_contain_text("behind the files on disk")
            assert not watch.errors
    finally:
        if (tmp_path / "away").exists():
            (tmp_path / "away").rename(languages)
        server.stop()


def test_status_names_the_files_the_vault_refuses(
    page: tuple[Page, Watch], base: str, server: RunningIndexer
) -> None:
    """A file another program named with a U+202E, a colon or a byte that is no UTF-8 is
    left out of every listing and search: its folder said "0 notes inside", and only the
    CLI's ``indexer status`` named it. REST ``/status`` and the page's status view name it
    too, escaped (the U+202E shown as ``\\u202e``, never turning the line around)."""
    with httpx2.Client(base_url=base + "/api/v1", timeout=30) as http:
        assert http.put("/uv/notes/seen.md", content=b"# Seen\n", headers=MD).is_success
        assert "uv" not in http.get("/status").json()["unreachable"]
        hidden = os.fsencode(vault_dir(server, "uv") / "hidden")
        os.mkdir(hidden)
        for name in ("evil\u202egpj.md".encode(), b"ratio 3:2.md", b"caf\xe9.md"):
            with open(hidden + b"/" + name, "wb") as made_elsewhere:
                made_elsewhere.write(b"invisible")

        def said() -> dict | None:  # (a walk is kept ten times as long as it took)
            return http.get("/status").json()["unreachable"].get("uv")  # type: ignore[no-any-return]

        found = wait_for(said, 10, what="/status to name the files")
    names = ["hidden/caf\\xe9.md", "hidden/evil\\u202egpj.md", "hidden/ratio 3:2.md"]
    assert found["count"] == 3 and found["partial"] is False, found
    assert sorted(found["sample"]) == names  # (in the walk's order)
    tab, watch = page
    visit(tab, base, "#/status")
    row = tab.locator("section.status tr", has_text="unreachable files")
    text = row.locator("td").text_content() or ""
    assert "uv: 3 files or folders no tool can list, search or read" in text, text
    assert all(name in text for name in names) and "\u202e" not in text, text
    assert not watch.errors
