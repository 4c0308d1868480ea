"""What an acceptance pass found the REST API refused or let through, against a real
``indexer serve``: ``If-Match: *`` on every route that takes If-Match, and recall's
``path`` naming nothing or a file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from fastmcp.exceptions import ToolError
from helpers.indexer_process import RunningIndexer, vault_dir
from helpers.rest_errors import error_message, error_of
from helpers.snapshots import contents

from shared.workspace import OVERVIEW_FILE

MD = {"Content-Type": "text/markdown; charset=utf-8"}
DELETE = {"X-Requested-With": "test"}
STAR = {"If-Match": "*"}


@pytest.fixture(scope="module")
def http(server: RunningIndexer) -> Iterator[httpx2.Client]:
    base = server.url.removesuffix("/mcp") + "/api/v1"
    with httpx2.Client(base_url=base, timeout=30) as client:
        yield client


def on_disk(folder: Path) -> dict[str, tuple]:
    """What a refused call must leave as it was (a folder summary may come meanwhile)."""
    return {path: state for path, state in contents(folder).items() if OVERVIEW_FILE not in path}


def test_if_match_star_asks_only_that_the_file_exist(
    http: httpx2.Client, server: RunningIndexer
) -> None:
    """``If-Match: *`` (RFC 9110 13.1.1: any current content) was refused, 400 "takes
    exactly one etag". On a missing file every route that would make it refuses it as
    a stale etag is refused (412, the same body) and makes nothing (a delete or move of
    nothing: see the next test); on an existing one the change goes through, whatever
    its content."""
    star = {"If-Match": "*"}
    folder = vault_dir(server, "rw")
    stale = {"If-Match": '"' + "0" * 32 + '"'}
    refused = http.put("/rw/notes/a.md", content=b"x", headers=MD | stale)
    assert refused.status_code == 412 and error_of(refused) == "conflict"  # as before
    # A header's refusal names the header (it named the tool's if_match='*', which a
    # REST caller never sent); the body's if_match keeps the tool's words.
    by_header = "the file does not exist (If-Match: * means it must)"
    refusals = [
        (http.put("/rw/notes/a.md", content=b"x", headers=MD | star), by_header),
        (
            http.put("/rw/notes/a.md", json={"content": "x", "if_match": "*"}),
            "the file does not exist (if_match='*' means it must)",
        ),
        (http.post("/rw/append", json={"path": "a.md", "content": "x"}, headers=star), by_header),
    ]
    for refused, said in refusals:
        assert refused.status_code == 412, refused.request.method
        assert error_of(refused) == "conflict"
        assert error_message(refused) == said
    assert not folder.exists()  # nothing made, not even the vault
    made = http.put("/rw/notes/a.md", content=b"# a\n", headers=MD).json()
    before = on_disk(folder)
    none_match = {"If-None-Match": "*"}
    for refused, said in [
        (
            http.put("/rw/notes/a.md", content=b"y", headers=MD | none_match),
            "the file already exists (If-None-Match: * means it must not)",
        ),
        (
            http.put("/rw/notes/a.md", json={"content": "y", "if_match": ""}),
            "the file already exists (if_match='' means it must not)",
        ),
        (
            http.put("/rw/notes/a.md", json={"content": "y"}, headers=none_match),
            "the file already exists (If-None-Match: * means it must not)",
        ),
    ]:
        assert refused.status_code == 412 and error_message(refused) == said
    assert on_disk(folder) == before
    (folder / "a.md").write_text("# a\nan edit in an editor\n")  # any content matches *
    written = http.put("/rw/notes/a.md", content=b"# b\n", headers=MD | star)
    assert written.status_code == 200 and written.json()["created"] is False
    assert (folder / "a.md").read_text().endswith("# b\n")
    appended = http.post("/rw/append", json={"path": "a.md", "content": "c\n"}, headers=star)
    assert appended.status_code == 200 and (folder / "a.md").read_text().endswith("# b\nc\n")
    body = {"path": "a.md", "version": 1, "if_match": "*"}
    restored = http.post("/rw/restore", json=body)
    assert restored.status_code == 200 and restored.json()["etag"] == made["etag"]
    moved = http.post("/rw/move", json={"path": "a.md", "new_path": "b.md"}, headers=star)
    assert moved.status_code == 200 and (folder / "b.md").exists()
    deleted = http.delete("/rw/notes/b.md", headers=DELETE | star)
    assert deleted.status_code == 200 and not (folder / "b.md").exists()
    back = http.post("/rw/restore", json={"path": "b.md", "version": 1}, headers=star)
    assert back.status_code == 412 and error_of(back) == "conflict"
    assert not (folder / "b.md").exists()


async def test_a_delete_or_move_of_nothing_is_not_found_whatever_if_match_says(
    http: httpx2.Client, server: RunningIndexer
) -> None:
    """DELETE of a missing file with ``If-Match: *`` (or an etag) answered 412
    ``conflict``, a move of one 404 ``not_found``. One rule now, RFC 9110 13.2.1's: a
    request that fails without its precondition (nothing to delete or move) answers
    that failure, 404, on REST and MCP alike; nothing is made."""
    folder = vault_dir(server, "rn")
    http.put("/rn/notes/kept.md", content=b"# kept\n", headers=MD)
    before = on_disk(folder)
    stale = '"' + "0" * 32 + '"'
    weak = {"If-Match": "W/" + stale}  # (a weak etag answered 412: refused before the lookup)
    for headers in ({"If-Match": "*"}, {"If-Match": stale}, weak, {"If-None-Match": "*"}, {}):
        deleted = http.delete("/rn/notes/gone.md", headers=DELETE | headers)
        body = {"path": "gone.md", "new_path": "new.md"}
        moved = http.post("/rn/move", json=body, headers=headers)
        for refused in (deleted, moved):
            assert refused.status_code == 404, (refused.request.method, headers)
            assert error_of(refused) == "not_found"
            assert error_message(refused) == "gone.md does not exist"
    kept_tag = http.get("/rn/notes/kept.md").headers["etag"]
    for weak_tag in ("W/" + kept_tag, "W/" + stale):  # a weak etag never matches a file there
        weak = {"If-Match": weak_tag}
        deleted = http.delete("/rn/notes/kept.md", headers=DELETE | weak)
        moved = http.post("/rn/move", json={"path": "kept.md", "new_path": "n.md"}, headers=weak)
        for refused in (deleted, moved):
            assert refused.status_code == 412 and error_of(refused) == "conflict"
            assert "weak etag" in error_message(refused)
    async with server.client() as client:
        for if_match in ("*", stale.strip('"'), ""):
            args = {"lang": "rn", "path": "gone.md", "new_path": "new.md", "if_match": if_match}
            with pytest.raises(ToolError) as refused_call:
                await client.call_tool("move", args)
            assert str(refused_call.value) == "not_found: gone.md does not exist"
        with pytest.raises(ToolError) as refused_call:
            await client.call_tool("delete", {"lang": "rn", "path": "gone.md"})
        assert str(refused_call.value) == "not_found: gone.md does not exist"
    assert on_disk(folder) == before


async def test_if_match_star_on_a_folder_asks_only_that_it_exist(
    http: httpx2.Client, server: RunningIndexer
) -> None:
    """A folder's move or DELETE with ``If-Match: *`` was refused 400 "has no etag":
    ``*`` asks only that the target exists, and a folder does. Any etag (or
    ``If-None-Match: *``) is still refused 400 and changes nothing."""
    folder = vault_dir(server, "rf")
    http.put("/rf/notes/dir/x.md", content=b"# x\n", headers=MD)
    etag = http.get("/rf/notes/dir/x.md").headers["etag"]
    before = on_disk(folder)
    move = {"path": "dir", "new_path": "moved"}
    for headers in ({"If-Match": etag}, {"If-None-Match": "*"}):
        refused = http.post("/rf/move", json=move, headers=headers)
        assert refused.status_code == 400 and error_of(refused) == "invalid_argument"
        assert "dir is a folder: it has no etag" in error_message(refused)
    async with server.client() as client:
        with pytest.raises(ToolError) as refused_call:
            args = {"lang": "rf", "if_match": etag.strip('"'), **move}
            await client.call_tool("move", args)
        assert str(refused_call.value).startswith("invalid_argument: dir is a folder")
        assert on_disk(folder) == before
        result = await client.call_tool("move", {"lang": "rf", "if_match": "*", **move})
        assert result.structured_content is not None
        assert result.structured_content["new_path"] == "moved"
    assert (folder / "moved" / "x.md").is_file() and not (folder / "dir").exists()
    moved = http.post("/rf/move", json={"path": "moved", "new_path": "dir"}, headers=STAR)
    assert moved.status_code == 200 and (folder / "dir" / "x.md").is_file()
    assert http.delete("/rf/notes/dir/x.md", headers=DELETE).status_code == 200
    empty = on_disk(folder)
    for headers in ({"If-Match": etag}, {"If-None-Match": "*"}):
        refused = http.delete("/rf/notes/dir", headers=DELETE | headers)
        assert refused.status_code == 400 and error_of(refused) == "invalid_argument"
    assert on_disk(folder) == empty and (folder / "dir").is_dir()
    deleted = http.delete("/rf/notes/dir", headers=DELETE | STAR)
    assert deleted.status_code == 200 and not (folder / "dir").exists()


def test_recall_refuses_a_path_that_names_nothing_or_a_file(
    http: httpx2.Client, server: RunningIndexer
) -> None:
    """As summary refuses them (404, 400): recall answered an empty block."""
    http.put("/rk/notes/items/文法/過去形.md", content="# 過去形\n\n過去形\n".encode(), headers=MD)

    def notes() -> list[Path]:  # (a folder summary may come meanwhile)
        return sorted(p for p in vault_dir(server, "rk").rglob("*") if p.name != OVERVIEW_FILE)

    before = notes()
    for path, status, message in (
        ("文法", 404, "文法 does not exist"),
        ("items/文法/過去形.md", 400, "items/文法/過去形.md is a file; recall takes a folder"),
    ):
        refused = http.post("/rk/recall", json={"query": "過去形", "path": path})
        assert (refused.status_code, error_message(refused)) == (status, message)
        summary = http.get("/rk/summary", params={"path": path})
        assert (summary.status_code, error_of(summary)) == (status, error_of(refused))
    found = http.post("/rk/recall", json={"query": "過去形", "path": "items/文法"}).json()
    assert "items/文法/過去形.md" in [source["path"] for source in found["sources"]]
    assert notes() == before
