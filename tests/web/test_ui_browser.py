"""The browser page in headless Chromium against a real ``indexer serve`` (no token):
pick a vault, browse, search, read, edit, conflict, delete, history, hostile notes.

``UI_SCREENSHOTS=docs`` saves screenshots of the main views there (``make screenshots``).
"""

from __future__ import annotations

import base64
import os
import signal
import struct
import zlib
from pathlib import Path
from urllib.parse import quote

import httpx2
import pytest
from helpers.hostile import HOSTILE
from helpers.indexer_process import RunningIndexer, start_indexer, wait_for
from helpers.ui_page import MD, TEXT, Watch, note_file, settled, visit
from playwright.sync_api import Page, expect

from shared.workspace import Workspace


def png(width: int, height: int) -> bytes:
    """A small gradient picture, made here (no image files in the repository)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    rows = b"".join(
        b"\0" + bytes(c for x in range(width) for c in (40 + x, 90 + y, 200)) for y in range(height)
    )
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


PNG = png(160, 48)
GO = """---
tags: [grammar, verbs]
level: A2
---
# Past tense of "go"

The past tense of *go* is **went**; the participle is *gone*.

![a tiny picture](go.md.assets/went.png)

| form | word |
|------|------|
| past | went |

See also [be](be.md).
"""
SHOTS = os.environ.get("UI_SCREENSHOTS")


@pytest.fixture(scope="module")
def base(server: RunningIndexer) -> str:
    """The server's root URL, with vault ``ui`` filled in through the API."""
    root = server.url.removesuffix("/mcp")
    with httpx2.Client(base_url=root + "/api/v1", timeout=30) as http:
        image = {"content": base64.b64encode(PNG).decode(), "encoding": "base64"}
        assert http.put("/ui/notes/items/go.md.assets/went.png", json=image).is_success
        assert http.put("/ui/notes/items/go.md", content=GO.encode(), headers=MD).is_success
        be = "# To be\n\nwas, were, been\n"
        assert http.put("/ui/notes/items/be.md", content=be.encode(), headers=MD).is_success
        day = "# 2026-11-29\n\n## Event\nThe learner went to the park.\n"
        assert http.put("/ui/notes/events/2026/11/29.md", content=day.encode(), headers=MD)
        for name, text in HOSTILE.items():
            note = f"---\ntitle: <img src=x onerror=window.__pwned=1> {name}\n---\n# {name}\n\n"
            note += f"{text}\n\nhostile marker {name}\n"
            assert http.put(f"/ux/notes/xss/{name}.md", content=note.encode(), headers=MD)
    return root


def shoot(page: Page, name: str) -> None:
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / f"ui-{name}.png"))


def test_pick_a_vault_and_browse_folders(page: tuple[Page, Watch], base: str) -> None:
    tab, watch = page
    visit(tab, base, "#/")
    expect(tab.locator('a.vault[data-lang="ui"]')).to_contain_text("3 notes")
    shoot(tab, "vaults")
    tab.select_option("#vault-picker", "ui")
    settled(tab, "#/ui")
    expect(tab.locator("ul.folders")).to_contain_text("events/")
    # every note below a folder, said apart from its summary's count of direct children
    expect(tab.locator("ul.folders li.folder", has_text="items/")).to_contain_text("2 notes inside")
    expect(tab.locator("ul.folders li.folder", has_text="events/")).to_contain_text("1 note inside")
    tab.click("text=items/")
    settled(tab, "#/ui/browse/items")
    expect(tab.locator("ul.notes")).to_contain_text("go.md")
    shoot(tab, "browse")
    tab.click("ul.notes >> text=go.md")
    settled(tab, "#/ui/note/items/go.md")
    assert not watch.errors and not watch.dialogs


def test_search_shows_highlighted_snippets(page: tuple[Page, Watch], base: str) -> None:
    tab, watch = page
    visit(tab, base, "#/ui")
    tab.fill("#search-input", "went")
    tab.press("#search-input", "Enter")
    settled(tab, "#/ui/search?q=went")
    results = tab.locator("ol.search-results > li")
    expect(results).to_have_count(2)
    expect(results.first.locator("mark").first).to_have_text("went")
    shoot(tab, "search")
    tab.click('ol.search-results a:has-text("Past tense")')
    settled(tab, "#/ui/note/items/go.md")
    assert not watch.errors


