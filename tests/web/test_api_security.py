"""The API's and the page's protections against a real ``indexer serve --token``:
Host/Origin as for /mcp, bearer token or login cookie, the CSRF gate, security headers,
the one-time login link and ``indexer open``."""

from __future__ import annotations

import gzip
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from helpers.indexer_process import RunningIndexer, serving

TOKEN = "s3cret-token-for-tests"
BEARER = {"Authorization": f"Bearer {TOKEN}"}
MD = {"Content-Type": "text/markdown"}


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningIndexer]:
    yield from serving(tmp_path_factory.mktemp("guarded") / "ws", "--token", TOKEN)


@pytest.fixture(scope="module")
def http(guarded: RunningIndexer) -> Iterator[httpx2.Client]:
    with httpx2.Client(base_url=guarded.url.removesuffix("/mcp"), timeout=30) as client:
        yield client


def note_file(server: RunningIndexer, lang: str, path: str) -> Path:
    return server.workspace / "memory" / "languages" / lang / "vault" / path


def login_path(http: httpx2.Client) -> str:
    answer = http.post("/api/v1/login-link", json={}, headers=BEARER)
    assert answer.status_code == 200 and answer.json()["expires_in"] == 60
    return str(answer.json()["path"])


def test_foreign_host_and_origin_are_refused_as_on_mcp(http: httpx2.Client) -> None:
    for path in ("/api/v1/status", "/ui/", "/mcp"):
        host = http.get(path, headers=BEARER | {"Host": "evil.example"})
        origin = http.get(path, headers=BEARER | {"Origin": "http://evil.example"})
        assert (host.status_code, origin.status_code) == (421, 403)
        for refused in (host, origin):  # the guard's refusals had none outside the API
            assert refused.headers["x-content-type-options"] == "nosniff", path
            assert refused.headers["x-frame-options"] == "DENY", path
    page = BEARER | {"Origin": str(http.base_url).rstrip("/")}  # the page's own origin
    assert http.get("/api/v1/status", headers=page).status_code == 200
    other = BEARER | {"Origin": "http://127.0.0.1:9"}  # another program's page (it passed)
    assert http.get("/api/v1/status", headers=other).status_code == 403


def test_every_answer_carries_the_security_headers(http: httpx2.Client) -> None:
    """The README says every answer does: /health, /mcp, /favicon.ico and / had none."""
    call = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    accept = {"Accept": "application/json, text/event-stream"}
    answers = [
        http.get("/health"),
        http.get("/favicon.ico"),
        http.get("/"),
        http.post("/mcp", json=call, headers=BEARER | accept),
        http.post("/mcp", json=call, headers=accept),  # no token: 401
        http.get("/api/v1/status", headers=BEARER),
    ]
    for answer in answers:
        where = (answer.request.url.path, answer.status_code)
        assert answer.headers["x-content-type-options"] == "nosniff", where
        assert answer.headers["x-frame-options"] == "DENY", where
        assert answer.headers["referrer-policy"] == "no-referrer", where
    root = http.get("/")  # the server's own address leads to the page (it was a 404)
    assert root.status_code == 307 and root.headers["location"] == "/ui/"


def test_the_api_says_a_host_or_origin_refusal_in_its_error_body(http: httpx2.Client) -> None:
    """The API's clients read one error shape; the guard's refusals come in it too."""
    host = http.get("/api/v1/status", headers=BEARER | {"Host": "evil.example"})
    origin = http.get("/api/v1/status", headers=BEARER | {"Origin": "http://evil.example"})
    for answer, code in ((host, "misdirected_request"), (origin, "forbidden_origin")):
        assert answer.headers["content-type"] == "application/json"
        assert answer.json()["error"]["code"] == code, answer.text
        assert "evil.example" not in answer.text
    assert http.get("/mcp", headers=BEARER | {"Host": "evil.example"}).text == "Misdirected Request"


def test_cross_site_write_with_a_foreign_origin_changes_nothing(
    http: httpx2.Client, guarded: RunningIndexer
) -> None:
    evil = BEARER | MD | {"Origin": "http://evil.example"}
    assert http.put("/api/v1/sa/notes/x.md", content=b"# x\n", headers=evil).status_code == 403
    assert not note_file(guarded, "sa", "x.md").exists()


