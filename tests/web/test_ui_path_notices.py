"""Vault paths in the page's dialogs, notices and errors, in Chromium against a real
``indexer serve``: a right-to-left path reads folder by folder in its order (as the
crumbs do), a Latin one is left as it is, and a path's characters are text, never markup.

A native ``confirm()`` dialog cannot be measured: its string (Playwright's
``dialog.message``) is laid out in a plain paragraph of the page, where Chromium's bidi
algorithm places its words as it would in the dialog's one line."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import httpx2
import pytest
from helpers.indexer_process import RunningIndexer, start_indexer, vault_dir, wait_for
from helpers.ui_page import MD, Watch, note_file, settled, visit
from playwright.sync_api import Browser, Locator, Page, expect

PATH = "ملاحظات/2024/كتاب.md"
WORDS = ["ملاحظات", "2024", "كتاب", ".md"]
HEBREW = "פרויקטים/סיכום.md"
HEBREW_WORDS = ["פרויקטים", "סיכום", ".md"]
# Markup as text: "<", ">" and '"' are refused in a vault's names, "&" and "'" are not; a
# name spelled as entities becomes "<b>&'" if it is ever taken as HTML.
MARKUP = "&lt;b&gt;/&amp;'q'&quot;.md"
ISOLATES = str.maketrans("", "", "\u2066\u2067\u2068\u2069")

# The left edge of each of ``words`` in an element's text, wherever it is in its nodes.
WORD_LEFTS = """(e, words) => {
    const walker = document.createTreeWalker(e, NodeFilter.SHOW_TEXT), found = {};
    for (let node = walker.nextNode(); node; node = walker.nextNode())
        for (const word of words) {
            const at = node.data.indexOf(word);
            if (at < 0 || word in found) continue;
            const range = document.createRange();
            range.setStart(node, at); range.setEnd(node, at + word.length);
            found[word] = range.getBoundingClientRect().left;
        }
    return words.map(word => found[word]);
}"""
# A plain string laid out on one line of a left-to-right paragraph of the page.
LAY_OUT = """text => {
    const p = document.createElement("p");
    p.id = "laid-out"; p.style.whiteSpace = "nowrap"; p.textContent = text;
    document.body.append(p);
}"""


@pytest.fixture(scope="module")
def base(server: RunningIndexer) -> str:
    return server.url.removesuffix("/mcp")


def write(base: str, lang: str, path: str, text: str, reason: str = "") -> None:
    with httpx2.Client(base_url=base + "/api/v1", timeout=30) as http:
        params = {"reason": reason} if reason else {}
        put = http.put(
            f"/{lang}/notes/{quote(path)}", content=text.encode(), headers=MD, params=params
        )
        assert put.is_success, put.text


def hashed(path: str) -> str:
    """``path`` in a view's address as the page writes it (encodeURIComponent's)."""
    return quote(path, safe="/!*'()")


def in_order(element: Locator, words: list[str]) -> None:
    """``words`` stand left to right in ``element``, as they come in its text."""
    lefts = element.evaluate(WORD_LEFTS, words)
    assert None not in lefts and lefts == sorted(lefts), dict(zip(words, lefts, strict=True))


def reads_in_order(tab: Page, text: str, words: list[str]) -> None:
    """``words`` stand left to right in the string ``text`` laid out on one line."""
    tab.evaluate(LAY_OUT, text)
    try:
        in_order(tab.locator("#laid-out"), words)
    finally:
        tab.evaluate("() => document.getElementById('laid-out').remove()")


def test_the_dialogs_name_a_right_to_left_path_in_its_order(
    page: tuple[Page, Watch], base: str, server: RunningIndexer
) -> None:
    """``Delete ملاحظات/2024/كتاب.md?`` (and the restore and undo questions) read as one
    right-to-left run: the file name at the left, ``.md`` after the first folder's name.
    Each name is an isolate now; a Latin path's question is the same string as before.
    Dismissed, each changes nothing."""
    write(base, "pd", PATH, "# كتاب\n\nسطر أول.\n")
    write(base, "pd", PATH, "# كتاب\n\nسطر ثان.\n", "entry:e7 Merge")
    write(base, "pd", HEBREW, "# סיכום\n\nשורה.\n", "entry:e7 Merge")
    write(base, "pd", "plain/latin.md", "# Latin\n")
    before = note_file(server, "pd", PATH).read_bytes()
    tab, watch = page
    visit(tab, base, "#/pd/note/" + quote(PATH))
    with tab.expect_event("dialog"):
        tab.click("#delete")
    visit(tab, base, "#/pd/history/" + quote(PATH))
    with tab.expect_event("dialog"):
        tab.click("tr[data-version='1'] button.restore")
    with tab.expect_event("dialog"):
        tab.click("tr[data-version='2'] button.undo-entry")
    visit(tab, base, "#/pd/note/plain/latin.md")
    with tab.expect_event("dialog"):
        tab.click("#delete")
    delete, restore, undo, latin = watch.dialogs
    assert delete.translate(ISOLATES) == f"Delete {PATH}?"
    assert restore.translate(ISOLATES) == f"Restore version 1 of {PATH}?"
    assert undo.translate(ISOLATES) == (
        "Undo memory entry e7? 2 files it changed go back to before it (one it made is"
        f" deleted): {HEBREW}, {PATH}."
    )
    reads_in_order(tab, delete, ["Delete", *WORDS, "?"])
    assert "\u2066كتاب.md\u2069" in delete  # (one isolate a name, its ".md" in it)
    reads_in_order(tab, restore, ["Restore version 1 of", *WORDS, "?"])
    reads_in_order(tab, undo, ["deleted):", *HEBREW_WORDS, ", ", *WORDS[:3]])
    assert latin == "Delete plain/latin.md?"
    assert note_file(server, "pd", PATH).read_bytes() == before
    assert note_file(server, "pd", HEBREW).exists()
    assert note_file(server, "pd", "plain/latin.md").exists()
    assert not watch.errors


def test_a_file_not_utf8_names_its_path_in_order(
    page: tuple[Page, Watch], base: str, server: RunningIndexer
) -> None:
    """The editor's refusal of a file that is not UTF-8 showed its path as one
    right-to-left run; the file is left as it is."""
    raw = b"# Latin-1\n\ncaf\xe9\n"
    target = vault_dir(server, "pu") / PATH
    target.parent.mkdir(parents=True)
    target.write_bytes(raw)  # (another program's: the API takes only UTF-8 notes)
    tab, watch = page
    visit(tab, base, "#/pu/edit/" + quote(PATH))
    error = tab.locator("#view > .error")
    expect(error).to_have_text(f"error: {PATH} is not UTF-8 text: it cannot be edited here")
    in_order(error, ["error:", *WORDS, "is not UTF-8"])
    assert tab.locator("#editor").count() == 0
    assert target.read_bytes() == raw
    assert not watch.errors


def test_the_save_and_delete_notices_name_a_path_in_order_and_as_text(
    page: tuple[Page, Watch], base: str, server: RunningIndexer
) -> None:
    """The notices of a save and a delete share the restore notice's path (pathName):
    an Arabic path reads folder by folder, a name spelled as entities stays that text."""
    tab, watch = page
    watch.accept_dialogs = True
    notice = tab.locator("#message")
    for path, words in ((PATH, WORDS), (MARKUP, ["&lt;b&gt;", "&amp;'q'&quot;", ".md"])):
        write(base, "pn", path, "# old\n")
        visit(tab, base, "#/pn/edit/" + hashed(path))
        tab.fill("#editor", "# new\n")
        tab.click("#save")
        settled(tab, "#/pn/note/" + hashed(path))
        expect(notice).to_have_text(f"Saved {path}.")
        in_order(notice, ["Saved", *words])
        assert note_file(server, "pn", path).read_text().endswith("\n# new\n")
        tab.click("#delete")
        settled(tab, "#/pn/browse/" + hashed(path.rsplit("/", 1)[0]))
        expect(notice).to_have_text(f"Deleted {path}.")
        in_order(notice, ["Deleted", *words])
        assert notice.locator("b").count() == 0
        assert not note_file(server, "pn", path).exists()
    assert not watch.errors


def test_the_conflict_notice_names_a_path_in_order_and_as_text(
    page: tuple[Page, Watch], base: str, server: RunningIndexer
) -> None:
    """A new note saved over one there already: ``Not saved: … exists already.`` above,
    and the conflict box's ``… exists already.``; the note there is left as it was."""
    tab, watch = page
    watch.accept_dialogs = True  # (leaving the editor's unsaved text for the next case)
    for path, words in ((HEBREW, HEBREW_WORDS), (MARKUP, ["&lt;b&gt;", "&amp;'q'&quot;", ".md"])):
        write(base, "pc", path, "# there\n")
        there = note_file(server, "pc", path).read_bytes()
        visit(tab, base, "#/pc/new/" + hashed(path.rsplit("/", 1)[0]))
        tab.fill("#new-path", path)
        tab.fill("#editor", "# mine\n")
        tab.click("#save")
        notice = tab.locator("#message")
        expect(notice).to_have_text(f"Not saved: {path} exists already.")
        in_order(notice, ["Not saved:", *words, "exists already"])
        said = tab.locator("section.conflict p").first
        expect(said).to_contain_text(f"{path} exists already.")
        in_order(said, [*words, "exists already"])
        assert tab.locator("#message b, section.conflict b").count() == 0
        assert note_file(server, "pc", path).read_bytes() == there
        expect(tab.locator("#editor")).to_have_value("# mine\n")  # (the text kept)
    assert not watch.errors


