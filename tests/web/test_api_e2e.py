"""The REST API end to end: a real ``indexer serve``, plain HTTP, the tools' behaviour."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import unicodedata
from collections.abc import Iterator

import httpx2
import pytest
from helpers.indexer_process import RunningIndexer, vault_dir
from helpers.rest_errors import error_message, error_of

from shared.workspace import OVERVIEW_FILE

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))
MD = {"Content-Type": "text/markdown; charset=utf-8"}
JSON = {"Content-Type": "application/json"}
DELETE = {"X-Requested-With": "test"}


def base_url(server: RunningIndexer) -> str:
    return server.url.removesuffix("/mcp")


@pytest.fixture(scope="module")
def http(server: RunningIndexer) -> Iterator[httpx2.Client]:
    with httpx2.Client(base_url=base_url(server) + "/api/v1", timeout=30) as client:
        yield client


def test_write_read_find_delete_round_trip(http: httpx2.Client, server: RunningIndexer) -> None:
    created = http.put("/ra/notes/items/go.md", content=b"# Go\nwent\n", headers=MD)
    assert created.status_code == 201
    etag = created.json()["etag"]
    assert created.headers["etag"] == f'"{etag}"'
    assert created.json()["path"] == "items/go.md" and created.json()["created"] is True
    read = http.get("/ra/notes/items/go.md")
    assert read.status_code == 200 and read.headers["etag"] == f'"{etag}"'
    body = read.json()
    assert body["content"].endswith("# Go\nwent\n") and body["etag"] == etag
    assert set(body) >= {"path", "content", "etag", "size", "mtime"}
    assert (
        http.get("/ra/notes/items/go.md", headers={"If-None-Match": f'"{etag}"'}).status_code == 304
    )
    lines = http.get("/ra/notes/items/go.md", params={"offset": 1, "limit": 1}).json()["content"]
    assert lines.count("\n") == 1
    assert http.get("/ra/notes").json() == {
        "paths": ["items/go.md"],
        "truncated": False,
        "total": 1,
    }
    found = http.get("/ra/notes", params={"pattern": "*.md", "path": "items", "limit": 5})
    assert found.json()["paths"] == ["items/go.md"]
    with_dirs = http.get("/ra/notes", params={"pattern": "**", "dirs": "true"})
    assert with_dirs.json()["paths"] == ["items/", "items/go.md"]
    stat = http.get("/ra/stat/items/go.md").json()
    assert stat["exists"] is True and stat["type"] == "file" and stat["etag"] == etag
    deleted = http.delete("/ra/notes/items/go.md", headers=DELETE)
    assert deleted.json() == {"path": "items/go.md", "deleted": True}
    assert not (vault_dir(server, "ra") / "items/go.md").exists()
    assert error_of(http.get("/ra/notes/items/go.md")) == "not_found"


def test_if_match_and_if_none_match(http: httpx2.Client, server: RunningIndexer) -> None:
    first = http.put("/rb/notes/n.md", content=b"# n\n", headers=MD | {"If-None-Match": "*"})
    assert first.status_code == 201
    again = http.put("/rb/notes/n.md", content=b"# again\n", headers=MD | {"If-None-Match": "*"})
    assert again.status_code == 412 and error_of(again) == "conflict"
    note = vault_dir(server, "rb") / "n.md"
    note.write_text(note.read_text() + "a human edit\n")  # someone edits in an editor
    before = note.read_bytes()
    stale = first.headers["etag"]
    refused = http.put("/rb/notes/n.md", content=b"# llm\n", headers=MD | {"If-Match": stale})
    assert refused.status_code == 412 and error_of(refused) == "conflict"
    assert note.read_bytes() == before
    current = http.get("/rb/notes/n.md").headers["etag"]
    ok = http.put("/rb/notes/n.md", content=b"# merged\n", headers=MD | {"If-Match": current})
    assert ok.status_code == 200 and ok.json()["created"] is False
    # the same precondition in a JSON body, as the tool takes it
    body = {"content": "# json\n", "if_match": ok.json()["etag"]}
    assert http.put("/rb/notes/n.md", json=body).status_code == 200
    stale_body = {"content": "# json\n", "if_match": ok.json()["etag"]}
    assert http.put("/rb/notes/n.md", json=stale_body).status_code == 412
    both = http.put(
        "/rb/notes/n.md", content=b"x", headers=MD | {"If-Match": current, "If-None-Match": "*"}
    )
    assert both.status_code == 400 and error_of(both) == "invalid_argument"
    listed = http.put("/rb/notes/n.md", content=b"x", headers=MD | {"If-Match": f"{current}, *"})
    assert listed.status_code == 400 and error_of(listed) == "invalid_argument"


def test_delete_and_append_honour_preconditions(
    http: httpx2.Client, server: RunningIndexer
) -> None:
    """DELETE and append ignored If-Match: a conditional delete removed an edit made
    since the caller's read. A weak etag never matches If-Match (RFC 9110)."""
    note = vault_dir(server, "rp") / "n.md"
    first = http.put("/rp/notes/n.md", content=b"# n\n", headers=MD).headers["etag"]
    note.write_text(note.read_text() + "an edit since\n")
    before = note.read_bytes()
    for headers in ({"If-Match": first}, {"If-None-Match": "*"}):
        refused = http.delete("/rp/notes/n.md", headers=DELETE | headers)
        assert refused.status_code == 412 and error_of(refused) == "conflict"
    append = {"path": "n.md", "content": "more\n"}
    assert http.post("/rp/append", json=append, headers={"If-Match": first}).status_code == 412
    assert http.post("/rp/append", json={**append, "if_match": first}).status_code == 412
    current = http.get("/rp/notes/n.md").headers["etag"]
    weak = http.put("/rp/notes/n.md", content=b"# w\n", headers=MD | {"If-Match": "W/" + current})
    assert weak.status_code == 412 and error_of(weak) == "conflict"
    assert note.read_bytes() == before  # nothing refused changed anything
    ops = {v["op"] for v in http.get("/rp/history/n.md").json()["versions"]}
    assert not ops & {"delete", "append"}, ops
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    as_form = http.delete("/rp/notes/n.md", headers=form)
    assert as_form.status_code == 415 and note.read_bytes() == before
    appended = http.post("/rp/append", json=append, headers={"If-Match": current})
    assert appended.status_code == 200 and note.read_bytes() == before + b"more\n"
    now = appended.headers["etag"]
    deleted = http.delete("/rp/notes/n.md", headers=DELETE | {"If-Match": now})
    assert deleted.status_code == 200 and not note.exists()
    http.put("/rp/notes/dir/x.md", content=b"# x\n", headers=MD)
    http.delete("/rp/notes/dir/x.md", headers=DELETE)
    folder = http.delete("/rp/notes/dir", headers=DELETE | {"If-Match": now})
    assert folder.status_code == 400 and (note.parent / "dir").is_dir()  # no etag