def test_token_is_required_on_api_and_page(http: httpx2.Client) -> None:
    refused = http.get("/api/v1/status")
    assert refused.status_code == 401 and refused.json()["error"]["code"] == "unauthorized"
    assert refused.headers["www-authenticate"].startswith("Bearer")
    wrong = http.get("/api/v1/status", headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401
    assert http.get("/api/v1/status", headers={"Authorization": TOKEN}).status_code == 401
    assert http.get("/api/v1/status", headers=BEARER).status_code == 200
    page = http.get("/ui/")
    assert page.status_code == 401 and "indexer open" in page.text
    assert http.get("/ui/app.js").status_code == 401
    assert http.get("/ui/", headers=BEARER).status_code == 200
    assert http.get("/health").status_code == 200  # liveness stays open, and says little


@pytest.mark.parametrize(
    "content_type",
    ["application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "", "image/png"],
)
def test_writes_refuse_form_encodings(
    http: httpx2.Client, guarded: RunningIndexer, content_type: str
) -> None:
    headers = BEARER | ({"Content-Type": content_type} if content_type else {})
    put = http.put("/api/v1/sb/notes/f.md", content=b"a=b", headers=headers)
    assert put.status_code == 415 and put.json()["error"]["code"] == "unsupported_media_type"
    assert "a text type" in put.json()["error"]["message"]
    post = http.post("/api/v1/sb/append", content=b"path=f.md&content=x", headers=headers)
    assert post.status_code == 415
    assert "text/markdown" not in post.json()["error"]["message"]  # (POST takes JSON only)
    assert not note_file(guarded, "sb", "f.md").exists()


def test_a_compressed_body_is_refused(http: httpx2.Client, guarded: RunningIndexer) -> None:
    """RFC 9110: a coding the server does not take is a 415; a br-labelled body was
    stored as the file's text and a gzip one refused as not UTF-8."""
    packed = gzip.compress(b"# zipped\n")
    for coding, body in (("gzip", packed), ("br", b"# plain\n"), ("GZIP, identity", packed)):
        headers = BEARER | MD | {"Content-Encoding": coding}
        put = http.put("/api/v1/sb/notes/zipped.md", content=body, headers=headers)
        assert put.status_code == 415, (coding, put.text)
        assert "Content-Encoding" in put.json()["error"]["message"]
        post = http.post(
            "/api/v1/sb/append",
            content=b'{"path": "zipped.md", "content": "x"}',
            headers=BEARER | {"Content-Type": "application/json", "Content-Encoding": coding},
        )
        assert post.status_code == 415
    assert not note_file(guarded, "sb", "zipped.md").exists()
    plain = BEARER | MD | {"Content-Encoding": "identity"}
    assert (
        http.put("/api/v1/sb/notes/zipped.md", content=b"# z\n", headers=plain).status_code == 201
    )


def test_a_body_in_another_charset_is_refused(http: httpx2.Client, guarded: RunningIndexer) -> None:
    """A UTF-16 body was read as UTF-8 (its NULs are valid UTF-8): stored garbled, 201."""
    text = "# Hi\nhello there\n"
    for charset, body in (("utf-16le", text.encode("utf-16le")), ('"ISO-8859-1"', b"# caf\xe9\n")):
        headers = BEARER | {"Content-Type": f"text/markdown; charset={charset}"}
        put = http.put("/api/v1/sb/notes/charset.md", content=body, headers=headers)
        assert put.status_code == 415, (charset, put.text)
        assert "UTF-8" in put.json()["error"]["message"]
        post = http.post(
            "/api/v1/sb/append",
            content=b'{"path": "charset.md", "content": "x"}',
            headers=BEARER | {"Content-Type": f"application/json; charset={charset}"},
        )
        assert post.status_code == 415, (charset, post.text)
    assert not note_file(guarded, "sb", "charset.md").exists()
    for charset in ("UTF-8", '"utf-8"', "us-ascii"):
        headers = BEARER | {"Content-Type": f"text/markdown; charset={charset}"}
        put = http.put("/api/v1/sb/notes/charset.md", content=b"# ok\n", headers=headers)
        assert put.status_code in (200, 201), (charset, put.text)


@pytest.mark.parametrize("content_type", ["text/csv", "text/yaml; charset=utf-8", "text/plain"])
def test_a_text_file_is_written_as_its_own_text_type(
    http: httpx2.Client, guarded: RunningIndexer, content_type: str
) -> None:
    """README: a write carries JSON "or a text type"; text/csv for a .csv was refused."""
    name = "t-" + content_type.split(";")[0].replace("/", "-") + ".csv"
    headers = BEARER | {"Content-Type": content_type}
    put = http.put(f"/api/v1/sb/notes/data/{name}", content=b"a,b\n1,2\n", headers=headers)
    assert put.status_code == 201, put.text
    assert note_file(guarded, "sb", f"data/{name}").read_bytes() == b"a,b\n1,2\n"


def test_post_routes_take_json_only_and_delete_needs_a_header(
    http: httpx2.Client, guarded: RunningIndexer
) -> None:
    # text/plain is what a cross-site form can still send: a POST route refuses it
    body = b'{"path": "d.md", "content": "x"}'
    text = http.post(
        "/api/v1/sc/append", content=body, headers=BEARER | {"Content-Type": "text/plain"}
    )
    assert text.status_code == 415  # as the CSRF check answers other types (it was 400)
    assert text.json()["error"]["code"] == "unsupported_media_type"
    assert not note_file(guarded, "sc", "d.md").exists()
    assert (
        http.put("/api/v1/sc/notes/d.md", content=b"# d\n", headers=BEARER | MD).status_code == 201
    )
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    as_form = http.request("DELETE", "/api/v1/sc/notes/d.md", headers=BEARER | form)
    assert as_form.status_code == 415 and note_file(guarded, "sc", "d.md").exists()
    assert "application/json or a text type" in as_form.json()["error"]["message"]
    with_body = http.request("DELETE", "/api/v1/sc/notes/d.md", content=b"a=1", headers=BEARER)
    assert with_body.status_code == 415 and note_file(guarded, "sc", "d.md").exists()
    # no body and no type (curl -X DELETE, requests.delete): no form can send it
    bare = http.delete("/api/v1/sc/notes/d.md", headers=BEARER)
    assert bare.status_code == 200 and not note_file(guarded, "sc", "d.md").exists()
    http.put("/api/v1/sc/notes/d.md", content=b"# d\n", headers=BEARER | MD)
    with_json = http.request(
        "DELETE", "/api/v1/sc/notes/d.md", headers=BEARER | {"Content-Type": "application/json"}
    )
    assert with_json.status_code == 200 and not note_file(guarded, "sc", "d.md").exists()
    # the SPEC: "Writes need a JSON or text content type" (a DELETE with text/plain: 415)
    for kind in ("text/plain", "text/markdown; charset=utf-8"):
        http.put("/api/v1/sc/notes/d.md", content=b"# d\n", headers=BEARER | MD)
        as_text = http.request(
            "DELETE", "/api/v1/sc/notes/d.md", headers=BEARER | {"Content-Type": kind}
        )
        assert as_text.status_code == 200 and not note_file(guarded, "sc", "d.md").exists()


def test_security_headers(http: httpx2.Client) -> None:
    page = http.get("/ui/", headers=BEARER)
    csp = {
        part.split()[0]: part.split()[1:]
        for part in page.headers["content-security-policy"].split(";")
        if part.strip()
    }
    assert csp["default-src"] == ["'self'"] and csp["script-src"] == ["'self'"]
    assert csp["img-src"] == ["'self'", "data:"] and csp["object-src"] == ["'none'"]
    assert csp["frame-ancestors"] == ["'none'"]
    assert "unsafe" not in page.headers["content-security-policy"]
    for response in (page, http.get("/api/v1/status", headers=BEARER)):
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["referrer-policy"] == "no-referrer"
    assert http.get("/api/v1/status", headers=BEARER).headers["cache-control"] == "no-store"


def test_one_time_login_link_sets_a_strict_httponly_cookie(http: httpx2.Client) -> None:
    path = login_path(http)
    assert path.startswith("/ui/login?code=")
    answer = http.get(path)
    assert answer.status_code == 303 and answer.headers["location"] == "/ui/"
    cookie = answer.headers["set-cookie"]
    attributes = {part.strip().lower() for part in cookie.split(";")}
    assert {"httponly", "samesite=strict", "path=/"} <= attributes
    name, value = cookie.split(";")[0].split("=", 1)
    port = http.base_url.port
    assert name == f"vault_ui_{port}" and TOKEN not in cookie
    session = {"Cookie": f"{name}={value}"}
    assert http.get("/api/v1/status", headers=session).status_code == 200
    assert http.get("/ui/", headers=session).status_code == 200
    # the cookie opens the page and the API, but cannot mint more links
    assert http.post("/api/v1/login-link", json={}, headers=session).status_code == 401
    assert http.get(path).status_code == 401  # used once
    assert http.get("/ui/login?code=guess").status_code == 401
    assert http.get("/api/v1/status", headers={"Cookie": f"{name}=forged"}).status_code == 401


def test_a_posted_login_code_sets_the_cookie_once_and_takes_json_only(
    http: httpx2.Client,
) -> None:
    """``POST /ui/login`` (what the page behind ``indexer open``'s file sends): JSON only,
    so no form on any site can post it; a code works once; a refusal sets no cookie."""
    with httpx2.Client(base_url=http.base_url) as stranger:  # no token, no cookie
        page = stranger.get("/ui/login")  # the code is in the fragment: the page reads it
        assert page.status_code == 200 and 'src="/ui/login.js"' in page.text
        assert stranger.get("/ui/login.js").status_code == 200
        assert stranger.get("/ui/app.js").status_code == 401
        code = login_path(http).removeprefix("/ui/login?code=")
        for kind in ("application/x-www-form-urlencoded", "multipart/form-data"):
            form = stranger.post(
                "/ui/login", content=f"code={code}", headers={"Content-Type": kind}
            )
            assert form.status_code == 415 and "set-cookie" not in form.headers
        for body in (b"", b"[]", b'{"code": 1}', b'{"code": "x", "more": 1}', b'{"code": ""}'):
            bad = stranger.post(
                "/ui/login", content=body, headers={"Content-Type": "application/json"}
            )
            assert bad.status_code in (400, 401) and "set-cookie" not in bad.headers, body
        assert stranger.post("/ui/login", json={"code": "guess"}).status_code == 401
        answer = stranger.post("/ui/login", json={"code": code})
        assert answer.status_code == 200 and answer.json() == {"page": "/ui/"}
        attributes = {p.strip().lower() for p in answer.headers["set-cookie"].split(";")}
        assert {"httponly", "samesite=strict", "path=/"} <= attributes
        assert stranger.get("/api/v1/status").status_code == 200  # the cookie it was given
    with httpx2.Client(base_url=http.base_url) as other:
        assert other.post("/ui/login", json={"code": code}).status_code == 401  # used once
        assert other.cookies == {} or not dict(other.cookies)


def test_indexer_open_prints_a_working_login_link(
    http: httpx2.Client, guarded: RunningIndexer, tmp_path: Path
) -> None:
    def run_open(workspace: Path) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "indexer", "open", "--workspace", str(workspace), "--print"],
            capture_output=True,
            text=True,
            timeout=30,
        )

    done = run_open(guarded.workspace)
    assert done.returncode == 0, done.stderr
    url = done.stdout.strip()
    assert url.startswith(str(http.base_url).rstrip("/") + "/ui/login?code=")
    assert http.get(url.removeprefix(str(http.base_url).rstrip("/"))).status_code == 303
    missing = run_open(tmp_path / "nothing-here")
    assert missing.returncode == 2 and "no workspace at" in missing.stderr