def test_a_name_of_markup_the_vault_refuses_is_shown_as_text(
    page: tuple[Page, Watch], base: str, server: RunningIndexer
) -> None:
    """A file another program named ``<b>x<i>&"'.md`` (a name no tool takes) is named by
    the status as those characters, never as bold."""
    write(base, "pm", "seen.md", "# Seen\n")
    name = "<b>x<i>&\"'.md"
    (vault_dir(server, "pm") / name).write_text("made elsewhere\n")
    with httpx2.Client(base_url=base + "/api/v1", timeout=30) as http:

        def said() -> dict | None:
            return http.get("/status").json()["unreachable"].get("pm")  # type: ignore[no-any-return]

        found = wait_for(said, 10, what="/status to name the file")
    assert found["sample"] == [name], found
    tab, watch = page
    visit(tab, base, "#/status")
    cell = tab.locator("section.status tr", has_text="unreachable files").locator("td")
    expect(cell).to_contain_text(f"{name}; rename")
    assert cell.locator("b, i").count() == 0
    assert not watch.errors


def test_a_refusal_names_the_path_asked_for_in_order(
    page: tuple[Page, Watch], base: str, server: RunningIndexer
) -> None:
    """The server's refusals name the path asked for (``ملاحظات/2024/غائب.md does not
    exist``): the page showed those words as one right-to-left run, ``غائب`` at the left
    and ``.md`` after the first folder's name. A link to a note not there met it."""
    write(base, "pr", PATH, "# كتاب\n")
    missing = "ملاحظات/2024/غائب.md"
    tab, watch = page
    error = tab.locator("#view > .error")
    for view, said, words in (
        ("note", f"not_found: {missing} does not exist", ["غائب", "does not"]),
        ("history", f"not_found: {missing} has no history and does not exist", ["غائب", "has no"]),
        ("edit", f"not_found: {missing} does not exist", ["غائب", "does not"]),
    ):
        visit(tab, base, f"#/pr/{view}/" + quote(missing))
        expect(error).to_have_text(said)
        in_order(error, ["not_found:", "ملاحظات", "2024", *words])
    visit(tab, base, "#/pr/note/" + quote("ملاحظات/2024"))
    expect(error).to_contain_text("ملاحظات/2024 is a folder")
    in_order(error, ["ملاحظات", "2024", "is a folder"])
    visit(tab, base, "#/pr/note/" + hashed(MARKUP))
    expect(error).to_have_text(f"not_found: {MARKUP} does not exist")
    assert error.locator("b").count() == 0
    assert not (vault_dir(server, "pr") / "ملاحظات" / "2024" / "غائب.md").exists()
    assert not watch.errors