def test_search_refuses_a_folder_outside_the_vault(http: httpx2.Client) -> None:
    """Every other route refused ``../``; search answered 200 with nothing found."""
    for path in ("../", "a/../../b", "/etc"):
        refused = http.get("/rs/search", params={"q": "x", "path": path})
        assert refused.status_code == 403 and error_of(refused) == "forbidden_path", path
    http.put("/rs/notes/a/café.md", content=b"# cafe\nquokka\n", headers=MD)
    nfd = unicodedata.normalize("NFD", "a/café.md")  # found as the tools spell it (NFC)
    found = http.get("/rs/search", params={"q": "quokka", "path": nfd}).json()["results"]
    assert [hit["path"] for hit in found] == ["a/café.md"]


def test_image_asset_written_as_base64_and_served_raw(http: httpx2.Client) -> None:
    body = {"content": base64.b64encode(PNG).decode(), "encoding": "base64"}
    assert http.put("/rc/notes/items/a.md.assets/p.png", json=body).status_code == 201
    raw = http.get("/rc/raw/items/a.md.assets/p.png")
    assert raw.status_code == 200 and raw.content == PNG
    assert raw.headers["content-type"] == "image/png"
    assert raw.headers["x-content-type-options"] == "nosniff"
    assert (
        http.get(
            "/rc/raw/items/a.md.assets/p.png", headers={"If-None-Match": raw.headers["etag"]}
        ).status_code
        == 304
    )
    http.put("/rc/notes/items/a.md", content=b"# A\n<script>x()</script>\n", headers=MD)
    text = http.get("/rc/raw/items/a.md")
    assert text.headers["content-type"] == "text/plain; charset=utf-8"
    assert "sandbox" in text.headers["content-security-policy"]
    bad = http.put(
        "/rc/notes/items/a.md.assets/q.png", json={"content": "aGk=", "encoding": "base64"}
    )
    assert bad.status_code == 400 and error_of(bad) == "invalid_argument"


