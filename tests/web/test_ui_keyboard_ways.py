"""Where a person is after an action, in Chromium against a real ``indexer serve``: a
"stay" at the editor's question makes no history entry (the declined address was left a
Forward away), and after a save, a restore or a delete the keyboard's focus is on
something near (it fell to the page's body: the next Tab started again at the top)."""

from __future__ import annotations

import pytest
from helpers.indexer_process import RunningIndexer
from helpers.ui_page import Watch, note_file, put, settled, visit
from playwright.sync_api import Page, expect

FOCUSED = "() => [document.activeElement.tagName, document.activeElement.id,\n" + (
    "document.activeElement.dataset.path || '']"
)


@pytest.fixture(scope="module")
def base(server: RunningIndexer) -> str:
    return server.url.removesuffix("/mcp")


def test_a_declined_address_is_no_forward_entry(page: tuple[Page, Watch], base: str) -> None:
    """A crumb's click (or the picker, or a search) then "stay": the page went back to the
    editor's entry, and Forward led to the address the user had declined."""
    put(base, "kwa", "items/stay.md", "# Stay\n\nfirst\n")
    put(base, "kwb", "other.md", "# Other\n")
    tab, watch = page
    visit(tab, base, "#/kwa/note/items/stay.md")
    visit(tab, base, "#/kwa/edit/items/stay.md")
    editing = f"{base}/ui/#/kwa/edit/items/stay.md"
    mine = tab.input_value("#editor") + "typed\n"
    tab.fill("#editor", mine)
    entries = tab.evaluate("window.history.length")
    tab.fill("#search-input", "first")
    leaves = (
        lambda: tab.click(".crumbs a >> text=items"),
        lambda: tab.focus(".crumbs a >> text=items") or tab.keyboard.press("Enter"),
        lambda: tab.select_option("#vault-picker", "kwb"),
        lambda: tab.press("#search-input", "Enter"),
    )
    for leave in leaves:  # each "stay"
        with tab.expect_event("dialog"):
            leave()
        expect(tab).to_have_url(editing)
        assert tab.evaluate("window.history.length") == entries  # no entry was made
        assert tab.input_value("#editor") == mine
    assert tab.input_value("#vault-picker") == "kwa"
    tab.go_forward()  # nowhere to go
    expect(tab).to_have_url(editing)
    assert tab.input_value("#editor") == mine
    watch.accept_dialogs = True  # Back, "leave": the note it came from
    tab.go_back()
    settled(tab, "#/kwa/note/items/stay.md")
    assert len(watch.dialogs) == 5 and not watch.errors


def test_the_focus_stays_near_after_a_save_a_restore_and_a_delete(
    page: tuple[Page, Watch], base: str, server: RunningIndexer
) -> None:
    """Keyboard only: after each, Tab or Enter goes on from where the person was."""
    for name in ("a.md", "b.md", "c.md"):
        put(base, "kwf", f"list/{name}", f"# {name}\n\nfirst\n")
    tab, watch = page
    watch.accept_dialogs = True
    visit(tab, base, "#/kwf/edit/list/b.md")
    expect(tab.locator("#editor")).to_be_focused()
    tab.keyboard.press("Control+End")
    tab.keyboard.type("second\n")
    tab.keyboard.press("Control+s")
    settled(tab, "#/kwf/note/list/b.md")
    assert tab.evaluate(FOCUSED) == ["A", "edit", ""]  # Enter: the editor again
    tab.keyboard.press("Enter")
    settled(tab, "#/kwf/edit/list/b.md")
    expect(tab.locator("#editor")).to_be_focused()
    tab.keyboard.press("Escape")
    for _ in range(3):  # Esc, Tab: past the editor's keys line to Save
        tab.keyboard.press("Tab")
        if tab.evaluate(FOCUSED)[1] == "save":
            break
    tab.keyboard.press("Enter")  # (nothing changed: saved as it is)
    settled(tab, "#/kwf/note/list/b.md")
    assert tab.evaluate(FOCUSED) == ["A", "edit", ""]
    visit(tab, base, "#/kwf/history/list/b.md")
    tab.focus("tr[data-version='1'] button.restore")
    tab.keyboard.press("Enter")
    settled(tab, "#/kwf/note/list/b.md")
    assert "second" not in note_file(server, "kwf", "list/b.md").read_text()
    assert tab.evaluate(FOCUSED) == ["A", "edit", ""]
    tab.focus("#delete")
    tab.keyboard.press("Enter")
    settled(tab, "#/kwf/browse/list")
    assert tab.evaluate(FOCUSED) == ["A", "", "list/c.md"]  # the note listed after it
    tab.keyboard.press("Enter")
    settled(tab, "#/kwf/note/list/c.md")
    tab.focus("#delete")
    tab.keyboard.press("Enter")
    settled(tab, "#/kwf/browse/list")
    assert tab.evaluate(FOCUSED) == ["A", "", "list/a.md"]  # the last one left
    assert not note_file(server, "kwf", "list/b.md").exists()
    assert not watch.errors