def test_a_new_notes_right_to_left_path_is_said_in_order_below_its_field(
    page: tuple[Page, Watch], base: str, server: RunningIndexer
) -> None:
    """A new note's field laid its folder out as one right-to-left run
    (``ملاحظات/2024/مجلد عميق/new-note.md`` showed ``مجلد عميق`` at the left, then ``2024``,
    then ``ملاحظات``), and a field cannot isolate its parts: the line below it says the
    path folder by folder, as typed; a Latin path needs no such line."""
    folder = "ملاحظات/2024/مجلد عميق"
    write(base, "pw", f"{folder}/أول.md", "# أول\n")
    tab, watch = page
    visit(tab, base, "#/pw/new/" + quote(folder))
    shown = tab.locator("#new-path-shown")
    expect(shown).to_have_text(f"Saved as {folder}/new-note.md.")
    in_order(shown, ["Saved as", "ملاحظات", "2024", "مجلد عميق", "new-note"])
    tab.fill("#new-path", "./פרויקטים//2025/סיכום.md")
    expect(shown).to_have_text("Saved as פרויקטים/2025/סיכום.md.")  # (as it is sent)
    in_order(shown, ["Saved as", "פרויקטים", "2025", "סיכום", ".md"])
    tab.fill("#new-path", "notes/plain.md")
    expect(shown).to_be_hidden()
    tab.fill("#new-path", f"{folder}/ثان.md")
    tab.fill("#editor", "# ثان\n")
    tab.click("#save")
    settled(tab, "#/pw/note/" + quote(f"{folder}/ثان.md"))
    assert note_file(server, "pw", f"{folder}/ثان.md").read_text().endswith("\n# ثان\n")
    assert not watch.errors


