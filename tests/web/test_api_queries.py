"""What a confused client sends the REST API, against a real ``indexer serve``: query
parameters a route does not take (the tool's ``if_match`` among them), and a ``.json``
file PUT as the write's JSON arguments."""

from __future__ import annotations

from collections.abc import Iterator

import httpx2
import pytest
from helpers.indexer_process import RunningIndexer, vault_dir
from helpers.rest_errors import error_message, error_of

MD = {"Content-Type": "text/markdown; charset=utf-8"}
JSON = {"Content-Type": "application/json"}
DELETE = {"X-Requested-With": "test"}


@pytest.fixture(scope="module")
def http(server: RunningIndexer) -> Iterator[httpx2.Client]:
    base = server.url.removesuffix("/mcp") + "/api/v1"
    with httpx2.Client(base_url=base, timeout=30) as client:
        yield client


def test_a_query_parameter_the_route_does_not_take_is_refused(
    http: httpx2.Client, server: RunningIndexer
) -> None:
    """Query parameters were read by name and the rest ignored: ``?if_match=<etag>`` (the
    tool's name, beside the ``?reason=`` the same PUT takes) on a PUT or a DELETE let the
    change go ahead over an edit made since, and a misspelt ``?versoin=1`` read the
    current text as if it were version 1. A route now takes what openapi.json lists."""
    folder = vault_dir(server, "uq")
    first = http.put("/uq/notes/n.md", content=b"# v1\n", headers=MD).headers["etag"]
    assert http.put("/uq/notes/n.md", content=b"# v2\n", headers=MD).status_code == 200
    stale = first.strip('"')
    note = folder / "n.md"
    before = note.read_bytes()
    refused = [
        http.put(f"/uq/notes/n.md?if_match={stale}&reason=r", content=b"# x\n", headers=MD),
        http.put("/uq/notes/n.md?encoding=base64", content=b"# x\n", headers=MD),
        http.delete(f"/uq/notes/n.md?if_match={stale}", headers=DELETE),
        http.delete("/uq/notes/n.md?If-Match=x", headers=DELETE),
        http.post(f"/uq/append?if_match={stale}", json={"path": "n.md", "content": "x\n"}),
        http.post("/uq/move?dry_run=1", json={"path": "n.md", "new_path": "m.md"}),
        http.get("/uq/notes/n.md?versoin=1"),
        http.get("/uq/search?query=v1"),
        http.get("/uq/notes?pattern=*.md&recursive=1"),
        http.get("/status?x="),
    ]
    for response in refused:
        assert response.status_code == 400, (response.request.url, response.text)
        assert error_of(response) == "invalid_argument"
        assert "unknown query parameter" in error_message(response)
    assert note.read_bytes() == before  # nothing refused changed anything
    assert sorted(p.name for p in folder.iterdir() if not p.name.startswith(".")) == ["n.md"]
    assert "If-Match" in error_message(refused[0]) and "reason" in error_message(refused[0])
    assert "'versoin'" in error_message(refused[6]) and "version" in error_message(refused[6])
    old = http.get("/uq/notes/n.md", params={"version": 1, "offset": 0, "limit": 10})
    assert old.status_code == 200 and old.json()["content"].endswith("# v1\n")
    assert http.get("/uq/search", params={"q": "v2", "tag": ["a", "b"]}).status_code == 200
    assert http.head("/uq/notes/n.md?version=1").status_code == 200


def test_a_json_file_put_as_json_is_told_how_to_send_it(
    http: httpx2.Client, server: RunningIndexer
) -> None:
    """A .json file PUT as application/json (what ``curl --json`` sends) is read as the
    write's arguments: it was refused as "unknown field(s): list, name", with no word of
    how to store it. Nothing is written; sent as text/plain it is stored as it is."""
    document = b'{"name": "x", "list": [1, 2]}'
    for body in (document, b"[1, 2]"):
        refused = http.put("/jf/notes/cfg.json", content=body, headers=JSON)
        assert refused.status_code == 400 and error_of(refused) == "invalid_argument"
        assert "text/plain" in error_message(refused) and '"content"' in error_message(refused)
    assert not vault_dir(server, "jf").exists()
    stored = http.put(
        "/jf/notes/cfg.json", content=document, headers={"Content-Type": "text/plain"}
    )
    assert stored.status_code == 201
    assert (vault_dir(server, "jf") / "cfg.json").read_bytes() == document


def test_a_url_path_that_is_no_utf8_is_said_so_on_every_route(http: httpx2.Client) -> None:
    """Routes without a note path decoded ``%FF`` to U+FFFD: "'\ufffd' is not a vault id"."""
    answers = [http.get("/%FF/notes"), http.get("/%FF/search?q=a"), http.get("/%FF/folder")]
    answers.append(http.post("/%FF/append", json={"path": "a.md", "content": "x"}))
    for response in answers:
        assert response.status_code == 400 and error_of(response) == "invalid_argument"
        assert "not valid UTF-8" in error_message(response), response.text
