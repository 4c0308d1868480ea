"""A folder view in one walk and one request for its subfolders' abstracts: the page
walked the folder once per text suffix and asked ``/summary`` once per subfolder
(3,002 requests for a folder of 3,000 subfolders)."""

from __future__ import annotations

import httpx2
import pytest
from helpers.indexer_process import RunningIndexer, wait_for
from helpers.ui_page import MD, Watch, note_file, visit
from playwright.sync_api import Page, expect

SUBFOLDERS = 120


@pytest.fixture(scope="module")
def base(server: RunningIndexer) -> str:
    return server.url.removesuffix("/mcp")


def test_a_folder_of_many_subfolders_is_one_request_with_their_abstracts(
    page: tuple[Page, Watch], base: str, server: RunningIndexer
) -> None:
    with httpx2.Client(base_url=base + "/api/v1") as http:
        if not http.get("/status").json()["features"]["summaries"]:
            pytest.skip("the core has no summaries")
    vault = note_file(server, "fo", "")
    for i in range(SUBFOLDERS):
        (vault / "big" / f"s{i:03d}").mkdir(parents=True)
        (vault / "big" / f"s{i:03d}" / "n.md").write_text(f"# Note {i}\n\nabout topic {i}\n")
    (vault / "big" / "s000" / "more.txt").write_text("plain\n")
    (vault / "big" / "top.md").write_text("# Top\n")
    last = vault / "big" / f"s{SUBFOLDERS - 1:03d}" / ".overview.md"
    wait_for(lambda: last.exists() and (vault / "big" / ".overview.md").exists(), 60)
    tab, watch = page
    asked: list[str] = []
    tab.on(
        "request",
        lambda r: asked.append(r.url.split("/api/v1/", 1)[1]) if "/api/v1/" in r.url else None,
    )
    visit(tab, base, "#/fo/browse/big")
    folders = tab.locator("ul.folders li.folder")
    expect(folders).to_have_count(SUBFOLDERS)
    expect(folders.first).to_contain_text("2 notes inside")
    expect(folders.nth(1)).to_contain_text("1 note inside")
    for i in (0, SUBFOLDERS - 1):
        expect(folders.nth(i).locator(".abstract")).not_to_be_empty()
    expect(tab.locator("ul.notes a")).to_have_text(["top.md"])
    tab.wait_for_load_state("networkidle")
    kinds = sorted(url.split("?")[0] for url in asked)
    assert kinds == ["fo/folder", "fo/summary", "status"], kinds
    assert not watch.errors


def test_the_folder_route_answers_the_listing_with_abstracts(
    base: str, server: RunningIndexer
) -> None:
    with httpx2.Client(base_url=base + "/api/v1") as http:
        assert http.put("/fr/notes/a/b/n.md", content=b"# N\n", headers=MD).is_success
        assert http.put("/fr/notes/a/top.md", content=b"# T\n", headers=MD).is_success
        listed = http.get("/fr/folder", params={"path": "a"}).json()
        assert listed["path"] == "a" and listed["files"] == ["a/top.md"]
        assert [(f["path"], f["files"]) for f in listed["folders"]] == [("a/b", 1)]
        assert listed["truncated"] is False and listed["counted"] is True
        assert "abstract" in listed["folders"][0]  # (None until its summary is made)
        assert http.get("/fr/folder", params={"path": "nowhere"}).status_code == 404
        assert http.get("/fr/folder", params={"path": "a/top.md"}).status_code == 400
        assert http.get("/fr/folder", params={"path": "a", "limit": 0}).status_code == 400


def test_a_folder_spelled_otherwise_in_the_address_lists_its_own_names(
    page: tuple[Page, Watch], base: str
) -> None:
    """The page cut each listed path by the length of the folder as the address spelled
    it: a trailing slash (``#/sp/browse/notes/``) listed ``otes.md`` for ``notes/notes.md``,
    and a decomposed ``é`` (NFD, three UTF-16 units where the server's NFC path has one)
    listed ``afé.md`` for ``café.md``."""
    tab, watch = page
    with httpx2.Client(base_url=base + "/api/v1", timeout=30) as http:
        assert http.put("/sp/notes/notes/notes.md", content=b"# n\n", headers=MD).is_success
        assert http.put("/sp/notes/notes/sub/x.md", content=b"# x\n", headers=MD).is_success
        assert http.put("/sp/notes/%C3%A9/caf%C3%A9.md", content=b"# c\n", headers=MD)
    visit(tab, base, "#/sp/browse/notes/")
    assert tab.locator("ul.notes a").all_text_contents() == ["notes.md"]
    assert tab.locator("ul.folders a").all_text_contents() == ["sub/"]
    visit(tab, base, "#/sp/browse/e%CC%81")  # (é as e and U+0301)
    assert tab.locator("ul.notes a").all_text_contents() == ["café.md"]
    assert not watch.errors
