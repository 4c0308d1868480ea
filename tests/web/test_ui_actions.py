"""The page offers only actions the server can do: a history row that records a
deletion or a move away has no text to view or restore, and a note over the read
limit can still be seen for what it is and deleted."""

from __future__ import annotations

from collections.abc import Iterator

import httpx2
import pytest
from helpers.indexer_process import RunningIndexer, start_indexer
from helpers.ui_page import MD, Watch, note_file, settled, visit
from playwright.sync_api import Page, expect

MAX_FILE_BYTES = 4096
DELETE = {"X-Requested-With": "test"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningIndexer]:
    """A server with a small read limit (a note over it is quick to make)."""
    env = {"INDEXER_MAX_FILE_BYTES": str(MAX_FILE_BYTES)}
    running = start_indexer(tmp_path_factory.mktemp("actions") / "ws", env=env)
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="module")
def base(server: RunningIndexer) -> str:
    return server.url.removesuffix("/mcp")


def test_a_deleted_notes_history_restores_the_text_before_the_deletion(
    page: tuple[Page, Watch], base: str, server: RunningIndexer
) -> None:
    """The deletion row offered "view" and "restore" (a version with no text: the
    server refused both); the row before it brings the note back."""
    with httpx2.Client(base_url=base + "/api/v1") as http:
        made = http.put("/hs/notes/gone.md", content=b"# Gone\n\nfirst\n", headers=MD)
        etag = made.headers["etag"]
        second = b"# Gone\n\nsecond\n"
        http.put("/hs/notes/gone.md", content=second, headers=MD | {"If-Match": etag})
        assert http.delete("/hs/notes/gone.md", headers=DELETE).is_success
    tab, watch = page
    visit(tab, base, "#/hs/history/gone.md")
    rows = tab.locator("table.history-table tbody tr")
    expect(rows).to_have_count(3)
    deletion = rows.first
    expect(deletion).to_contain_text("delete")
    expect(deletion.locator("a", has_text="view")).to_have_count(0)
    expect(deletion.locator("button.restore")).to_have_count(0)
    expect(tab.locator("p.banner")).to_contain_text("deleted")
    before = rows.nth(1)  # the text as it was just before the deletion
    expect(before.locator("a", has_text="view")).to_have_count(1)
    watch.accept_dialogs = True
    before.locator("button.restore").click()
    settled(tab, "#/hs/note/gone.md")
    expect(tab.locator("article.note-body")).to_contain_text("second")
    assert "second" in note_file(server, "hs", "gone.md").read_text()
    assert not watch.errors


def test_a_moved_notes_history_points_to_where_it_went(page: tuple[Page, Watch], base: str) -> None:
    """The move-away row has no text here (the note is at its new path): it links there
    instead of offering view and restore; the arriving row at the new path has text."""
    with httpx2.Client(base_url=base + "/api/v1") as http:
        http.put("/hs/notes/old/place.md", content=b"# Place\n\nmoving text\n", headers=MD)
        body = {"path": "old/place.md", "new_path": "new/place.md"}
        assert http.post("/hs/move", json=body).is_success
    tab, watch = page
    visit(tab, base, "#/hs/history/old/place.md")
    away = tab.locator("table.history-table tbody tr").first
    expect(away).to_contain_text("move")
    expect(away.locator("a", has_text="view")).to_have_count(0)
    expect(away.locator("button.restore")).to_have_count(0)
    expect(away.locator("button.diff-current")).to_have_count(0)
    away.locator("a", has_text="new/place.md").click()
    settled(tab, "#/hs/note/new/place.md")
    expect(tab.locator("article.note-body")).to_contain_text("moving text")
    visit(tab, base, "#/hs/history/new/place.md")
    arrived = tab.locator("table.history-table tbody tr").first
    expect(arrived).to_contain_text("old/place.md")  # where it came from
    arrived.locator("a", has_text="view").click()
    settled(tab, "#/hs/note/new/place.md?version=1")
    expect(tab.locator("article.note-body")).to_contain_text("moving text")
    assert not watch.errors


def test_a_note_over_the_read_limit_is_shown_for_what_it_is_and_deleted(
    page: tuple[Page, Watch], base: str, server: RunningIndexer
) -> None:
    """A note another program grew past the read limit showed only a too_large error:
    no Delete, no History (its history view failed on the same read)."""
    big = note_file(server, "hb", "logs/huge.md")
    big.parent.mkdir(parents=True)
    lines = [f"line {i} of a log another program keeps — é\n" for i in range(400)]
    big.write_text("# Huge log\n\n" + "".join(lines))
    size = big.stat().st_size
    assert size > MAX_FILE_BYTES
    tab, watch = page
    visit(tab, base, "#/hb/note/logs/huge.md")
    banner = tab.locator("p.too-large")
    expect(banner).to_contain_text(f"{size:,} bytes")
    expect(banner).to_contain_text(f"{MAX_FILE_BYTES:,} bytes")
    expect(tab.locator("pre.file-start")).to_contain_text("line 0 of a log")
    expect(tab.locator("#edit")).to_have_count(0)
    tab.click("#history")
    settled(tab, "#/hb/history/logs/huge.md")
    expect(tab.locator("#view > .error")).to_have_count(0)
    visit(tab, base, "#/hb/note/logs/huge.md")
    watch.accept_dialogs = True
    tab.click("#delete")
    settled(tab, "#/hb/browse/logs")
    assert watch.dialogs == ["Delete logs/huge.md?"]
    assert not big.exists()
    assert not watch.errors


def test_head_gives_a_files_beginning_whatever_its_size(base: str, server: RunningIndexer) -> None:
    """``/head`` (the page's one view into such a file) reads at most its bytes= and
    never splits a character; the tools' read still refuses the file."""
    big = note_file(server, "hh", "big.md")
    big.parent.mkdir(parents=True)
    big.write_bytes(b"# Big\n" + "é".encode() * MAX_FILE_BYTES)
    with httpx2.Client(base_url=base + "/api/v1") as http:
        assert http.get("/hh/notes/big.md").status_code == 413
        start = http.get("/hh/head/big.md", params={"bytes": 9}).json()
        assert start == {
            "path": "big.md",
            "size": 6 + 2 * MAX_FILE_BYTES,
            "truncated": True,
            "max_file_bytes": MAX_FILE_BYTES,
            "content": "# Big\né",  # (the 9th byte began a second é)
            "encoding": "utf-8",
        }
        whole = http.get("/hh/head/big.md").json()
        assert len(whole["content"].encode()) <= 16 * 1024
        assert http.get("/hh/head/big.md", params={"bytes": 65537}).status_code == 400
        assert http.get("/hh/head/missing.md").status_code == 404