def test_a_note_renders_with_properties_and_its_image(page: tuple[Page, Watch], base: str) -> None:
    tab, watch = page
    visit(tab, base, "#/ui/note/items/go.md")
    expect(tab.locator("h1.note-title")).to_have_text('Past tense of "go"')
    properties = tab.locator("table.properties")
    expect(properties.locator("tr", has_text="tags")).to_contain_text("grammar, verbs")
    expect(properties.locator("tr", has_text="level")).to_contain_text("A2")
    body = tab.locator("article.note-body")
    expect(body.locator("strong")).to_have_text("went")
    expect(body.locator("table td").first).to_have_text("past")
    image = body.locator("img")
    expect(image).to_have_attribute("src", "/api/v1/ui/raw/items/go.md.assets/went.png")
    tab.wait_for_function(
        "img => img.complete && img.naturalWidth === 160", arg=image.element_handle()
    )
    shoot(tab, "note")
    body.locator("a", has_text="be").click()
    settled(tab, "#/ui/note/items/be.md")
    expect(tab.locator("h1.note-title")).to_have_text("To be")
    assert not watch.errors


def test_edit_save_new_and_delete(
    page: tuple[Page, Watch], base: str, server: RunningIndexer
) -> None:
    tab, watch = page
    visit(tab, base, "#/ui/note/items/be.md")
    tab.click("#edit")
    settled(tab, "#/ui/edit/items/be.md")
    text = tab.input_value("#editor")
    tab.fill("#editor", text.replace("was, were, been", "was, were, been, **being**"))
    shoot(tab, "edit")
    tab.click("#save")
    settled(tab, "#/ui/note/items/be.md")
    expect(tab.locator("#message")).to_contain_text("Saved items/be.md")
    expect(tab.locator("article.note-body strong")).to_have_text("being")
    assert "**being**" in note_file(server, "ui", "items/be.md").read_text()

    visit(tab, base, "#/ui/browse/items")
    tab.click("text=New note")
    settled(tab, "#/ui/new/items")
    tab.fill("#new-path", "items/fresh.md")
    tab.fill("#editor", "# Fresh\n\nbrand new\n")
    tab.click("#save")
    settled(tab, "#/ui/note/items/fresh.md")
    assert "brand new" in note_file(server, "ui", "items/fresh.md").read_text()

    watch.accept_dialogs = True
    tab.click("#delete")
    settled(tab, "#/ui/browse/items")
    assert watch.dialogs == ["Delete items/fresh.md?"]
    assert not note_file(server, "ui", "items/fresh.md").exists()
    assert not watch.errors


def test_a_file_that_is_not_utf8_is_not_opened_in_the_editor(
    page: tuple[Page, Watch], base: str, server: RunningIndexer
) -> None:
    """The API gives such a file as base64: the editor showed that text, and Save
    replaced the file's bytes with it."""
    tab, watch = page
    raw = b"# Latin-1\n\ncaf\xe9 cr\xe8me\n"  # (written by another program: the API
    note_file(server, "ui", "items/latin1.md").write_bytes(raw)  # takes only UTF-8 notes)
    visit(tab, base, "#/ui/edit/items/latin1.md")
    expect(tab.locator(".error")).to_contain_text("items/latin1.md is not UTF-8 text")
    assert tab.locator("#editor").count() == 0 and tab.locator("#save").count() == 0
    assert note_file(server, "ui", "items/latin1.md").read_bytes() == raw
    assert not watch.errors


def test_a_conflicting_save_loses_nothing(
    page: tuple[Page, Watch], base: str, server: RunningIndexer
) -> None:
    tab, watch = page
    path = note_file(server, "ui", "items/conflict.md")
    with httpx2.Client(base_url=base + "/api/v1") as http:
        http.put("/ui/notes/items/conflict.md", content=b"# Conflict\n\nfirst\n", headers=MD)
    visit(tab, base, "#/ui/edit/items/conflict.md")
    mine = tab.input_value("#editor").replace("first", "mine, typed in the page")
    tab.fill("#editor", mine)
    path.write_text(path.read_text().replace("first", "theirs, from an editor"))  # meanwhile
    theirs = path.read_text()
    tab.click("#save")
    conflict = tab.locator("section.conflict")
    expect(conflict).to_be_visible()
    expect(conflict.locator("pre.theirs")).to_contain_text("theirs, from an editor")
    assert tab.input_value("#editor") == mine  # my text is still there
    assert path.read_text() == theirs  # and theirs was not overwritten
    shoot(tab, "conflict")
    tab.click("#overwrite")
    settled(tab, "#/ui/note/items/conflict.md")
    assert "mine, typed in the page" in path.read_text()
    assert not watch.errors


