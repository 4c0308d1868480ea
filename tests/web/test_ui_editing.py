"""A person editing in the page loses nothing silently: leaving the editor with unsaved
text asks first (a crumb, Cancel, Back, closing the tab), a double click on Save saves
once, a new note at a taken path says so, and a server that stopped is said in words.
Also what a person reads around it: one note is "1 note", a search says how many it
found beyond the 50 shown, and a narrow window never scrolls sideways."""

from __future__ import annotations

from pathlib import Path

import httpx2
import pytest
from helpers.indexer_process import RunningIndexer, start_indexer
from helpers.ui_page import MD, Watch, note_file, put, settled, visit
from playwright.sync_api import Browser, Page, Route, expect

LEAVE = "Leave the editor? Your changes are not saved and will be lost."
# Whether leaving now would make the browser ask (the page's beforeunload handler).
BEFOREUNLOAD = """() => {
  const event = new Event("beforeunload", { cancelable: true });
  window.dispatchEvent(event);
  return event.defaultPrevented;
}"""


@pytest.fixture(scope="module")
def base(server: RunningIndexer) -> str:
    return server.url.removesuffix("/mcp")


def test_leaving_the_editor_with_unsaved_text_asks_first(
    page: tuple[Page, Watch], base: str, server: RunningIndexer
) -> None:
    """A click on a crumb dropped the typed text without a word."""
    put(base, "ed", "items/draft.md", "# Draft\n\nfirst\n")
    on_disk = note_file(server, "ed", "items/draft.md").read_bytes()
    tab, watch = page
    visit(tab, base, "#/ed/edit/items/draft.md")
    assert not tab.evaluate(BEFOREUNLOAD)  # nothing typed: nothing to ask
    mine = tab.input_value("#editor").replace("first", "typed, not saved yet")
    tab.fill("#editor", mine)
    assert tab.evaluate(BEFOREUNLOAD)  # closing the tab or reloading asks
    for leave in (".crumbs a >> text=items", "text=Cancel"):  # each dismissed: "stay"
        with tab.expect_event("dialog"):
            tab.click(leave)
        assert watch.dialogs[-1] == LEAVE
        expect(tab).to_have_url(f"{base}/ui/#/ed/edit/items/draft.md")
        assert tab.input_value("#editor") == mine
    watch.accept_dialogs = True  # "leave"
    tab.click("text=Cancel")
    settled(tab, "#/ed/note/items/draft.md")
    assert not tab.evaluate(BEFOREUNLOAD)
    assert note_file(server, "ed", "items/draft.md").read_bytes() == on_disk
    # opened and left untouched: no question (CRLF, which the editor holds as LF, too)
    note_file(server, "ed", "items/draft.md").write_bytes(b"# Draft\r\n\r\nWindows\r\n")
    visit(tab, base, "#/ed/edit/items/draft.md")
    expect(tab.locator("#editor")).to_have_value("# Draft\n\nWindows\n")
    tab.click(".crumbs a >> text=items")
    settled(tab, "#/ed/browse/items")
    assert len(watch.dialogs) == 3 and not watch.errors


def test_a_saved_edit_leaves_without_a_question_and_a_double_click_saves_once(
    page: tuple[Page, Watch], base: str, server: RunningIndexer
) -> None:
    """The second click's PUT met the first one's new etag: "Not saved: the note changed
    elsewhere", about the user's own save."""
    put(base, "ed", "items/twice.md", "# Twice\n\nfirst\n")
    tab, watch = page
    puts: list[str] = []
    tab.on("request", lambda request: puts.append(request.url) if request.method == "PUT" else None)
    visit(tab, base, "#/ed/edit/items/twice.md")
    tab.fill("#editor", tab.input_value("#editor").replace("first", "second"))
    tab.dblclick("#save")
    settled(tab, "#/ed/note/items/twice.md")
    expect(tab.locator("#message")).to_have_text("Saved items/twice.md.")
    expect(tab.locator("article.note-body")).to_contain_text("second")
    assert len(puts) == 1
    assert not watch.dialogs and not watch.errors
    assert "second" in note_file(server, "ed", "items/twice.md").read_text()


def test_a_new_note_at_a_taken_path_says_the_path_is_taken(
    page: tuple[Page, Watch], base: str, server: RunningIndexer
) -> None:
    """It said "This note was changed since you opened it" of a note never opened."""
    put(base, "ed", "items/taken.md", "# Taken\n\nalready here\n\nשורה בעברית.\n")
    on_disk = note_file(server, "ed", "items/taken.md").read_bytes()
    tab, watch = page
    visit(tab, base, "#/ed/new/items")
    tab.fill("#new-path", "items/taken.md")
    tab.fill("#editor", "# Mine\n\nnew text\n")
    tab.click("#save")
    conflict = tab.locator("section.conflict")
    expect(conflict).to_contain_text("items/taken.md exists already")
    expect(conflict.locator("pre.theirs")).to_contain_text("already here")
    # (each of its lines in its own direction, as in the editor: a Hebrew line right to left)
    bidi = "e => getComputedStyle(e).unicodeBidi"
    assert conflict.locator("pre.theirs").evaluate(bidi) == "plaintext"
    expect(tab.locator("#message")).to_have_text("Not saved: items/taken.md exists already.")
    assert tab.input_value("#editor") == "# Mine\n\nnew text\n"
    assert note_file(server, "ed", "items/taken.md").read_bytes() == on_disk
    assert not watch.errors


