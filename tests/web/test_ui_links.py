"""Obsidian's links in the browser page against a real ``indexer serve``: a wikilink
opens the note it names, a picture embedded by its bare name (kept in ``Attachments/``)
loads, a link to nothing is marked, and a folder of pictures lists them."""

from __future__ import annotations

import httpx2
import pytest
from helpers.indexer_process import RunningIndexer
from helpers.ui_page import MD, Watch, note_file, visit
from playwright.sync_api import Page, expect
from test_ui_browser import PNG

START = """# Start here

Read [[Linking notes|the links]], or [[Nowhere]].

![[shot.png|100]]

![a shot](shot.png)

`[[Linking notes]]` is how a link is written.
"""


PARAGRAPHS = "\n\n".join(f"Paragraph {n}." for n in range(200))
LONG = f"# Long\n\n{PARAGRAPHS}\n\n## Far Away\n\nhere\n"
START += "\nSee [[Long#Part#far away|the far part]].\n"


@pytest.fixture(scope="module")
def base(server: RunningIndexer) -> str:
    """Vault ``ob`` as Obsidian keeps one: notes in folders, pictures in Attachments/."""
    root = server.url.removesuffix("/mcp")
    with httpx2.Client(base_url=root + "/api/v1", timeout=30) as http:
        for path, text in (
            ("Guides/Start here.md", START),
            ("Other/Linking notes.md", "# Linking notes\n\nLinks join notes.\n"),
            ("Other/Long.md", LONG),
        ):
            assert http.put(f"/ob/notes/{path}", content=text.encode(), headers=MD).is_success
    picture = note_file(server, "ob", "Attachments/shot.png")
    picture.parent.mkdir(parents=True)
    picture.write_bytes(PNG)  # (the tools write pictures only in *.assets/: Obsidian did)
    return root


def test_a_wikilink_opens_its_note_and_a_bare_named_picture_loads(
    page: tuple[Page, Watch], base: str
) -> None:
    tab, watch = page
    visit(tab, base, "#/ob/note/Guides/Start%20here.md")
    body = tab.locator("article.note-body")
    images = body.locator("img")
    expect(images).to_have_count(2)
    for image in images.all():
        assert image.get_attribute("src") == "/api/v1/ob/raw/Attachments/shot.png"
        tab.wait_for_function(
            "img => img.complete && img.naturalWidth === 160", arg=image.element_handle()
        )
    expect(images.first).to_have_attribute("width", "100")
    expect(body.locator("span.unresolved")).to_have_text("Nowhere")
    expect(body.locator("code")).to_have_text("[[Linking notes]]")
    body.locator("a", has_text="the links").click()
    expect(tab.locator("h1.note-title")).to_have_text("Linking notes")
    assert "/ob/note/Other/Linking" in tab.url
    assert not watch.errors


def test_a_folder_of_pictures_lists_them(page: tuple[Page, Watch], base: str) -> None:
    tab, watch = page
    visit(tab, base, "#/ob/browse/Attachments")
    shown = tab.locator("ul.files a")
    expect(shown).to_have_text(["shot.png"])
    expect(shown).to_have_attribute("href", "/api/v1/ob/raw/Attachments/shot.png")
    expect(tab.get_by_text("No notes here.")).to_have_count(0)
    assert not watch.errors


def test_a_link_to_nothing_looks_unlike_a_link(page: tuple[Page, Watch], base: str) -> None:
    tab, watch = page
    visit(tab, base, "#/ob/note/Guides/Start%20here.md")
    missing = tab.locator("article.note-body span.unresolved")
    style = missing.evaluate("e => getComputedStyle(e).textDecorationStyle")
    assert style == "dotted" and missing.get_attribute("title") == "Not found in the vault: Nowhere"
    assert not watch.errors


def test_a_link_to_a_heading_opens_the_note_there(page: tuple[Page, Watch], base: str) -> None:
    """``[[Note#Heading]]`` opened the note at its top (the page's routes use the URL's
    fragment): the link carries the heading, the page scrolls to it."""
    tab, watch = page
    visit(tab, base, "#/ob/note/Guides/Start%20here.md")
    tab.locator("article.note-body a", has_text="the far part").click()
    expect(tab.locator("h1.note-title")).to_have_text("Long")
    heading = tab.locator("article.note-body h2", has_text="Far Away")
    expect(heading).to_be_in_viewport()
    assert tab.evaluate("window.scrollY") > 0
    assert not watch.errors
