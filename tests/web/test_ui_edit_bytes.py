"""What a person types in the page's editor is what lands on disk, byte for byte: a text
file's own line breaks (CRLF, a lone CR, mixed), its BOM, no newline at its end, tabs,
right-to-left text, emoji and combining marks, in a 5,000-line file too. And a save the
server refuses or cannot make says why in words, with the text kept in the editor.

A 5,000-line text is put in the editor as a paste does (its value, then an input event):
Playwright's fill types it in as one insertion and ran past 20 s on this machine."""

from __future__ import annotations

import subprocess
import sys
import zlib
from collections.abc import Iterator

import httpx2
import pytest
from helpers.indexer_process import RunningIndexer, start_indexer
from helpers.ui_page import MD, Watch, note_file, settled, visit
from playwright.sync_api import Browser, Page, expect

# A paste: the textarea's value set, and the input event the browser sends with it.
PASTE = "(el, text) => { el.value = text; el.dispatchEvent(new Event('input', {bubbles: true})); }"
# A line of each kind of text: a tab, Arabic and Hebrew (with an RLM), Thai,
# Chinese, an emoji family and a flag (ZWJ, regional indicators), combining marks.
MIXED = "\tcell\tعربي שלום\u200f ไทย 中文 👩\u200d👩\u200d👧 🇫🇷 e\u0301 n\u0303 ﷽"
TOKEN = "edit-bytes-token"


@pytest.fixture(scope="module")
def base(server: RunningIndexer) -> str:
    return server.url.removesuffix("/mcp")


def write_file(server: RunningIndexer, lang: str, path: str, data: bytes) -> None:
    """A file as another program writes it (the API would normalize a note's)."""
    target = note_file(server, lang, path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)


def save(tab: Page, lang: str, path: str) -> None:
    tab.click("#save")
    settled(tab, f"#/{lang}/note/{path}")


def test_a_5000_line_text_files_bytes_are_kept_through_an_edit(
    page: tuple[Page, Watch], base: str, server: RunningIndexer
) -> None:
    """Any edit from the page wrote a CRLF file back with LF everywhere (the textarea
    holds every break as LF): each of its 5,000 lines changed on disk."""
    lines = [f"line {n} {MIXED}" for n in range(5000)]
    original = "\ufeff" + "\r\n".join(lines)  # a BOM, CRLF, no newline at the end
    write_file(server, "eb", "big.txt", original.encode())
    tab, watch = page
    tab.set_default_timeout(30_000)  # (a 5,000-line view on a loaded machine)
    visit(tab, base, "#/eb/edit/big.txt")
    expect(tab.locator("#editor")).to_have_value(original.replace("\r\n", "\n"))
    lines[2500] = f"line 2500 edited in the page {MIXED}"
    tab.locator("#editor").evaluate(PASTE, "\n".join(["\ufeff" + lines[0], *lines[1:]]))
    tab.click("#editor")
    tab.keyboard.press("Control+End")
    tab.keyboard.type("!")  # and typed, with the keyboard
    save(tab, "eb", "big.txt")
    expected = "\ufeff" + "\r\n".join(lines) + "!"
    assert note_file(server, "eb", "big.txt").read_bytes() == expected.encode()
    assert not watch.errors


@pytest.mark.parametrize(
    ("original", "typed", "saved"),
    [
        (b"old mac\rline\r", "old mac\nline two\n", b"old mac\rline two\r"),  # a lone CR
        (b"a\r\nb\nc\r\nd\r\n", "a\nB\nc\nd\n", b"a\r\nB\nc\r\nd\r\n"),  # mixed: b's LF kept
        (b"a\r\nb\r\n", "a\nnew\nb\n", b"a\r\nnew\r\nb\r\n"),  # an added line: the file's CRLF
        (b"a\r\nb\r\n", "b\n", b"b\r\n"),  # a line removed
        (b'{\r\n  "k": 1\r\n}', '{\n  "k": 2\n}', b'{\r\n  "k": 2\r\n}'),
        (b"lf only\n", "lf only\nmore", b"lf only\nmore"),
    ],
)
def test_a_files_line_breaks_stay_its_own_where_it_was_not_edited(
    page: tuple[Page, Watch],
    base: str,
    server: RunningIndexer,
    original: bytes,
    typed: str,
    saved: bytes,
) -> None:
    name = f"breaks-{zlib.crc32(original)}.{'json' if original.startswith(b'{') else 'txt'}"
    write_file(server, "eb", name, original)
    tab, watch = page
    visit(tab, base, f"#/eb/edit/{name}")
    tab.fill("#editor", typed)
    save(tab, "eb", name)
    assert note_file(server, "eb", name).read_bytes() == saved
    assert not watch.errors