def test_a_searchs_heading_ends_its_query_where_it_ends(
    page: tuple[Page, Watch], base: str
) -> None:
    """A link's query with an unclosed U+202E (RIGHT-TO-LEFT OVERRIDE) reversed the rest
    of the heading: ``Search “abc‮def” in qs`` showed ``sq ni`` after it. The quoted query
    is an island of its own direction now (an Arabic one right to left)."""
    write(base, "qs", "seen.md", "# Seen\n")
    tab, watch = page
    visit(tab, base, "#/qs/search?q=" + quote("abc\u202edef"))
    heading = tab.locator("#view h1")
    assert heading.text_content() == "Search abc\u202edef in qs"
    in_order(heading, ["Search", "abc", "i", "n", "qs"])
    visit(tab, base, "#/qs/search?q=" + quote("كتاب abc"))
    first, then = heading.evaluate(WORD_LEFTS, ["كتاب", "abc"])
    assert then < first  # (right to left: its first word at its right)
    in_order(heading, ["Search", "abc", "كتاب", " in "])
    assert not watch.errors


def test_a_right_to_left_workspace_is_named_in_its_order(
    page: tuple[Page, Watch], tmp_path: Path
) -> None:
    """The status's workspace, ``…/ملاحظات/2024/مساحة``, and the command that opens the
    page again (said when the indexer does not answer) showed that folder's path as one
    right-to-left run, ``مساحة`` at the left."""
    workspace = tmp_path / "ملاحظات" / "2024" / "مساحة"
    server = start_indexer(workspace)
    tab, watch = page
    try:
        visit(tab, server.url.removesuffix("/mcp"), "#/status")
        cell = tab.locator("section.status tr", has_text="workspace").locator("td")
        assert cell.text_content() == str(workspace)
        in_order(cell, ["ملاحظات", "2024", "مساحة"])
        assert not watch.errors
    finally:
        server.stop()
    tab.evaluate("location.hash = '#/pz'")  # (gone: the page says how to open it again)
    command = tab.locator("#view > .error code.open-command")
    expect(command).to_have_text(f"indexer open --workspace '{workspace}'")
    command.evaluate("e => { e.style.whiteSpace = 'nowrap'; }")  # (one line, to compare)
    in_order(command, ["indexer open", "ملاحظات", "2024", "مساحة"])


