"""The page's loose ends, in Chromium against a real ``indexer serve``: a folder of names
no tool can reach says so (it said "0 notes inside" and "No notes here." while the status
named them), "Take theirs" after a conflict leaves the user's text a Ctrl+Z away (setting
the text cleared the editor's undo history), and a big paste's save is not slowed by the
browser keeping the text in the session history."""

from __future__ import annotations

import httpx2
import pytest
from helpers.indexer_process import RunningIndexer
from helpers.ui_page import Watch, note_file, put, settled, visit
from playwright.sync_api import Page, expect


@pytest.fixture(scope="module")
def base(server: RunningIndexer) -> str:
    return server.url.removesuffix("/mcp")


def test_a_folder_of_names_no_tool_can_reach_says_so(
    page: tuple[Page, Watch], base: str, server: RunningIndexer
) -> None:
    """Made by another program, "ratio 3:2.md" is refused by the vault: odd/ was listed
    as "0 notes inside" and opened as "No notes here.", while the status named it."""
    put(base, "ul", "mixed/good.md", "# Good\n\nreachable\n")
    put(base, "ul", "clean/fine.md", "# Fine\n")
    vault = note_file(server, "ul", "")
    (vault / "odd").mkdir()
    (vault / "odd" / "ratio 3:2.md").write_text("# Ratio\n")
    (vault / "mixed" / "a:b.md").write_text("# A or b\n")
    (vault / "deep" / "inner").mkdir(parents=True)
    (vault / "deep" / "inner" / "c:d.md").write_text("# C\n")
    with httpx2.Client(base_url=base + "/api/v1") as http:
        folder = http.get("/ul/folder", params={"path": "odd"}).json()
        top = http.get("/ul/folder").json()
    assert folder["unreachable"] == {"count": 1, "sample": ["odd/ratio 3:2.md"], "partial": False}
    assert {item["path"]: item["unreachable"] for item in top["folders"]} == {
        "clean": 0,
        "deep": 1,
        "mixed": 1,
        "odd": 1,
    }
    assert top["unreachable"]["count"] == 0
    tab, watch = page
    visit(tab, base, "#/ul")
    items = tab.locator("ul.folders > li")
    reach = "no tool can reach (see Status)"
    expect(items.filter(has_text="odd/")).to_contain_text(
        f"0 notes inside, and 1 file or folder {reach}"
    )
    expect(items.filter(has_text="mixed/")).to_contain_text(
        f"1 note inside, and 1 file or folder {reach}"
    )
    expect(items.filter(has_text="deep/")).to_contain_text(
        f"0 notes inside, and 1 file or folder {reach}"
    )
    expect(items.filter(has_text="clean/").locator("span.muted")).to_have_text(" 1 note inside")
    expect(tab.locator("#unreachable-here")).to_have_count(0)
    visit(tab, base, "#/ul/browse/odd")
    expect(tab.locator("#unreachable-here")).to_have_text(
        "1 file or folder here no tool can list, search or read (a name the vault refuses, or"
        " too deep): ratio 3:2.md; rename or move it."
    )
    expect(tab.locator("text=No notes here.")).to_have_count(0)
    visit(tab, base, "#/ul/browse/deep")
    expect(tab.locator("ul.folders > li")).to_contain_text("0 notes inside, and 1 file or folder")
    visit(tab, base, "#/ul/browse/clean")
    expect(tab.locator("#unreachable-here")).to_have_count(0)
    assert (vault / "odd" / "ratio 3:2.md").read_text() == "# Ratio\n"  # (only looked at)
    assert not watch.errors


