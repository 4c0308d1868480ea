"""Headers a request may carry more than once, against a real ``indexer serve --token``:
``If-Match`` as a list of etags (RFC 9110 13.1.1), on one line or on several (RFC 9110
5.3: the same list), and ``Authorization`` twice (ambiguous credentials, refused)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from helpers.indexer_process import RunningIndexer, serving, vault_dir
from helpers.rest_errors import error_message, error_of
from helpers.snapshots import contents

TOKEN = "s3cret-token-for-lists"
BEARER = {"Authorization": f"Bearer {TOKEN}"}
MD = {"Content-Type": "text/markdown"}
DELETE = {"X-Requested-With": "test"}
STALE = '"' + "0" * 32 + '"'
OTHER = '"' + "1" * 32 + '"'


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningIndexer]:
    yield from serving(tmp_path_factory.mktemp("lists") / "ws", "--token", TOKEN)


@pytest.fixture(scope="module")
def http(guarded: RunningIndexer) -> Iterator[httpx2.Client]:
    base = guarded.url.removesuffix("/mcp")
    with httpx2.Client(base_url=base, timeout=30, headers=BEARER) as client:
        yield client


def put(
    http: httpx2.Client, path: str, text: str, headers: list[tuple[str, str]]
) -> httpx2.Response:
    return http.put(
        f"/api/v1/li/notes/{path}", content=text.encode(), headers=[*MD.items(), *headers]
    )


def test_an_if_match_list_matches_when_any_strong_etag_does(
    http: httpx2.Client, guarded: RunningIndexer
) -> None:
    """``If-Match: "a", "b"`` was refused 400 ("takes exactly one etag") on every write:
    RFC 9110 lets a client name each version it has read. The write goes ahead when any
    listed etag is the file's; a weak one never matches (strong comparison), so a list
    whose only current etag is weak is 412 and changes nothing."""
    folder = vault_dir(guarded, "li")
    current = put(http, "a.md", "# a\n", []).headers["etag"]
    for listed in (f"{STALE}, {OTHER}", f"W/{current}, {STALE}", f"W/{current}"):
        before = contents(folder)
        refused = put(http, "a.md", "# lost\n", [("If-Match", listed)])
        assert refused.status_code == 412 and error_of(refused) == "conflict", listed
        assert contents(folder) == before
    written = put(http, "a.md", "# b\n", [("If-Match", f"{STALE}, {current}, W/{OTHER}")])
    assert written.status_code == 200, written.text
    current = written.headers["etag"]
    appended = http.post(
        "/api/v1/li/append",
        json={"path": "a.md", "content": "c\n"},
        headers={"If-Match": f"{current},{STALE}"},
    )
    assert appended.status_code == 200 and (folder / "a.md").read_text().endswith("# b\nc\n")
    current = appended.headers.get("etag") or f'"{appended.json()["etag"]}"'
    moved = http.post(
        "/api/v1/li/move",
        json={"path": "a.md", "new_path": "m.md"},
        headers={"If-Match": f"{OTHER}, {current}"},
    )
    assert moved.status_code == 200 and (folder / "m.md").is_file()
    deleted = http.delete(
        "/api/v1/li/notes/m.md", headers=DELETE | {"If-Match": f"{STALE}, {current}"}
    )
    assert deleted.status_code == 200 and not (folder / "m.md").exists()


def test_if_match_on_several_lines_is_one_list(
    http: httpx2.Client, guarded: RunningIndexer
) -> None:
    """Two ``If-Match`` lines were read as their first alone: a stale etag on the first
    line refused a write the second allowed, and a current first line let a write go
    whatever the second said (``*`` beside an etag is malformed, 400). RFC 9110 5.3: the
    lines are one list, as if joined by commas."""
    folder = vault_dir(guarded, "li")
    current = put(http, "b.md", "# b\n", []).headers["etag"]
    written = put(http, "b.md", "# b2\n", [("If-Match", STALE), ("If-Match", current)])
    assert written.status_code == 200, written.text
    current = written.headers["etag"]
    before = contents(folder)
    for lines in ([current, "*"], [current, '""'], ["*", "*"]):
        refused = put(http, "b.md", "# lost\n", [("If-Match", line) for line in lines])
        assert refused.status_code == 400 and error_of(refused) == "invalid_argument", lines
        assert "If-Match takes" in error_message(refused)
    both = put(http, "b.md", "# lost\n", [("If-None-Match", "*"), ("If-None-Match", current)])
    assert both.status_code == 400 and error_of(both) == "invalid_argument"
    assert contents(folder) == before
    read = http.get("/api/v1/li/notes/b.md", headers=[("If-Match", STALE), ("If-Match", current)])
    assert read.status_code == 200
    unchanged = http.get(
        "/api/v1/li/notes/b.md", headers=[("If-None-Match", STALE), ("If-None-Match", current)]
    )
    assert unchanged.status_code == 304


def test_two_authorization_headers_are_refused(
    http: httpx2.Client, guarded: RunningIndexer
) -> None:
    """Two ``Authorization`` lines were read as their first: a right token first let the
    request through whatever the second said, a wrong one first refused it 401 as if no
    right token came. Credentials that say two things are refused 400 (RFC 6750 3.1,
    ``invalid_request``) on the API, the page and /mcp alike, before anything is done."""
    folder: Path = vault_dir(guarded, "li")
    before = contents(folder)
    base = guarded.url.removesuffix("/mcp")
    for lines in (
        [f"Bearer {TOKEN}", "Bearer wrong"],
        ["Bearer wrong", f"Bearer {TOKEN}"],
        [f"Bearer {TOKEN}", f"Bearer {TOKEN}"],
    ):
        auth = [("Authorization", line) for line in lines]
        with httpx2.Client(base_url=base, timeout=30) as bare:
            api = bare.put("/api/v1/li/notes/z.md", content=b"# z\n", headers=[*MD.items(), *auth])
            assert api.status_code == 400, (lines, api.text)
            assert error_of(api) == "invalid_argument"
            assert "Authorization" in error_message(api)
            page = bare.get("/ui/", headers=auth)
            assert page.status_code == 400 and "Authorization" in page.text
            mcp = bare.post(
                "/mcp",
                json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                headers=[*auth, ("Accept", "application/json, text/event-stream")],
            )
            assert mcp.status_code == 400 and mcp.json()["error"] == "invalid_request"
    assert contents(folder) == before
    assert http.get("/api/v1/status").status_code == 200  # one line still works


def test_a_write_with_two_content_types_is_refused(
    http: httpx2.Client, guarded: RunningIndexer
) -> None:
    """Two ``Content-Type`` lines (or two types on one line) were read as the first: a
    body said to be JSON too was stored as Markdown, and a form's type before a text one
    was refused only by chance of order. What the body is must be said once (400), and
    nothing is written."""
    folder = vault_dir(guarded, "li")
    before = contents(folder)
    body = b'{"content": "# c\\n"}'
    for types in (
        [("Content-Type", "text/markdown"), ("Content-Type", "application/json")],
        [("Content-Type", "application/json"), ("Content-Type", "text/markdown")],
        [("Content-Type", "text/markdown, application/json")],
    ):
        refused = http.put("/api/v1/li/notes/c.md", content=body, headers=types)
        assert refused.status_code == 400 and error_of(refused) == "invalid_argument", types
        assert "one Content-Type" in error_message(refused)
        posted = http.post("/api/v1/li/append", content=b'{"path": "c.md"}', headers=types)
        assert posted.status_code == 400 and error_of(posted) == "invalid_argument", types
    assert contents(folder) == before
    one = http.put("/api/v1/li/notes/c.md", content=b"# c\n", headers=MD)
    assert one.status_code == 201