def test_a_long_path_in_a_refusal_banner_or_conflict_breaks_in_a_narrow_window(
    browser: Browser, base: str
) -> None:
    """A 240-letter name in a refusal (``… does not exist``), the banner of a deleted
    note's history or a conflict box was one unbreakable word: a phone's page grew six
    times as wide as its screen, the words after it off to the side. (A deleted note's
    version pickers, ``3 · <time> · delete``, were wider than a 360 px screen too.)"""
    name = "long/" + "a" * 240 + ".md"
    write(base, "pl", name, "# long\n")
    with httpx2.Client(base_url=base + "/api/v1", timeout=30) as http:
        etag = http.get(f"/pl/stat/{name}").json()["etag"]
        gone = http.delete(
            f"/pl/notes/{name}", headers={"If-Match": f'"{etag}"', "X-Requested-With": "t"}
        )
        assert gone.is_success, gone.text
    write(base, "pl", "long/" + "b" * 240 + ".md", "# there\n")
    context = browser.new_context(viewport={"width": 360, "height": 740})
    tab = context.new_page()
    tab.set_default_timeout(10_000)
    try:
        for view, shown in (
            (f"#/pl/note/{name}", "#view > .error"),
            (f"#/pl/history/{name}", "p.banner"),
        ):
            visit(tab, base, view)
            expect(tab.locator(shown)).to_contain_text(name)
            width = tab.evaluate("[document.documentElement.scrollWidth, innerWidth]")
            assert width[0] <= width[1], (view, width)
        visit(tab, base, "#/pl/new/long")
        tab.fill("#new-path", "long/" + "b" * 240 + ".md")
        tab.click("#save")
        expect(tab.locator("section.conflict")).to_contain_text("exists already")
        width = tab.evaluate("[document.documentElement.scrollWidth, innerWidth]")
        assert width[0] <= width[1], width
    finally:
        context.close()


def test_an_undo_refused_names_the_file_in_order(
    page: tuple[Page, Watch], base: str, server: RunningIndexer
) -> None:
    """``entry e9 cannot be undone, nothing was changed: ملاحظات/2024/كتاب.md (changed
    since …)`` showed the file's path as one right-to-left run; nothing is changed."""
    write(base, "pv", PATH, "# كتاب\n\nسطر أول.\n")
    write(base, "pv", PATH, "# كتاب\n\nسطر ثان.\n", "entry:e9 Merge")
    write(base, "pv", PATH, "# كتاب\n\nسطر ثالث.\n")
    before = note_file(server, "pv", PATH).read_bytes()
    tab, watch = page
    visit(tab, base, "#/pv/history/" + quote(PATH))
    tab.click("tr[data-version='2'] button.undo-entry")
    error = tab.locator("#view > .error")
    expect(error).to_contain_text(f"entry e9 cannot be undone, nothing was changed: {PATH} (")
    in_order(error, ["nothing was changed:", *WORDS, "(changed"])
    assert not watch.dialogs  # (refused at the dry run)
    assert note_file(server, "pv", PATH).read_bytes() == before
    assert not watch.errors