def test_a_notes_text_is_saved_as_typed_under_its_frontmatter(
    page: tuple[Page, Watch], base: str, server: RunningIndexer
) -> None:
    """A note (.md) is normalized by the server (LF, no BOM, one newline at the end, its
    frontmatter); every character typed in its body is kept."""
    body = "\n".join(f"{n} {MIXED}" for n in range(5000))
    write_file(server, "eb", "note.md", b"# Note\r\n\r\nfirst\r\n")
    tab, watch = page
    tab.set_default_timeout(30_000)
    visit(tab, base, "#/eb/edit/note.md")
    tab.locator("#editor").evaluate(PASTE, f"# Note\n\n{body}")
    save(tab, "eb", "note.md")
    on_disk = note_file(server, "eb", "note.md").read_text(encoding="utf-8")
    assert on_disk.startswith("---\n") and on_disk.endswith(f"\n---\n# Note\n\n{body}\n")
    assert not watch.errors


def test_a_note_deleted_on_disk_while_edited_is_said_to_be_deleted(
    page: tuple[Page, Watch], base: str, server: RunningIndexer
) -> None:
    """The box's heading said "Changed elsewhere" and the message "the note changed
    elsewhere" of a note that was gone (only its paragraph said deleted)."""
    write_file(server, "eb", "gone.md", b"# Gone\n\nfirst\n")
    tab, watch = page
    visit(tab, base, "#/eb/edit/gone.md")
    tab.fill("#editor", "# Gone\n\nmine\n")
    note_file(server, "eb", "gone.md").unlink()
    tab.click("#save")
    conflict = tab.locator("section.conflict")
    expect(conflict.locator("h2")).to_have_text("Deleted elsewhere")
    expect(tab.locator("#message")).to_have_text("Not saved: the note was deleted or moved away.")
    assert tab.input_value("#editor") == "# Gone\n\nmine\n"
    assert not note_file(server, "eb", "gone.md").exists()
    tab.click("#overwrite")
    settled(tab, "#/eb/note/gone.md")
    assert "mine" in note_file(server, "eb", "gone.md").read_text()
    assert not watch.errors


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningIndexer]:
    running = start_indexer(tmp_path_factory.mktemp("edit-login") / "ws", "--token", TOKEN)
    try:
        yield running
    finally:
        running.stop()


def log_in(tab: Page, server: RunningIndexer) -> None:
    """As a person does: ``indexer open`` and its one-time link, in this tab."""
    link = subprocess.run(
        [sys.executable, "-m", "indexer", "open", "--workspace", str(server.workspace), "--print"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    ).stdout.strip()
    tab.goto(link)
    settled(tab, "")


def test_a_login_lost_while_editing_says_the_text_is_kept_and_how_to_save_it(
    browser: Browser, guarded: RunningIndexer
) -> None:
    """The page said "Open the page again with indexer open": reopening it dropped the
    typed text (a tab's reload), while a login in another tab lets this one save."""
    root = guarded.url.removesuffix("/mcp")
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with httpx2.Client(base_url=root + "/api/v1", headers=auth) as http:
        http.put("/eb/notes/login.md", content=b"# Login\n\nfirst\n", headers=MD).raise_for_status()
    on_disk = note_file(guarded, "eb", "login.md").read_bytes()
    context = browser.new_context()
    try:
        tab = context.new_page()
        tab.set_default_timeout(10_000)
        watch = Watch(tab)
        log_in(tab, guarded)
        visit(tab, root, "#/eb/edit/login.md")
        mine = tab.input_value("#editor").replace("first", "typed before the login ended")
        tab.fill("#editor", mine)
        context.clear_cookies()  # the session ended (expired, or the server restarted)
        tab.click("#save")
        error = tab.locator("#view > .error")
        expect(error).to_contain_text("Not saved: your text is still in the editor")
        expect(error).to_contain_text("in another tab")
        assert tab.input_value("#editor") == mine
        assert note_file(guarded, "eb", "login.md").read_bytes() == on_disk
        log_in(context.new_page(), guarded)  # as the page says
        tab.click("#save")
        settled(tab, "#/eb/note/login.md")
        assert "typed before the login ended" in note_file(guarded, "eb", "login.md").read_text()
        assert not watch.errors
    finally:
        context.close()


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningIndexer]:
    """A server whose notes may hold 64 KiB: a note too large is a small paste."""
    workspace = tmp_path_factory.mktemp("edit-small") / "ws"
    running = start_indexer(workspace, env={"INDEXER_MAX_FILE_BYTES": str(64 * 1024)})
    try:
        yield running
    finally:
        running.stop()


