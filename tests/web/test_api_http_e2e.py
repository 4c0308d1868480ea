"""The REST API under an acceptance pass in plain HTTP against a real ``indexer serve``
(methods, preconditions, the OpenAPI document's word, one connection's requests): each
refusal is the SPEC's JSON error and changes nothing on disk."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from helpers.indexer_process import RunningIndexer, vault_dir
from helpers.rest_errors import error_of
from helpers.snapshots import contents

from indexer.web import openapi
from shared.workspace import OVERVIEW_FILE

MD = {"Content-Type": "text/markdown; charset=utf-8"}
READS = ("notes", "raw", "render")  # the GET routes that answer a file's ETag


@pytest.fixture(scope="module")
def http(server: RunningIndexer) -> Iterator[httpx2.Client]:
    base = server.url.removesuffix("/mcp") + "/api/v1"
    with httpx2.Client(base_url=base, timeout=30) as client:
        yield client


def on_disk(folder: Path) -> dict[str, tuple]:
    """What a refused call must leave as it was (a folder summary may come meanwhile)."""
    return {path: state for path, state in contents(folder).items() if OVERVIEW_FILE not in path}


def test_a_read_whose_if_match_names_another_text_is_refused_412(
    http: httpx2.Client, server: RunningIndexer
) -> None:
    """RFC 9110 13.1.1: a server MUST NOT perform a request whose ``If-Match`` is false.
    A GET ignored it: a client reading a note in pages (offset/limit) with the first
    page's etag was given a later page of a note changed meanwhile, spliced from two
    texts without a word. Strong comparison (a weak etag never matches); a list matches
    when any of its etags does; ``*`` any file; ``If-Match`` is weighed before
    ``If-None-Match``."""
    first = http.put("/hm/notes/paged.md", content=b"# Paged\none\ntwo\nthree\n", headers=MD)
    old = first.headers["etag"]
    for route in READS:
        assert http.get(f"/hm/{route}/paged.md", headers={"If-Match": old}).status_code == 200
        listed = {"If-Match": f'"0123", {old}'}
        assert http.get(f"/hm/{route}/paged.md", headers=listed).status_code == 200
        assert http.get(f"/hm/{route}/paged.md", headers={"If-Match": "*"}).status_code == 200
    page = http.get("/hm/notes/paged.md", params={"offset": 0, "limit": 3}).json()
    changed = http.put("/hm/notes/paged.md", content=b"# Paged\nnew\n", headers=MD)
    assert changed.status_code == 200 and changed.headers["etag"] != old
    folder = vault_dir(server, "hm")
    before = on_disk(folder)
    for route in READS:
        later_page = {"offset": "3"} if route == "notes" else {}
        stale = http.get(f"/hm/{route}/paged.md", params=later_page, headers={"If-Match": old})
        assert stale.status_code == 412 and error_of(stale) == "conflict", route
        weak = http.get(
            f"/hm/{route}/paged.md", headers={"If-Match": "W/" + changed.headers["etag"]}
        )
        assert weak.status_code == 412 and error_of(weak) == "conflict", route
        head = http.head(f"/hm/{route}/paged.md", headers={"If-Match": old})
        assert head.status_code == 412 and head.content == b"", route
        both = {"If-Match": old, "If-None-Match": changed.headers["etag"]}
        assert http.get(f"/hm/{route}/paged.md", headers=both).status_code == 412, route
    assert page["etag"] == old.strip('"')
    assert on_disk(folder) == before
    # an older version is compared with that version's etag
    version_one = {"version": "1", "offset": "1"}
    again = http.get("/hm/notes/paged.md", params=version_one, headers={"If-Match": old})
    assert again.status_code == 200 and again.headers["etag"] == old


def test_the_openapi_documents_bounds_and_enums_are_the_servers(http: httpx2.Client) -> None:
    """Each integer query parameter the document bounds is refused just past its bounds
    and taken at them, and one the document leaves unbounded is not refused for its
    size; each enum's values are taken and another refused: ``summary?format=xml`` was
    answered as JSON (the document says json or html), and history's ``limit`` was
    refused past 1000 while the document gave no bound."""
    http.put("/ob/notes/n.md", content=b"# N\nword\n", headers=MD)
    fill = {"lang": "ob", "path": "n.md"}
    needs = {"pattern": "word", "q": "word", "from": "1"}
    mismatches: list[str] = []
    for route, item in openapi.document()["paths"].items():
        operation = item.get("get")
        if operation is None or "{lang}" not in route:
            continue
        url = route.format(**fill)
        query = [p for p in operation["parameters"] if p["in"] == "query"]
        base = {p["name"]: needs[p["name"]] for p in query if p.get("required")}
        base |= {"q": "word"} if route.endswith("/search") else {}
        for param in query:
            for value, wanted in _probes(param["schema"]):
                answer = http.get(url, params=base | {param["name"]: str(value)})
                taken = answer.status_code < 400
                if taken != wanted or (not taken and error_of(answer) != "invalid_argument"):
                    mismatches.append(f"{route} {param['name']}={value}: {answer.status_code}")
    assert mismatches == []


def _probes(schema: dict[str, Any]) -> list[tuple[object, bool]]:
    """Values of a query parameter with whether the server must take them."""
    if "enum" in schema:
        return [*((value, True) for value in schema["enum"]), ("zzz", False)]
    if schema.get("type") != "integer":
        return []
    low, high = schema.get("minimum"), schema.get("maximum")
    probes: list[tuple[object, bool]] = []
    if low is not None:
        probes += [(low - 1, False), (low, True)]
    if high is not None:
        probes += [(high, True), (high + 1, False)]
    if high is None:
        probes.append((10**6, True))
    return probes


def test_the_api_root_answers_json_not_a_redirect(
    http: httpx2.Client, server: RunningIndexer
) -> None:
    """``/api/v1`` itself was a 307 to ``/api/v1/``, an empty body for any method (a PUT
    was sent on), and then a 404: now a JSON 404 naming the document of the routes."""
    for method in ("GET", "PUT", "POST", "DELETE"):
        root = server.url.removesuffix("/mcp") + "/api/v1"  # (no slash: base_url adds one)
        answer = http.request(method, root, headers=MD, content=b"x")
        assert answer.status_code == 404 and error_of(answer) == "not_found", method
        assert "openapi.json" in answer.json()["error"]["message"]
        assert "location" not in answer.headers


def test_every_route_refuses_other_methods_with_405_and_allow(http: httpx2.Client) -> None:
    """Each route of the document answers a method it lacks (OPTIONS and PATCH among
    them) 405 in the error body, its ``Allow`` naming exactly its methods (HEAD with
    GET)."""
    for route, item in openapi.document()["paths"].items():
        url = route.format(lang="al", path="n.md")
        allowed = {method.upper() for method in item} | ({"HEAD"} if "get" in item else set())
        for method in sorted({"OPTIONS", "PATCH", "PUT", "DELETE", "POST"} - allowed):
            answer = http.request(method, url, headers={"Content-Type": "application/json"})
            assert answer.status_code == 405, (method, route)
            assert error_of(answer) == "method_not_allowed", (method, route)
            named = {part.strip() for part in answer.headers["allow"].split(",")}
            assert named == allowed, (method, route)
    assert "al" not in http.get("/status").json()["langs"]  # (no vault made)


def test_pipelined_requests_on_one_connection_are_answered_in_order(
    server: RunningIndexer,
) -> None:
    """A write, a read and a refusal sent at once on one keep-alive connection, then an
    HTTP/1.0 request on its own: each is answered in turn, the refusal as the JSON body,
    and the connection is closed after the one that asked for it."""
    host, port = server.url.removeprefix("http://").split("/")[0].split(":")
    head = f"Host: {host}:{port}\r\n"
    body = b"# Piped\n"
    sent = (
        f"PUT /api/v1/pp/notes/piped.md HTTP/1.1\r\n{head}Content-Type: text/markdown\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    sent += f"GET /api/v1/pp/stat/piped.md HTTP/1.1\r\n{head}\r\n".encode()
    sent += f"PATCH /api/v1/pp/notes/piped.md HTTP/1.1\r\n{head}Connection: close\r\n\r\n".encode()
    answers = _exchange(host, int(port), sent)
    assert [status for status, _ in answers] == [201, 200, 405]
    assert answers[1][1]["exists"] is True and answers[1][1]["path"] == "piped.md"
    assert answers[2][1]["error"]["code"] == "method_not_allowed"
    old = _exchange(
        host, int(port), f"GET /api/v1/pp/stat/piped.md HTTP/1.0\r\n{head}\r\n".encode()
    )
    assert [status for status, _ in old] == [200]


def _exchange(host: str, port: int, data: bytes) -> list[tuple[int, Any]]:
    """Send ``data`` on one connection, read until the server closes it, and split the
    answers (each with a Content-Length) into (status, JSON body)."""
    with socket.create_connection((host, port), timeout=20) as sock:
        sock.sendall(data)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    answers: list[tuple[int, Any]] = []
    while received:
        top, _, rest = received.partition(b"\r\n\r\n")
        lines = top.split(b"\r\n")
        fields = dict(line.split(b":", 1) for line in lines[1:])
        length = int({k.strip().lower(): v for k, v in fields.items()}[b"content-length"])
        payload, received = rest[:length], rest[length:]
        answers.append((int(lines[0].split()[1]), json.loads(payload) if payload else None))
    return answers