def test_append_search_grep_render(http: httpx2.Client) -> None:
    http.put(
        "/rd/notes/items/went.md",
        content=b"---\ntags: [verbs]\n---\n# Went\nthe past of go\n",
        headers=MD,
    )
    appended = http.post(
        "/rd/append", json={"path": "items/went.md", "content": "\nsee also gone\n"}
    )
    assert (
        appended.status_code == 200 and appended.headers["etag"] == f'"{appended.json()["etag"]}"'
    )
    missing = http.post("/rd/append", json={"path": "new.md", "content": "x", "create": False})
    assert error_of(missing) == "not_found"
    found = http.get("/rd/search", params={"q": "gone"}).json()
    assert [r["path"] for r in found["results"]] == ["items/went.md"]
    assert "**gone**" in found["results"][0]["snippet"] and found["partial"] in (True, False)
    tagged = http.get("/rd/search", params=[("q", "past"), ("tag", "verbs"), ("tag", "nope")])
    assert tagged.json()["results"] == []
    assert http.get("/rd/search", params={"q": "past", "tag": "verbs"}).json()["results"]
    blank = http.get("/rd/search", params={"q": "past", "tag": ""})  # found nothing, silently
    assert blank.status_code == 400 and error_of(blank) == "invalid_argument"
    grep = http.get("/rd/grep", params={"pattern": "^see also", "fixed": "false"}).json()
    assert [(m["path"], m["text"]) for m in grep["matches"]] == [("items/went.md", "see also gone")]
    assert grep["truncated"] is False
    rendered = http.get("/rd/render/items/went.md").json()
    assert rendered["properties"]["tags"] == ["verbs"] and rendered["properties"]["title"] == "Went"
    assert "<h1>Went</h1>" in rendered["html"] and "content" not in rendered


def test_refusals_use_the_spec_codes_and_statuses(
    http: httpx2.Client, server: RunningIndexer
) -> None:
    cases = [
        (http.get("/EN/notes"), 400, "invalid_lang"),
        (  # the vault id first, the If-Match after (a weak etag answered 412)
            http.put("/EN/notes/a.md", content=b"x", headers=MD | {"If-Match": 'W/"x"'}),
            400,
            "invalid_lang",
        ),
        (http.get("/re/notes/..%2F..%2F..%2Fetc%2Fpasswd"), 403, "forbidden_path"),
        (http.get("/re/notes/%2Fetc%2Fpasswd"), 403, "forbidden_path"),
        (http.put("/re/notes/x.py", content=b"x", headers=MD), 403, "forbidden_path"),
        (http.get("/re/notes/nope.md"), 404, "not_found"),
        (
            http.put("/re/notes/bad.md", content=b"---\n: [\n---\n", headers=MD),
            400,
            "invalid_frontmatter",
        ),
        (http.get("/re/notes", params={"limit": "many"}), 400, "invalid_argument"),
        (http.get("/re/notes", params={"limit": 0}), 400, "invalid_argument"),
        # an empty value is no number or truth (it was taken as the default)
        (http.get("/re/notes", params={"limit": ""}), 400, "invalid_argument"),
        (http.get("/re/notes", params={"dirs": ""}), 400, "invalid_argument"),
        (http.get("/re/notes/a.md", params={"version": ""}), 400, "invalid_argument"),
        (http.get("/re/diff/a.md", params={"from": 1, "to": ""}), 400, "invalid_argument"),
        (http.get("/re/grep", params={"pattern": "x", "fixed": ""}), 400, "invalid_argument"),
        (http.get("/re/grep", params={"pattern": "(", "limit": 1}), 400, "invalid_argument"),
        (http.get("/re/grep"), 400, "invalid_argument"),
        (http.post("/re/append", json={"path": "a.md"}), 400, "invalid_argument"),
        (
            http.post("/re/append", json={"path": "a.md", "content": "x", "extra": 1}),
            400,
            "invalid_argument",
        ),
        (http.post("/re/append", json=["not", "an", "object"]), 400, "invalid_argument"),
        (http.post("/re/append", content=b"{", headers=JSON), 400, "invalid_argument"),
        (
            http.post("/re/append", json={"path": "a.md", "content": "x", "create": "yes"}),
            400,
            "invalid_argument",
        ),
        (
            http.put("/re/notes/big.md", content=b"x" * (4 * 1024 * 1024 + 1), headers=MD),
            413,
            "too_large",
        ),
        (http.get("/no/such/route/here"), 404, "not_found"),
        (http.patch("/re/notes/a.md", content=b"x", headers=MD), 405, "method_not_allowed"),
    ]
    for response, status, code in cases:
        assert (response.status_code, error_of(response)) == (status, code), response.request.url
    assert not (vault_dir(server, "re") / "bad.md").exists()