def test_a_login_link_body_must_be_a_json_object_or_nothing(http: httpx2.Client) -> None:
    """Found by the schemathesis run: a body of white space was taken for no body."""
    json_type = BEARER | {"Content-Type": "application/json"}
    for body in (b"\n", b" ", b"[]", b"null", b'{"x": 1}'):
        answer = http.post("/api/v1/login-link", content=body, headers=json_type)
        assert answer.status_code == 400, body
        assert answer.json()["error"]["code"] == "invalid_argument"
    assert http.post("/api/v1/login-link", content=b"", headers=json_type).status_code == 200


@pytest.mark.parametrize("url", ["/api/v1/en/notes/a%0Ab.md", "/api/v1/en%0A/notes", "/api/v1/%0A"])
def test_a_line_feed_in_an_api_path_gets_the_json_refusal(http: httpx2.Client, url: str) -> None:
    """No route pattern matches a line feed: it met the outer app's plain-text 404 (the
    page then showed 'internal: Not Found')."""
    answer = http.get(url, headers=BEARER)
    assert answer.status_code == 403, answer.text
    assert answer.json()["error"]["code"] == "forbidden_path"
    with httpx2.Client(base_url=http.base_url) as stranger:  # no login cookie
        assert stranger.get(url).status_code == 401  # the token is asked first