def test_hostile_notes_run_no_script(page: tuple[Page, Watch], base: str) -> None:
    tab, watch = page
    for name in sorted(HOSTILE):  # one page for all: a script that ran would stay visible
        visit(tab, base, f"#/ux/note/xss/{name}.md")
        body = tab.locator("article.note-body")
        expect(body).to_contain_text(f"hostile marker {name}")
        expect(tab.locator("h1.note-title")).to_contain_text("<img src=x onerror")  # as text
        for link in body.locator("a").all():
            href = (link.get_attribute("href") or "").lower().strip()
            assert not href.startswith(("javascript:", "data:")), name
        kept = body.locator("script, iframe, object, embed, style, form, input, base, meta, svg")
        assert kept.count() == 0, name
        attributes = body.evaluate(
            "root => [...root.querySelectorAll('*')].flatMap(e => [...e.attributes]"
            ".map(a => a.name)).filter(n => n.startsWith('on') || n === 'style')"
        )
        assert attributes == [], name
        tab.locator("article.note-body").click(position={"x": 3, "y": 3})
        assert tab.evaluate("window.__pwned") is None, name
        assert watch.dialogs == [] and watch.errors == [], (name, watch.dialogs, watch.errors)


def test_hostile_text_in_search_results_and_raw_files_is_inert(
    page: tuple[Page, Watch], base: str
) -> None:
    tab, watch = page
    visit(tab, base, "#/ux/search?q=hostile")
    expect(tab.locator("ol.search-results > li").first).to_be_visible()
    assert tab.locator("ol.search-results img, ol.search-results script").count() == 0
    tab.goto(f"{base}/api/v1/ux/raw/xss/script.md")  # a note opened as a page of its own
    expect(tab.locator("body")).to_contain_text("<script>")
    assert tab.evaluate("window.__pwned") is None
    assert watch.dialogs == []


def test_plain_text_files_are_listed_beside_notes(
    page: tuple[Page, Watch], base: str, server: RunningIndexer
) -> None:
    """Browse asked for ``*.md`` only: a ``.txt`` the page's own "New note" made, and a
    folder holding only Claude's memory files, were never shown."""
    tab, watch = page
    with httpx2.Client(base_url=base + "/api/v1", timeout=30) as http:
        for path in ("texts/prefs.json", "texts/todo.txt", "claude/memories/notes.yaml"):
            assert http.put(f"/tx/notes/{path}", content=b"plain text\n", headers=TEXT).is_success
        assert http.put("/tx/notes/texts/a.md", content=b"# A\n", headers=MD).is_success
        image = {"content": base64.b64encode(PNG).decode(), "encoding": "base64"}
        assert http.put("/tx/notes/texts/a.md.assets/p.png", json=image).is_success
    visit(tab, base, "#/tx")
    expect(tab.locator("ul.folders li.folder", has_text="claude/")).to_contain_text("1 note inside")
    visit(tab, base, "#/tx/browse/texts")
    names = tab.locator("ul.notes a").all_text_contents()
    assert sorted(names) == ["a.md", "prefs.json", "todo.txt"], names  # (no .assets/)
    assert tab.locator("ul.folders").count() == 0
    assert not watch.errors


def test_names_from_a_vault_never_reorder_what_is_beside_them(
    page: tuple[Page, Watch], base: str
) -> None:
    """A title ending in an unclosed U+202E showed the path beside it reversed
    (``dm.troper/idib``); a Hebrew folder's breadcrumb put ``.md`` on the first folder."""
    tab, watch = page
    with httpx2.Client(base_url=base + "/api/v1", timeout=30) as http:
        note = "---\ntitle: Quarterly report \u202e\n---\nbidi marker\n"
        assert http.put("/bd/notes/bidi/report.md", content=note.encode(), headers=MD)
        tagged = '---\ntags: ["\\u202eone", two]\n---\ntext\n'
        assert http.put("/bd/notes/bidi/tagged.md", content=tagged.encode(), headers=MD)
        hebrew = "/bd/notes/" + quote("עברית/תיקייה/שלום.md")
        assert http.put(hebrew, content=b"# shalom\n", headers=MD).is_success
    visit(tab, base, "#/bd/search?q=bidi")
    isolated = "e => getComputedStyle(e).unicodeBidi"
    result = tab.locator("ol.search-results > li").first
    assert result.locator("a").evaluate(isolated) == "isolate"
    assert result.locator("span.path").evaluate(isolated) == "isolate"
    # (a hit is no island: a highlighted Hebrew word left its line's order)
    assert result.locator("mark").first.evaluate(isolated) == "normal"
    visit(tab, base, "#/bd/note/" + quote("עברית/תיקייה/שלום.md"))
    for crumb in tab.locator("nav.crumbs > *").all():
        assert crumb.evaluate(isolated) == "isolate"
    visit(tab, base, "#/bd/note/bidi/tagged.md")  # (one tag's U+202E reversed the others)
    tags = tab.locator("table.properties tr", has_text="tags").locator(".item")
    assert tags.all_text_contents() == ["\u202eone", "two"]
    assert [tag.evaluate(isolated) for tag in tags.all()] == ["isolate", "isolate"]
    assert not watch.errors