def test_numbers_sqlite_cannot_hold_and_bad_utf8_paths_are_refused(
    http: httpx2.Client, server: RunningIndexer
) -> None:
    """A version past 2**63 - 1 overflowed in SQLite (a 500); %-escapes that are not
    UTF-8 were decoded to U+FFFD and named another file (a 201)."""
    assert http.put("/ov/notes/n.md", content=b"# n\n", headers=MD).status_code == 201
    huge = str(2**63)
    cases = [
        http.get("/ov/notes/n.md", params={"version": huge}),
        http.get("/ov/raw/n.md", params={"version": huge}),
        http.get("/ov/diff/n.md", params={"from": huge}),
        http.get("/ov/diff/n.md", params={"from": "1", "to": huge}),
        http.post("/ov/restore", json={"path": "n.md", "version": 2**63}),
        http.put("/ov/notes/x/a%ff.md", content=b"# a\n", headers=MD),
        http.put("/ov/notes/a%c0%ae%c0%ae/x.md", content=b"# a\n", headers=MD),
        http.put("/ov/notes/%ed%a0%80.md", content=b"# a\n", headers=MD),
        http.get("/ov/notes/a%ff.md"),
        http.delete("/ov/notes/n%ff.md", headers=DELETE),
        http.get("/ov/search?q=n%ff"),  # not a search for "n\ufffd"
        http.get("/ov/search?q=n&tag=%c0%ae"),
        http.get("/ov/notes?path=%ed%a0%80"),
        http.get("/ov/summary?path=a%ff"),
    ]
    for response in cases:
        assert (response.status_code, error_of(response)) == (400, "invalid_argument"), (
            response.request.url
        )
    names = sorted(p.name for p in vault_dir(server, "ov").rglob("*"))
    assert [name for name in names if name != OVERVIEW_FILE] == ["n.md"]  # a summary may come
    top = http.get("/ov/search", params={"q": "n", "offset": str(2**63 - 1)})  # as MCP takes
    assert top.status_code == 200 and top.json()["results"] == [], top.text
    for far in (str(2**63), "1" * 30):  # said to be out of range, not "not a whole number"
        refused = http.get("/ov/search", params={"q": "n", "offset": far})
        assert refused.status_code == 400 and "whole number" not in refused.text, refused.text
    assert http.put("/ov/notes/%C3%A9t%C3%A9.md", content=b"# e\n", headers=MD).status_code == 201
    assert (vault_dir(server, "ov") / "été.md").exists()