def test_take_theirs_leaves_your_text_a_ctrl_z_away(
    page: tuple[Page, Watch], base: str, server: RunningIndexer
) -> None:
    """ "Take theirs" set the editor's text, which cleared its undo history: Ctrl+Z did
    nothing, and the text typed before was gone."""
    put(base, "ult", "both.md", "# Both\n\nfirst\n")
    path = note_file(server, "ult", "both.md")
    tab, watch = page
    watch.accept_dialogs = True  # ("Replace your text in the editor ...?": yes)
    visit(tab, base, "#/ult/edit/both.md")
    tab.focus("#editor")
    tab.keyboard.press("Control+End")
    tab.keyboard.type("mine, typed\n")
    mine = tab.input_value("#editor")
    path.write_text(path.read_text().replace("first", "theirs, from an editor"))  # meanwhile
    theirs = path.read_text()
    tab.click("#save")
    expect(tab.locator("section.conflict")).to_be_visible()
    tab.click("#take-theirs")
    expect(tab.locator("section.conflict")).to_be_hidden()
    assert tab.input_value("#editor") == theirs
    assert tab.evaluate("document.activeElement.id") == "editor"  # (the button went away)
    tab.keyboard.press("Control+z")
    assert tab.input_value("#editor") == mine
    expect(tab.locator("#message")).to_contain_text("Your text is back")
    tab.keyboard.press("Control+Shift+z")
    assert tab.input_value("#editor") == theirs
    tab.keyboard.press("Control+End")
    tab.keyboard.type("added to theirs")
    tab.keyboard.press("Control+z")  # the browser's own undo first
    assert tab.input_value("#editor") == theirs
    tab.keyboard.press("Control+z")  # then back to mine
    assert tab.input_value("#editor") == mine
    assert path.read_text() == theirs  # nothing saved meanwhile
    tab.keyboard.press("Control+s")  # mine, over theirs as taken (their etag)
    settled(tab, "#/ult/note/both.md")
    assert "mine, typed" in path.read_text() and "theirs" not in path.read_text()
    assert not watch.errors


def test_a_big_paste_is_saved_whole_and_not_kept_in_the_session_history(
    page: tuple[Page, Watch], base: str, server: RunningIndexer
) -> None:
    """Chromium keeps a form field's text in the history entry at every address change
    (the save's move to the note view too): 0.39 s of a 5 MB paste's 5 s save. The
    editor is no form field to restore (autocomplete off); the paste is saved whole."""
    put(base, "ulb", "big.md", "# Big\n")
    tab, watch = page
    visit(tab, base, "#/ulb/edit/big.md")
    assert tab.get_attribute("#editor", "autocomplete") == "off"
    para = "## Part\n\n" + "lorem ipsum dolor sit amet, שלום עולם, 你好世界 " * 4 + "\n\n"
    text = tab.input_value("#editor") + para * (1_000_000 // len(para.encode()))
    tab.evaluate("t => { document.getElementById('editor').value = t; }", text)
    tab.set_default_timeout(60_000)  # (a loaded machine: the server indexes it first)
    tab.click("#save")
    settled(tab, "#/ulb/note/big.md")
    body = note_file(server, "ulb", "big.md").read_text().split("\n---\n", 1)[1]
    assert body.rstrip("\n") == text.split("\n---\n", 1)[1].rstrip("\n")  # (its "updated:" moved)
    assert not watch.errors


def test_staying_in_the_editor_after_back_keeps_the_way_back(
    page: tuple[Page, Watch], base: str
) -> None:
    """Back, then "stay" at the question, wrote the editor's address over the view Back
    had reached: the next Back skipped the note and went to its folder, and a "stay"
    after a crumb's click left the editor twice in the history."""
    put(base, "ulh", "items/way.md", "# Way\n\nfirst\n")
    tab, watch = page
    visit(tab, base, "#/ulh/browse/items")
    visit(tab, base, "#/ulh/note/items/way.md")
    visit(tab, base, "#/ulh/edit/items/way.md")
    mine = tab.input_value("#editor") + "typed\n"
    tab.fill("#editor", mine)
    editing = f"{base}/ui/#/ulh/edit/items/way.md"
    for leave in (tab.go_back, lambda: tab.click(".crumbs a >> text=items")):  # "stay"
        with tab.expect_event("dialog"):
            leave()
        expect(tab).to_have_url(editing)
        assert tab.input_value("#editor") == mine  # (not opened again from disk)
    tab.evaluate("document.body.dataset.ready = ''")
    watch.accept_dialogs = True  # "leave"
    tab.go_back()
    settled(tab, "#/ulh/note/items/way.md")
    tab.go_back()
    settled(tab, "#/ulh/browse/items")
    tab.go_forward()
    settled(tab, "#/ulh/note/items/way.md")
    tab.go_forward()  # the editor, opened again from disk
    settled(tab, "#/ulh/edit/items/way.md")
    assert "typed" not in tab.input_value("#editor")
    assert len(watch.dialogs) == 3 and not watch.errors