def test_a_right_to_left_note_reads_right_to_left(page: tuple[Page, Watch], base: str) -> None:
    """A Hebrew or Arabic note was laid out left to right: its words in the reverse order,
    ``ו-123`` as ``123-ו``, the full stop at the far right (a helper's look at the page)."""
    tab, watch = page
    text = "# שלום\n\nהערה חדשה עם Mixed English ו-123.\n\nAn English line.\n"
    with httpx2.Client(base_url=base + "/api/v1", timeout=30) as http:
        path = "/rt/notes/" + quote("items/עברית.md")
        assert http.put(path, content=text.encode(), headers=MD).is_success
    visit(tab, base, "#/rt/note/" + quote("items/עברית.md"))
    sides = """p => {
        const range = document.createRange(); range.selectNodeContents(p);
        const text = range.getBoundingClientRect(), box = p.getBoundingClientRect();
        return [Math.round(text.left - box.left), Math.round(box.right - text.right)];
    }"""
    hebrew, english = tab.locator(".note-body p").all()
    left, right = hebrew.evaluate(sides)
    assert right < 5 < left, (left, right)  # against the right edge
    left, right = english.evaluate(sides)
    assert left < 5 < right, (left, right)
    assert tab.locator("h1.note-title").evaluate("e => getComputedStyle(e).unicodeBidi") == (
        "plaintext"
    )
    assert not watch.errors


def test_summaries_show_abstracts_when_the_core_has_them(
    page: tuple[Page, Watch], base: str
) -> None:
    with httpx2.Client(base_url=base + "/api/v1") as http:
        if not http.get("/status").json()["features"]["summaries"]:
            pytest.skip("summaries not merged yet: the core has no summaries object")
    tab, _ = page
    visit(tab, base, "#/ui")
    expect(tab.locator("section.summary .abstract")).not_to_be_empty()


def test_history_diff_and_restore(
    page: tuple[Page, Watch], base: str, server: RunningIndexer
) -> None:
    tab, watch = page
    with httpx2.Client(base_url=base + "/api/v1") as http:
        first = http.put("/ui/notes/items/h.md", content=b"# H\n\nversion one\n", headers=MD)
        etag = first.headers["etag"]
        http.put(
            "/ui/notes/items/h.md", content=b"# H\n\nversion two\n", headers=MD | {"If-Match": etag}
        )
    visit(tab, base, "#/ui/note/items/h.md")
    tab.click("#history")
    settled(tab, "#/ui/history/items/h.md")
    rows = tab.locator("table.history-table tbody tr")
    assert rows.count() >= 2
    oldest = rows.last
    oldest.locator("button.diff-current").click()
    expect(tab.locator("pre.diff .add", has_text="version two")).to_have_count(1)
    expect(tab.locator("pre.diff .del", has_text="version one")).to_have_count(1)
    shoot(tab, "history")
    watch.accept_dialogs = True
    oldest.locator("button.restore").click()
    settled(tab, "#/ui/note/items/h.md")
    expect(tab.locator("article.note-body")).to_contain_text("version one")
    assert "version one" in note_file(server, "ui", "items/h.md").read_text()
    assert not watch.errors