def test_a_lone_surrogate_is_refused_naming_its_parameter_or_field(
    http: httpx2.Client, server: RunningIndexer
) -> None:
    """Each was refused, but as "the query string" or "the body" only: which of grep's
    path, glob or pattern (or which field of a body) was meant, the caller had to guess."""
    assert http.put("/ls/notes/a.md", content=b"# a\nalpha\n", headers=MD).status_code == 201
    vault = vault_dir(server, "ls")
    before = sorted((p.name, p.read_bytes()) for p in vault.rglob("*.md"))
    lone = "%ED%A0%80"  # U+D800 as UTF-8 would spell it (CESU-8): no UTF-8
    for query, named in (
        (f"/ls/grep?pattern=alpha&path=x{lone}", "path"),
        (f"/ls/grep?pattern=alpha&glob={lone}*.md", "glob"),
        (f"/ls/grep?glob=**&pattern=al{lone}", "pattern"),
        (f"/ls/notes?limit=5&pattern=**/{lone}", "pattern"),
        (f"/ls/search?q=alpha&tag=ok&tag={lone}", "tag"),
    ):
        refused = http.get(query)
        assert (refused.status_code, error_of(refused)) == (400, "invalid_argument"), query
        assert error_message(refused) == (
            f"the query parameter {named!r} is not valid UTF-8 once its %-escapes are decoded"
        )
    for method, route, body, field in (
        ("PUT", "/ls/notes/a.md", {"content": "# a\n\ud800\n"}, "content"),
        ("PUT", "/ls/notes/a.md", {"content": "# b\n", "reason": "x\udfff"}, "reason"),
        ("POST", "/ls/append", {"path": "a.md", "content": "more \udc80"}, "content"),
        ("POST", "/ls/move", {"path": "a.md", "new_path": "b\ud800.md"}, "new_path"),
        ("POST", "/ls/recall", {"query": "alpha \ud800"}, "query"),
    ):
        sent = json.dumps(body).encode()  # (the surrogate as its JSON escape)
        refused = http.request(method, route, content=sent, headers=JSON)
        assert (refused.status_code, error_of(refused)) == (400, "invalid_argument"), body
        assert error_message(refused).startswith(f"the field {field!r} holds a lone UTF-16")
    assert sorted((p.name, p.read_bytes()) for p in vault.rglob("*.md")) == before


def test_bodies_that_say_two_things_and_folder_spellings_of_a_file_are_refused(
    http: httpx2.Client, server: RunningIndexer
) -> None:
    """A repeated key took the last value (a proxy checking the first saw another call);
    ``NaN`` is no JSON; ``a.md/.`` named the file ``a.md``: read, replaced, deleted."""
    assert http.put("/tw/notes/a.md", content=b"# a\n", headers=MD).status_code == 201
    assert http.put("/tw-Latn/notes/a.md", content=b"# a\n", headers=MD).status_code == 201
    before = (vault_dir(server, "tw") / "a.md").read_bytes()
    twice = b'{"path": "b.md", "content": "x\\n", "path": "a.md"}'
    cases = [
        (http.post("/tw/append", content=twice, headers=JSON), "invalid_argument"),
        (
            http.post("/tw/restore", content=b'{"path": "a.md", "version": NaN}', headers=JSON),
            "invalid_argument",
        ),
        (http.get("/tw/notes/a.md/%2E"), "forbidden_path"),
        (http.put("/tw/notes/a.md/%2E", content=b"# gone\n", headers=MD), "forbidden_path"),
        (http.put("/tw/notes/a.md/x/%2E%2E", content=b"# gone\n", headers=MD), "forbidden_path"),
        (http.delete("/tw/notes/a.md/%2E", headers=DELETE), "forbidden_path"),
        (http.get("/tw/history/a.md/%2E"), "forbidden_path"),
        (http.get("/tw/diff/a.md/%2E", params={"from": 1}), "forbidden_path"),
        (http.get("/con/notes"), "invalid_lang"),
        (http.get("/tw-latn/search", params={"q": "a"}), "invalid_lang"),  # (tw-Latn's)
        (http.put("/tw-latn/notes/a.md", content=b"# a\n", headers=MD), "invalid_lang"),
    ]
    for response, code in cases:
        assert error_of(response) == code, (response.request.url, response.text)
        assert response.status_code in (400, 403, 404), response.request.url
    assert "twice" in error_message(cases[0][0]) and "'path'" in error_message(cases[0][0])
    assert (vault_dir(server, "tw") / "a.md").read_bytes() == before
    assert sorted(p.name for p in vault_dir(server, "tw").iterdir()) == ["a.md"]
    assert not vault_dir(server, "tw-latn").exists()