def test_a_note_moved_away_while_edited_is_said_and_made_again_on_request(
    page: tuple[Page, Watch], base: str, server: RunningIndexer
) -> None:
    """The conflict box read "This note was deleted ..." then "null" (a null given to
    replaceChildren), and said nothing of a move."""
    put(base, "edm", "src.md", "# Src\n\nbody\n")
    tab, watch = page
    visit(tab, base, "#/edm/edit/src.md")
    tab.fill("#editor", "# Src\n\nmine\n")
    with httpx2.Client(base_url=base + "/api/v1") as http:  # an agent moves it meanwhile
        http.post("/edm/move", json={"path": "src.md", "new_path": "dst.md"}).raise_for_status()
    tab.click("#save")
    conflict = tab.locator("section.conflict")
    expect(conflict).to_contain_text("deleted or moved away since you opened it")
    assert "null" not in conflict.inner_text()
    assert not note_file(server, "edm", "src.md").exists()  # nothing written yet
    assert tab.input_value("#editor") == "# Src\n\nmine\n"
    tab.click("#overwrite")
    settled(tab, "#/edm/note/src.md")
    assert "mine" in note_file(server, "edm", "src.md").read_text()
    assert "body" in note_file(server, "edm", "dst.md").read_text()
    assert not watch.errors


@pytest.mark.parametrize(
    ("typed", "saved"), [("./dotted/./n.md", "dotted/n.md"), ("twice//slash.md", "twice/slash.md")]
)
def test_a_new_notes_harmless_spellings_are_saved_and_shown_normalized(
    page: tuple[Page, Watch], base: str, server: RunningIndexer, typed: str, saved: str
) -> None:
    """The SPEC's harmless spellings: "./a.md" was refused by the page ("'.' segments"),
    and "a//b.md" was saved as a/b.md but shown at #/.../a//b.md with an empty crumb."""
    tab, watch = page
    visit(tab, base, "#/edp/new")
    tab.fill("#new-path", typed)
    tab.fill("#editor", "# Spelled\n\nhere\n")
    tab.click("#save")
    settled(tab, f"#/edp/note/{saved}")
    expect(tab.locator("#message")).to_have_text(f"Saved {saved}.")
    assert "here" in note_file(server, "edp", saved).read_text()
    assert not watch.dialogs and not watch.errors


def test_a_stopped_server_is_said_in_words_and_the_text_stays(
    browser: Browser, tmp_path: Path
) -> None:
    """The page said "error: Failed to fetch" (the browser's words)."""
    own = start_indexer(tmp_path / "ws")
    try:
        root = own.url.removesuffix("/mcp")
        put(root, "ed", "gone.md", "# Gone\n\nfirst\n")
        context = browser.new_context()
        tab = context.new_page()
        tab.set_default_timeout(10_000)
        visit(tab, root, "#/ed/edit/gone.md")
        tab.fill("#editor", "# Gone\n\nstill mine\n")
    finally:
        own.stop()
    tab.click("#save")
    expect(tab.locator(".error")).to_contain_text("unreachable: The indexer did not answer")
    assert tab.input_value("#editor") == "# Gone\n\nstill mine\n"
    context.close()


def test_one_note_is_one_note_and_a_search_says_how_many_it_found(
    page: tuple[Page, Watch], base: str
) -> None:
    put(base, "eda", "solo.md", "# Solo\n\nalone\n")
    for n in range(60):
        put(base, "edb", f"many/n{n:02d}.md", f"# N {n}\n\nplentiful word {n}\n")
    tab, watch = page
    visit(tab, base, "#/")
    expect(tab.locator('a.vault[data-lang="eda"]')).to_have_text("eda 1 note")
    visit(tab, base, "#/edb/search?q=plentiful")
    expect(tab.locator("ol.search-results > li")).to_have_count(50)
    expect(tab.locator("#search-count")).to_contain_text("The best 50 of 60 notes found")
    visit(tab, base, "#/eda/search?q=alone")
    expect(tab.locator("ol.search-results > li")).to_have_count(1)
    expect(tab.locator("#search-count")).to_have_count(0)
    assert not watch.errors


