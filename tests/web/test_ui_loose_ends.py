"""The page's loose ends, in Chromium against a real ``indexer serve``: a folder of names
no tool can reach says so (it said "0 notes inside" and "No notes here." while the status
named them)."""

from __future__ import annotations

import httpx2
import pytest
from helpers.indexer_process import RunningIndexer
from helpers.ui_page import MD, Watch, note_file, visit
from playwright.sync_api import Page, expect


@pytest.fixture(scope="module")
def base(server: RunningIndexer) -> str:
    return server.url.removesuffix("/mcp")


def put(base: str, lang: str, path: str, text: str) -> None:
    with httpx2.Client(base_url=base + "/api/v1") as http:
        assert http.put(f"/{lang}/notes/{path}", content=text.encode(), headers=MD).is_success


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