def test_features_the_core_lacks_answer_404(http: httpx2.Client) -> None:
    features = http.get("/status").json()["features"]
    checks = {
        "history": [http.get("/rf/history/a.md"), http.get("/rf/diff/a.md", params={"from": 1})],
        "summaries": [http.get("/rf/summary")],
        "recall": [http.post("/rf/recall", json={"query": "x"})],
    }
    if not features["history"]:
        checks["history"] += [
            http.post("/rf/restore", json={"path": "a.md", "version": 1}),
            http.post("/rf/move", json={"path": "a.md", "new_path": "b.md"}),
            http.get("/rf/notes/a.md", params={"version": 1}),
        ]
    for feature, responses in checks.items():
        if features[feature]:
            continue
        for response in responses:
            assert response.status_code == 404, response.request.url
            assert "is not available in this indexer" in error_message(response)


def test_status_matches_the_mcp_tool(http: httpx2.Client, server: RunningIndexer) -> None:
    http.put("/rg/notes/s.md", content=b"# s\n", headers=MD)
    status = http.get("/status").json()
    assert status["langs"]["rg"] == 1 and status["index_ready"] in (True, False)
    assert status["workspace"] == str(server.workspace.resolve())
    assert set(status["features"]) == {"search", "history", "summaries", "recall"}
    assert status["index"]["notes"] >= 1


async def test_rest_and_mcp_see_the_same_vault(http: httpx2.Client, server: RunningIndexer) -> None:
    written = http.put("/rh/notes/same.md", content=b"# same\n", headers=MD).json()
    async with server.client() as client:
        read = (
            await client.call_tool("read", {"lang": "rh", "path": "same.md"})
        ).structured_content
        assert read["etag"] == written["etag"]
        mcp_write = await client.call_tool(
            "write",
            {"lang": "rh", "path": "same.md", "content": "# mcp\n", "if_match": read["etag"]},
        )
    rest = http.get("/rh/notes/same.md").json()
    assert rest["etag"] == mcp_write.structured_content["etag"] and rest["content"].endswith(
        "# mcp\n"
    )


def test_indexer_open_without_a_token_prints_the_page(server: RunningIndexer) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "indexer",
            "open",
            "--workspace",
            str(server.workspace),
            "--print",
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == base_url(server) + "/ui/"


def test_openapi_document_is_served(http: httpx2.Client) -> None:
    doc = http.get("/openapi.json").json()
    assert doc["openapi"].startswith("3.1") and "/{lang}/notes/{path}" in doc["paths"]
    json.dumps(doc)


def test_history_diff_restore_move(http: httpx2.Client) -> None:
    first = http.put("/rj/notes/h.md", content=b"# one\n", headers=MD).json()
    http.put("/rj/notes/h.md", content=b"# two\n", headers=MD | {"If-Match": f'"{first["etag"]}"'})
    versions = http.get("/rj/history/h.md").json()["versions"]
    assert len(versions) >= 2
    oldest = versions[-1]["version"]
    assert "+# two" in http.get("/rj/diff/h.md", params={"from": oldest}).json()["diff"]
    old = http.get("/rj/notes/h.md", params={"version": oldest}).json()
    assert old["content"].endswith("# one\n")
    current = http.get("/rj/notes/h.md").json()["etag"]
    restored = http.post(
        "/rj/restore", json={"path": "h.md", "version": oldest, "if_match": current}
    )
    assert restored.status_code == 200
    assert http.get("/rj/notes/h.md").json()["content"].endswith("# one\n")
    stale = {"If-Match": f'"{"0" * 32}"'}  # the header counts as the body's if_match does
    body = {"path": "h.md", "version": oldest}
    assert http.post("/rj/restore", json=body, headers=stale).status_code == 412
    body = {"path": "h.md", "new_path": "m.md"}
    assert http.post("/rj/move", json=body, headers=stale).status_code == 412
    both = {**body, "if_match": "0" * 32}
    assert http.post("/rj/move", json=both, headers=stale).status_code == 400
    moved = http.post("/rj/move", json={"path": "h.md", "new_path": "m.md", "reason": "tidy"})
    assert moved.status_code == 200 and moved.json()["new_path"] == "m.md"
