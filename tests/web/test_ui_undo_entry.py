"""An agent's memory entry undone from the page's history view, as ``agent-client undo``
does it (REST ``POST /{lang}/undo``, the tool ``undo``): the page could see the versions
an entry wrote ("entry:<id> <title>") and had no way to take them back. In Chromium
against a real ``indexer serve``."""

from __future__ import annotations

import httpx2
import pytest
from helpers.indexer_process import RunningIndexer
from helpers.ui_page import MD, Watch, note_file, settled, visit
from playwright.sync_api import Page, expect


@pytest.fixture(scope="module")
def base(server: RunningIndexer) -> str:
    return server.url.removesuffix("/mcp")


def write(http: httpx2.Client, path: str, text: str, reason: str | None = None) -> None:
    params = {"reason": reason} if reason else {}
    http.put(
        f"/ue/notes/{path}", content=text.encode(), headers=MD, params=params
    ).raise_for_status()


def test_an_entry_is_undone_from_the_history_view(
    page: tuple[Page, Watch], base: str, server: RunningIndexer
) -> None:
    with httpx2.Client(base_url=base + "/api/v1") as http:
        write(http, "facts/go.md", "# Go\n\nמשפט ראשון.\n")
        first = note_file(server, "ue", "facts/go.md").read_bytes()
        write(
            http, "facts/go.md", "# Go\n\nמשפט ראשון.\n\n合并的事实。\n", "entry:e1abc Merge a fact"
        )
        write(http, "facts/new.md", "# New\n\nmade by the entry\n", "entry:e1abc Merge a fact")
    tab, watch = page
    visit(tab, base, "#/ue/history/facts/go.md")
    undo = tab.locator("tr[data-version='2'] button.undo-entry")
    expect(undo).to_have_count(1)
    expect(tab.locator("tr[data-version='1'] button.undo-entry")).to_have_count(0)
    with tab.expect_event("dialog"):  # dismissed: nothing changes
        undo.click()
    expect(tab.locator("#message")).to_be_hidden()
    assert len(watch.dialogs) == 1 and "facts/go.md" in watch.dialogs[0]
    assert "facts/new.md" in watch.dialogs[0] and "2 files" in watch.dialogs[0]
    assert note_file(server, "ue", "facts/new.md").exists()
    watch.accept_dialogs = True
    undo.click()
    expect(tab.locator("#message")).to_have_text("Undid memory entry e1abc: 2 files put back.")
    assert note_file(server, "ue", "facts/go.md").read_bytes() == first  # as before it
    assert not note_file(server, "ue", "facts/new.md").exists()
    rows = tab.locator("table.history-table tbody tr")
    expect(rows.first).to_contain_text("undo entry:e1abc")  # the view shows the undo
    assert not watch.errors


def test_an_entry_changed_since_is_refused_in_words_and_nothing_changes(
    page: tuple[Page, Watch], base: str, server: RunningIndexer
) -> None:
    with httpx2.Client(base_url=base + "/api/v1") as http:
        write(http, "held.md", "# Held\n\nfirst\n")
        write(http, "held.md", "# Held\n\nfirst\n\nby the entry\n", "entry:e2 Merge")
        write(http, "other.md", "# Other\n\nby the entry\n", "entry:e2 Merge")
        write(http, "held.md", "# Held\n\nfirst\n\nby the entry\n\nby a person since\n")
    held = note_file(server, "ue", "held.md").read_bytes()
    tab, watch = page
    watch.accept_dialogs = True
    visit(tab, base, "#/ue/history/held.md")
    tab.click("tr[data-version='2'] button.undo-entry")
    error = tab.locator("#view > .error")
    expect(error).to_contain_text("entry e2 cannot be undone, nothing was changed: held.md")
    assert not watch.dialogs  # (refused at the dry run: nothing to ask)
    assert note_file(server, "ue", "held.md").read_bytes() == held
    assert note_file(server, "ue", "other.md").exists()
    settled(tab, "#/ue/history/held.md")
    assert not watch.errors


def test_rest_undo_refuses_bad_input_in_words(base: str, server: RunningIndexer) -> None:
    with httpx2.Client(base_url=base + "/api/v1") as http:
        write(http, "kept.md", "# Kept\n", "entry:e3 Merge")
        kept = note_file(server, "ue", "kept.md").read_bytes()
        for body, status, words in (
            ({"entry_id": "../e3"}, 400, "must be the id of a memory entry"),
            ({"entry_id": "e3", "dry_run": "yes"}, 400, "'dry_run' has the wrong type"),
            ({"entry_id": "e3", "path": "kept.md"}, 400, "unknown field(s): path"),
            ({}, 400, "'entry_id' is required"),
            ({"entry_id": "never"}, 404, "no change in this vault was made for entry never"),
        ):
            answer = http.post("/ue/undo", json=body)
            assert answer.status_code == status, answer.text
            assert words in answer.json()["error"]["message"]
        assert note_file(server, "ue", "kept.md").read_bytes() == kept
        dry = http.post("/ue/undo", json={"entry_id": "e3", "dry_run": True}).json()
        assert dry["dry_run"] is True and [f["path"] for f in dry["files"]] == ["kept.md"]
        assert note_file(server, "ue", "kept.md").read_bytes() == kept