def test_a_hand_edit_of_a_summary_is_restored_from_its_history(
    page: tuple[Page, Watch], base: str, server: RunningIndexer
) -> None:
    """The indexer makes an edited summary again (README: history keeps each version):
    the folder's summary links to its history, whose hand-edit row restores the edit;
    the summary's page offers no edit or delete (the tools refuse those)."""
    with httpx2.Client(base_url=base + "/api/v1") as http:
        if not http.get("/status").json()["features"]["summaries"]:
            pytest.skip("summaries not merged yet: the core has no summaries object")
        overview = note_file(server, "ui", "items/.overview.md")
        wait_for(overview.exists, 30, what="the summary of items/")
        overview.write_text(overview.read_text() + "\nMY REMARK: the deadline is 3 March.\n")
        http.put("/ui/notes/items/s.md", content=b"# S\n\nsummarized again\n", headers=MD)
        wait_for(lambda: "MY REMARK" not in overview.read_text(), 30, what="a new summary")
    tab, watch = page
    visit(tab, base, "#/ui/browse/items")
    tab.click("#summary-history")
    settled(tab, "#/ui/history/items/.overview.md")
    edited = tab.locator("table.history-table tbody tr", has_text="external").first
    watch.accept_dialogs = True
    edited.locator("button.restore").click()
    settled(tab, "#/ui/note/items/.overview.md")
    expect(tab.locator("article.note-body")).to_contain_text("MY REMARK")
    expect(tab.locator("#edit")).to_have_count(0)
    expect(tab.locator("#delete")).to_have_count(0)
    assert "MY REMARK" in overview.read_text()
    assert not watch.errors


def test_a_hostile_vault_id_in_the_address_stays_one_path_segment(
    page: tuple[Page, Watch], base: str
) -> None:
    """The vault id comes from the address: one that is no vault id (``..``, ``?`` or a
    ``/`` that reshape the request) is refused before any request, and a broken escape
    is said."""
    tab, watch = page
    asked: list[str] = []
    tab.on("request", lambda request: asked.append(request.url))
    for hash_ in ("#/ux%2F..%2F..%2Fstatus", "#/ux%3Fq%3D1/search?q=hostile"):
        visit(tab, base, hash_)
        expect(tab.locator(".error")).to_be_visible()
    api = [url.split("/api/v1/", 1)[1] for url in asked if "/api/v1/" in url]
    assert all(p == "status" for p in api), api  # refused before any request of its own
    visit(tab, base, "#/%E0%A4%A/browse")
    expect(tab.locator(".error")).to_contain_text("not well formed")
    assert watch.dialogs == [] and watch.errors == [], watch.errors


def test_dot_segments_in_the_address_never_reach_another_vault(
    page: tuple[Page, Watch], base: str, server: RunningIndexer
) -> None:
    """``#/ui/edit/..%2F..%2Fux%2F...`` loaded another vault's note in the editor (the
    browser resolved ``/api/v1/ui/notes/../../ux/notes/...``) and saved over it."""
    tab, watch = page
    asked: list[str] = []
    tab.on("request", lambda request: asked.append(request.url))
    target = "xss/" + next(iter(HOSTILE)) + ".md"
    for kind in ("edit", "note", "history"):
        visit(tab, base, f"#/ui/{kind}/..%2F..%2Fux%2Fnotes%2F{quote(target, safe='')}")
        expect(tab.locator(".error")).to_contain_text("not well formed")
        visit(tab, base, f"#/..%2Fux/{kind}/{quote(target, safe='')}")
        expect(tab.locator(".error")).to_be_visible()  # one segment the API refuses
        visit(tab, base, f"#/../{kind}/{quote(target, safe='')}")
        expect(tab.locator(".error")).to_contain_text("not well formed")
    # a "/" in the vault id (even as %2F, which the server decodes before routing)
    visit(tab, base, f"#/ux%2Fnotes%2Fxss/edit/{quote(target.split('/', 1)[1], safe='')}")
    expect(tab.locator(".error")).to_contain_text("not well formed")
    assert not [url for url in asked if "/api/v1/ux" in url or "/api/v1/ui/" in url], asked
    # a typed path with dot segments (the browser drops even %2E%2E) is refused unsent
    visit(tab, base, "#/ui/new/")
    tab.fill("#new-path", "../../ux/notes/typed.md")
    tab.fill("textarea", "# typed\n")
    tab.click("#save")
    expect(tab.locator(".error")).to_contain_text("forbidden_path")
    assert not [url for url in asked if "typed" in url], asked
    assert not note_file(server, "ux", "notes/typed.md").exists()
    assert not note_file(server, "ux", "typed.md").exists()
    assert watch.dialogs == [] and watch.errors == [], watch.errors