def test_a_narrow_window_never_scrolls_sideways(browser: Browser, base: str) -> None:
    """A long name widened the whole page (1,945 px for a 360 px phone) and the history
    table put its restore buttons off screen."""
    long_name = "a-very-long-note-name-without-any-break-" * 5 + ".md"
    put(
        base,
        "edw",
        f"items/{long_name}",
        "# Long\n\n| a | b | c | d | e | f |\n|-|-|-|-|-|-|\n"
        + "| "
        + " | ".join(["wide-cell-text-here"] * 6)
        + " |\n\nunbroken "
        + "z" * 300
        + "\n",
    )
    put(base, "edw", "items/long-history.md", "# History\n\none\n")
    with httpx2.Client(base_url=base + "/api/v1") as http:
        for n in range(3):
            http.put(
                "/edw/notes/items/long-history.md",
                content=f"# History\n\n{n}\n".encode(),
                headers=MD,
            ).raise_for_status()
    context = browser.new_context(viewport={"width": 360, "height": 740})
    tab = context.new_page()
    tab.set_default_timeout(10_000)
    try:
        for view in (
            "#/edw/browse/items",
            f"#/edw/note/items/{long_name}",
            "#/edw/history/items/long-history.md",
            "#/edw/search?q=unbroken",
        ):
            visit(tab, base, view)
            width = tab.evaluate("[document.documentElement.scrollWidth, innerWidth]")
            assert width[0] <= width[1], (view, width)
    finally:
        context.close()


def test_a_history_longer_than_the_page_lists_says_so(page: tuple[Page, Watch], base: str) -> None:
    """The page listed the newest 100 versions of 105 without a word of the rest."""
    with httpx2.Client(base_url=base + "/api/v1") as http:
        for n in range(105):
            text = f"# Versions\n\n{n}\n".encode()
            http.put("/edh/notes/versions.md", content=text, headers=MD).raise_for_status()
        http.put("/edh/notes/few.md", content=b"# Few\n", headers=MD).raise_for_status()
    tab, watch = page
    visit(tab, base, "#/edh/history/versions.md")
    expect(tab.locator("table.history-table tbody tr")).to_have_count(100)
    expect(tab.locator("#older-versions")).to_contain_text("Only the newest 100 versions")
    visit(tab, base, "#/edh/history/few.md")
    expect(tab.locator("table.history-table tbody tr")).to_have_count(1)
    expect(tab.locator("#older-versions")).to_have_count(0)
    assert not watch.errors


def test_the_keyboard_saves(page: tuple[Page, Watch], base: str, server: RunningIndexer) -> None:
    """Ctrl+S in the editor opened the browser's "save page as"; Enter in a new note's
    path field did nothing."""
    put(base, "edk", "keys.md", "# Keys\n\nfirst\n")
    tab, watch = page
    visit(tab, base, "#/edk/edit/keys.md")
    tab.fill("#editor", "# Keys\n\nsaved by Ctrl+S\n")
    tab.press("#editor", "Control+s")
    settled(tab, "#/edk/note/keys.md")
    assert "saved by Ctrl+S" in note_file(server, "edk", "keys.md").read_text()
    visit(tab, base, "#/edk/new")
    tab.fill("#editor", "# Typed\n\nsaved by Enter\n")
    tab.fill("#new-path", "typed.md")
    tab.press("#new-path", "Enter")
    settled(tab, "#/edk/note/typed.md")
    assert "saved by Enter" in note_file(server, "edk", "typed.md").read_text()
    assert not watch.dialogs and not watch.errors


def test_what_is_typed_while_a_save_is_on_its_way_is_never_dropped(
    page: tuple[Page, Watch], base: str, server: RunningIndexer
) -> None:
    """A 5 MB note's save took 5-9 s: what was typed meanwhile was taken as saved (the
    editor's text once the answer came, not the one sent) and the page moved on to the
    note view, unasked, without it. The editor is read-only while its text is on its way."""
    put(base, "edh", "held.md", "# Held\n\nfirst\n")
    tab, watch = page
    visit(tab, base, "#/edh/edit/held.md")
    held: list[Route] = []  # (the PUT, held on its way until continued)
    tab.route("**/api/v1/edh/notes/held.md", lambda route: held.append(route))
    tab.fill("#editor", "# Held\n\nsent\n")
    tab.click("#save")
    while not held:
        tab.wait_for_timeout(20)
    tab.focus("#editor")
    tab.keyboard.type(" typed meanwhile")
    in_editor = tab.input_value("#editor")
    held[0].continue_()
    settled(tab, "#/edh/note/held.md")
    on_disk = note_file(server, "edh", "held.md").read_text()
    assert in_editor == "# Held\n\nsent\n"  # (nothing typed went in: nothing lost)
    assert on_disk.endswith("\n# Held\n\nsent\n")
    assert not watch.errors


def test_a_save_refused_leaves_the_editor_writable(
    page: tuple[Page, Watch], base: str, server: RunningIndexer
) -> None:
    """(its read-only time ends with the save, whatever the answer)"""
    put(base, "edh", "refused.md", "# Refused\n\nfirst\n")
    tab, _ = page
    visit(tab, base, "#/edh/edit/refused.md")
    put(base, "edh", "refused.md", "# Refused\n\nan agent's\n")
    tab.fill("#editor", "# Refused\n\nmine\n")
    tab.click("#save")
    expect(tab.locator("#overwrite")).to_be_visible()
    assert not tab.locator("#editor").evaluate("e => e.readOnly")
    tab.locator("#editor").press("End")
    tab.keyboard.type(" more")
    assert tab.input_value("#editor").endswith(" more")