def test_a_save_the_server_refuses_says_why_and_keeps_the_text(
    browser: Browser, small: RunningIndexer
) -> None:
    """Held: a note too large, frontmatter that is not YAML, and a name the vault refuses
    are each said in the server's words; the text stays in the editor, nothing is written."""
    root = small.url.removesuffix("/mcp")
    with httpx2.Client(base_url=root + "/api/v1") as http:
        http.put("/eb/notes/kept.md", content=b"# Kept\n\nfirst\n", headers=MD).raise_for_status()
    on_disk = note_file(small, "eb", "kept.md").read_bytes()
    context = browser.new_context()
    try:
        tab = context.new_page()
        tab.set_default_timeout(10_000)
        watch = Watch(tab)
        visit(tab, root, "#/eb/edit/kept.md")
        error = tab.locator("#view > .error")
        for text, said in [
            ("# Kept\n\n" + f"{MIXED}\n" * 2000, "too_large"),
            ("---\ntitle: [unclosed\n---\n# Kept\n", "invalid_frontmatter"),
        ]:
            tab.locator("#editor").evaluate(PASTE, text)
            tab.click("#save")
            expect(error).to_contain_text(said)
            assert tab.input_value("#editor") == text
            assert note_file(small, "eb", "kept.md").read_bytes() == on_disk
        watch.accept_dialogs = True  # (leaving the unsaved text)
        for name, said in [("CON.md", "reserved device name"), ("a<b>.md", "'<'")]:
            visit(tab, root, "#/eb/new")
            tab.fill("#new-path", name)
            tab.fill("#editor", f"# New\n\n{MIXED}\n")
            tab.click("#save")
            expect(error).to_contain_text("forbidden_path: ")
            expect(error).to_contain_text(said)
            assert tab.input_value("#editor") == f"# New\n\n{MIXED}\n"
            visit(tab, root, "#/eb")
        written = note_file(small, "eb", "").iterdir()
        assert sorted(p.name for p in written if not p.name.startswith(".")) == ["kept.md"]
        assert not watch.errors
    finally:
        context.close()


def test_tab_types_a_tab_in_the_editor_and_esc_then_tab_moves_on(
    page: tuple[Page, Watch], base: str, server: RunningIndexer
) -> None:
    """Tab moved the focus out of the editor: a tab could not be typed (nor a list item
    indented with one), though a note's tabs are kept."""
    write_file(server, "eb", "tabs.txt", b"name\tvalue\n")
    tab, watch = page
    visit(tab, base, "#/eb/edit/tabs.txt")
    tab.click("#editor")
    tab.keyboard.press("Control+End")
    tab.keyboard.type("typed")
    tab.keyboard.press("Tab")
    tab.keyboard.type("cell")
    assert tab.input_value("#editor") == "name\tvalue\ntyped\tcell"
    tab.keyboard.press("Control+z")  # the browser's own undo and redo take it
    undone = tab.input_value("#editor")
    assert undone in ("name\tvalue\ntyped\t", "name\tvalue\ntyped", "name\tvalue\n")
    tab.keyboard.press("Control+Shift+z")
    assert tab.input_value("#editor") == "name\tvalue\ntyped\tcell"
    tab.keyboard.press("Escape")  # no keyboard trap: Esc, then Tab, moves on
    tab.keyboard.press("Tab")
    assert tab.evaluate("document.activeElement.id") == "save"
    tab.keyboard.press("Enter")
    settled(tab, "#/eb/note/tabs.txt")
    assert note_file(server, "eb", "tabs.txt").read_bytes() == b"name\tvalue\ntyped\tcell"
    assert not watch.errors
