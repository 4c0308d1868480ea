"""A folder past one page, over REST and on the page: ``/notes`` and ``/folder`` were cut
at 10,000 files (``limit`` over that refused) with no offset or cursor, so the rest of a
20,000-note folder could not be listed, and the page said "Only the first 10,000
files of this folder are listed". ``after=<path>`` now gives the next page.

A server of its own, on notes written before it starts, summaries off: indexing the
folder is no part of what is tested."""

from __future__ import annotations

import signal
from collections.abc import Iterator

import httpx2
import pytest
from helpers.indexer_process import RunningIndexer, start_indexer
from helpers.rest_errors import error_message, error_of
from helpers.ui_page import MD, Watch, settled, visit
from playwright.sync_api import Page, expect

from shared.workspace import Workspace

NOTES = 4_321
PICTURES = 30
PAGE = 2_000  # the page's (app.js: FOLDER_PAGE)
DELETE = {"X-Requested-With": "test"}


def note(i: int) -> str:
    return f"big/n{i:05d}.md"


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningIndexer]:
    workspace = tmp_path_factory.mktemp("pages") / "ws"
    vault = Workspace(workspace).vault_dir("pg")
    (vault / "big" / "sub").mkdir(parents=True)
    for i in range(NOTES):
        (vault / note(i)).write_text(f"# n{i}\n")
    for i in range(PICTURES):
        (vault / "big" / f"n{i * 100:05d}.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (vault / "big" / "sub" / "inner.md").write_text("# Inner\n")
    running = start_indexer(workspace, settled=False, env={"INDEXER_SUMMARIES": "0"})
    try:
        yield running
    finally:
        running.stop(signal.SIGKILL)  # (a throwaway workspace: nothing to keep)


@pytest.fixture(scope="module")
def http(big: RunningIndexer) -> Iterator[httpx2.Client]:
    base = big.url.removesuffix("/mcp") + "/api/v1"
    with httpx2.Client(base_url=base, timeout=60) as client:
        yield client


def test_notes_come_in_pages_every_one_once_while_notes_come_and_go(
    http: httpx2.Client,
) -> None:
    """``GET /notes?limit=500&after=`` page after page: each note exactly once, in
    order, though notes are written and deleted on both sides of the cursor."""
    seen: list[str] = []
    after: str | None = None
    pages = 0
    while True:
        params = {"path": "big", "pattern": "*.md", "limit": 500}
        answer = http.get("/pg/notes", params=params | ({"after": after} if after else {}))
        assert answer.status_code == 200, answer.text
        page = answer.json()
        pages += 1
        seen += page["paths"]
        if not page["truncated"]:
            assert page["total"] == NOTES  # (- 1 deleted + 1 added after the cursor, + 1 before)
            break
        after = page["next_after"]
        assert after == page["paths"][-1] and "total" not in page
        if pages == 3:  # between pages: one gone and one new on each side of the cursor
            assert http.delete(f"/pg/notes/{note(7)}", headers=DELETE).is_success
            assert http.delete(f"/pg/notes/{note(3000)}", headers=DELETE).is_success
            assert http.put("/pg/notes/big/n00007x.md", content=b"# x\n", headers=MD).is_success
            assert http.put("/pg/notes/big/n02999x.md", content=b"# x\n", headers=MD).is_success
    assert pages == 9
    assert len(seen) == len(set(seen)) and seen == sorted(seen)
    expected = {note(i) for i in range(NOTES)} - {note(3000)} | {"big/n02999x.md"}
    assert set(seen) == expected
    for gone in (note(7), note(3000)):  # (put back for the other tests)
        assert http.put(f"/pg/notes/{gone}", content=b"# back\n", headers=MD).is_success
    for made in ("big/n00007x.md", "big/n02999x.md"):
        assert http.delete(f"/pg/notes/{made}", headers=DELETE).is_success


def test_the_folder_route_pages_its_own_files(http: httpx2.Client) -> None:
    files: list[str] = []
    others: list[str] = []
    params: dict[str, str | int] = {"path": "big", "limit": 1_000}
    while True:
        page = http.get("/pg/folder", params=params).json()
        assert page["total"] == NOTES + PICTURES
        assert [f["path"] for f in page["folders"]] == ["big/sub"]
        files += page["files"]
        others += page["others"]
        if not page["truncated"]:
            break
        params["after"] = page["next_after"]
    assert files == [note(i) for i in range(NOTES)]
    assert len(others) == PICTURES and others == sorted(others)


@pytest.mark.parametrize(
    ("route", "params", "says"),
    [
        ("notes", {"path": "big", "after": ""}, "after is empty"),
        ("notes", {"path": "big", "after": "elsewhere/n.md"}, "below big"),
        ("notes", {"path": "big", "after": "big/\x00"}, "no path of the vault"),
        ("notes", {"path": "big", "limit": 10_001}, "limit must be between 1 and 10000"),
        ("notes", {"path": "big", "limit": -1}, "limit"),
        ("notes", {"path": "big", "offset": 10}, "offset"),  # (a cursor, no offset)
        ("folder", {"path": "big", "after": ""}, "after is empty"),
        ("folder", {"path": "big", "after": "big/sub/inner.md"}, "in folder big"),
        ("folder", {"path": "big", "after": "../x.md"}, "no path of the vault"),
        ("folder", {"path": "big", "limit": 0}, "limit must be between 1 and 10000"),
        ("folder", {"path": "big", "after": ["big/a.md", "big/b.md"]}, "more than once"),
    ],
)
def test_a_bad_page_is_refused(http: httpx2.Client, route: str, params: dict, says: str) -> None:
    answer = http.get(f"/pg/{route}", params=params)
    assert answer.status_code == 400, answer.text
    assert error_of(answer) == "invalid_argument"
    assert says in error_message(answer)


def test_openapi_documents_the_cursor(http: httpx2.Client) -> None:
    paths = http.get("/openapi.json").json()["paths"]
    for route in ("/{lang}/notes", "/{lang}/folder"):
        names = [p["name"] for p in paths[route]["get"]["parameters"]]
        assert "after" in names, route


def test_the_page_shows_a_big_folder_page_after_page(
    page: tuple[Page, Watch], big: RunningIndexer
) -> None:
    tab, watch = page
    asked: list[str] = []
    tab.on("request", lambda r: asked.append(r.url) if "/folder?" in r.url else None)
    visit(tab, big.url.removesuffix("/mcp"), "#/pg/browse/big")
    listed = tab.locator("ul.notes a")
    expect(listed).to_have_count(PAGE - 20)  # (20 pictures among the first 2,000 paths)
    expect(tab.locator("ul.folders a")).to_have_text(["sub/"])
    total = NOTES + PICTURES
    expect(tab.locator("#files-count")).to_have_text(f"2,000 files of {total:,} shown.")
    expect(tab.locator("text=Only the first")).to_have_count(0)
    more = tab.locator("#more-files")
    more.click()
    expect(tab.locator("#files-count")).to_have_text(f"4,000 files of {total:,} shown.")
    more.click()
    expect(listed).to_have_count(NOTES)
    expect(more).to_be_hidden()
    expect(tab.locator("ul.files a")).to_have_count(PICTURES)
    names = listed.all_text_contents()
    assert names == [note(i).removeprefix("big/") for i in range(NOTES)]
    assert len(asked) == 3 and "after=big%2Fn03969.md" in asked[-1], asked
    listed.last.click()
    settled(tab, f"#/pg/note/big/n{NOTES - 1:05d}.md")
    assert not watch.errors