def test_delete_removes_only_the_note_as_shown(
    page: tuple[Page, Watch], base: str, server: RunningIndexer
) -> None:
    """A write after the page showed the note (an agent's) is not deleted unseen: the
    page's Delete sends the shown note's etag, and a refusal is said, not thrown."""
    tab, watch = page
    with httpx2.Client(base_url=base + "/api/v1") as http:
        http.put("/ui/notes/items/doomed.md", content=b"# Doomed\n\nold draft\n", headers=MD)
        visit(tab, base, "#/ui/note/items/doomed.md")
        newer = b"# Doomed\n\nnew facts an agent just saved\n"
        assert http.put("/ui/notes/items/doomed.md", content=newer, headers=MD).is_success
    watch.accept_dialogs = True
    tab.click("#delete")
    expect(tab.locator("#view > .error")).to_contain_text("Not deleted")
    assert watch.dialogs == ["Delete items/doomed.md?"]
    assert "new facts an agent just saved" in note_file(server, "ui", "items/doomed.md").read_text()
    assert not watch.errors
    tab.reload()  # shown again: now it deletes
    settled(tab, "#/ui/note/items/doomed.md")
    tab.click("#delete")
    settled(tab, "#/ui/browse/items")
    assert not note_file(server, "ui", "items/doomed.md").exists()
    assert not watch.errors


def test_restore_replaces_only_the_note_as_the_history_showed_it(
    page: tuple[Page, Watch], base: str, server: RunningIndexer
) -> None:
    """Restore read the note's etag when clicked: a write after the history view loaded
    (an agent's) was replaced unseen. It sends the etag the view was shown with."""
    tab, watch = page
    with httpx2.Client(base_url=base + "/api/v1") as http:
        first = http.put("/ui/notes/items/kept.md", content=b"# Kept\n\nfirst\n", headers=MD)
        second = b"# Kept\n\nsecond\n"
        http.put(
            "/ui/notes/items/kept.md",
            content=second,
            headers=MD | {"If-Match": first.headers["etag"]},
        )
        visit(tab, base, "#/ui/history/items/kept.md")
        expect(tab.locator("table.history-table tbody tr")).to_have_count(2)
        newer = b"# Kept\n\nnew facts an agent just saved\n"
        assert http.put("/ui/notes/items/kept.md", content=newer, headers=MD).is_success
    watch.accept_dialogs = True
    tab.locator("table.history-table tbody tr").last.locator("button.restore").click()
    expect(tab.locator("#view > .error")).to_contain_text("Not restored")
    assert "new facts an agent just saved" in note_file(server, "ui", "items/kept.md").read_text()
    assert not watch.errors
    tab.reload()  # shown again: now it restores
    expect(tab.locator("table.history-table tbody tr")).to_have_count(3)
    tab.locator("table.history-table tbody tr").last.locator("button.restore").click()
    settled(tab, "#/ui/note/items/kept.md")
    assert "first" in note_file(server, "ui", "items/kept.md").read_text()
    assert not watch.errors


def test_a_folder_of_more_than_ten_thousand_notes_hides_nothing_beside_it(
    page: tuple[Page, Watch], tmp_path: Path
) -> None:
    """The folder view was built from a listing cut at 10,000 files: a folder holding more
    hid every folder and note whose name sorts after it (no way to reach them). Its one
    walk now counts every note below each subfolder.

    A server of its own, on notes written before it starts, killed at the end: the view
    walks the disk, and indexing 10,001 notes (17 s here) is no part of what is tested."""
    tab, watch = page
    workspace = tmp_path / "ws"
    vault = Workspace(workspace).vault_dir("big")
    (vault / "archive").mkdir(parents=True)
    for i in range(10_001):
        (vault / "archive" / f"n{i:05d}.md").write_text(f"# n{i}\n")
    (vault / "projects").mkdir()
    (vault / "projects" / "plan.md").write_text("# Plan\n")
    (vault / "todo.md").write_text("# Todo\n")
    big = start_indexer(workspace, settled=False, env={"INDEXER_SUMMARIES": "0"})
    try:
        visit(tab, big.url.removesuffix("/mcp"), "#/big")
        folders = tab.locator("ul.folders a")
        expect(folders).to_have_text(["archive/", "projects/"])
        expect(tab.locator("ul.notes a")).to_have_text(["todo.md"])
        expect(tab.locator("ul.folders li.folder").first).to_contain_text("10,001 notes inside")
        expect(tab.locator("text=Only the first 10,000 files")).to_have_count(0)
        folders.nth(1).click()
        settled(tab, "#/big/browse/projects")
        expect(tab.locator("ul.notes a")).to_have_text(["plan.md"])
        assert not watch.errors
    finally:
        big.stop(signal.SIGKILL)  # (a throwaway workspace: nothing to keep)
