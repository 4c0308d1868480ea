"""The DNS-rebinding guard's Host and Origin match, exact, against a real ``indexer serve``.

fastmcp's guard compared names only: ``Host: 127.0.0.1:PORT@evil.com`` and ``Origin:
http://127.0.0.1:PORT.evil.com`` passed (and any port of a loopback name), on every
route. Requests are raw (``http.client``, the hostile header as it is sent); each
refusal is the guard's (421 or 403), the API's in its JSON error body, and changes
nothing.
"""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from helpers.indexer_process import RunningIndexer, start_indexer, vault_dir
from helpers.raw_mcp import HEADERS, initialize

TOKEN = "s3cret-token-for-host-tests"
BEARER = {"Authorization": f"Bearer {TOKEN}"}
ENV = {
    "INDEXER_ALLOWED_HOSTS": "vault.example, proxy.example:9443",
    "INDEXER_ALLOWED_ORIGINS": "https://app.example,http://tool.example:3000",
}
ROUTES = ("/api/v1/status", "/mcp", "/ui/", "/health")
Answer = tuple[int, dict[str, str], bytes]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningIndexer]:
    running = start_indexer(tmp_path_factory.mktemp("hosts") / "ws", "--token", TOKEN, env=ENV)
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="module")
def port(server: RunningIndexer) -> int:
    served = urlsplit(server.url).port
    assert served is not None
    return served


def send(
    port: int,
    method: str,
    path: str,
    headers: list[tuple[str, str]],
    body: bytes | None = None,
) -> Answer:
    """One request with exactly these headers (no Host of http.client's own)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for name, value in headers:
            connection.putheader(name, value)
        if body is not None:
            connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body)
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def get(port: int, path: str, host: str | None, origin: str | None = None) -> Answer:
    headers = [("Host", host)] if host is not None else []
    headers += [("Origin", origin)] if origin is not None else []
    return send(port, "GET", path, [*headers, *BEARER.items()])


def assert_refused(answer: Answer, path: str, status: int) -> None:
    """The guard's refusal: on the API its error body, elsewhere its words; with the
    security headers every answer has."""
    got, headers, body = answer
    assert got == status, (path, got, body[:200])
    assert headers["x-content-type-options"] == "nosniff", path
    if path.startswith("/api/v1"):
        code = {421: "misdirected_request", 403: "forbidden_origin"}[status]
        assert headers["content-type"] == "application/json"
        assert json.loads(body)["error"]["code"] == code
        assert b"evil" not in body
    else:
        assert body == {421: b"Misdirected Request", 403: b"Forbidden Origin"}[status]


def hostile_hosts(port: int) -> list[str]:
    other = port + 1 if port < 65535 else port - 1
    return [
        f"127.0.0.1:{port}@evil.com",  # (passed: the guard kept what precedes the colon)
        f"localhost:{port}@evil.com",
        f"127.0.0.1:{port}.evil.com",
        f"127.0.0.1:{port}:{port}",
        f"127.0.0.1:{port}/x",
        f"127.0.0.1:{port} evil.com",
        f"user@127.0.0.1:{port}",
        f"127.0.0.1:{other}",  # another port of a loopback name
        f"localhost:{other}",
        f"[::1]:{other}",
        f"127.0.0.1:0{port}0",
        "127.0.0.1",  # no port: 80, not the served one
        "localhost",
        "127.0.0.1:",
        f"::1:{port}",  # IPv6 without brackets
        f"[::1%eth0]:{port}",
        f"localhost.:{port}",  # a trailing dot: another name
        f"127.0.0.1.:{port}",
        f"evil.com:{port}",
        f"vault.example:{other}",  # a configured name without a port: the served one
        f"vault.example.:{port}",
        f"evil.vault.example:{port}",
        f"vault.example:{port}@evil.com",
        f"proxy.example:{port}",  # configured with a port: that one only
        "proxy.example",
        "",
    ]


def test_hosts_that_are_not_exactly_this_servers_are_refused_on_every_route(port: int) -> None:
    for host in hostile_hosts(port):
        for path in ROUTES:
            assert_refused(get(port, path, host), path, 421)


def test_a_request_without_host_is_refused(port: int) -> None:
    """HTTP/1.0 needs no Host: the server lets it through to the guard, which refuses."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(b"GET /health HTTP/1.0\r\n\r\n")
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 421 ") and answer.endswith(b"Misdirected Request")


def test_hosts_this_server_answers_to_pass(port: int) -> None:
    for host in (
        f"127.0.0.1:{port}",
        f"localhost:{port}",
        f"LocalHost:{port}",  # a host name's case is not part of it
        f"[::1]:{port}",
        f"vault.example:{port}",
        f"VAULT.example:{port}",
        "vault.example",  # a reverse proxy passing its own Host on
        "proxy.example:9443",
    ):
        for path in ROUTES:
            status = get(port, path, host)[0]
            assert status not in (421, 403), (host, path, status)


def hostile_origins(port: int) -> list[str]:
    other = port + 1 if port < 65535 else port - 1
    return [
        f"http://127.0.0.1:{port}.evil.com",  # (passed: a loopback hostname, any port)
        f"http://localhost:{port}.evil.com",
        f"http://127.0.0.1:{port}@evil.com",
        f"http://127.0.0.1:{other}",  # another program's page on this machine
        "http://localhost:3000",
        f"https://127.0.0.1:{port}",  # another scheme: another origin
        "http://127.0.0.1",
        f"http://127.0.0.1:{port}/",
        f"http://127.0.0.1:{port}/x",
        f"http://localhost.:{port}",
        "null",  # a sandboxed frame or a file
        "",
        "evil.com",
        "http://evil.com",
        "https://app.example:8443",  # configured without a port: the default one
        "http://app.example",
        "https://app.example.evil.com",
        "http://tool.example",  # configured with a port: that one only
        "http://tool.example:3000.evil.com",
    ]


def test_origins_that_are_not_exactly_allowed_are_refused_on_every_route(port: int) -> None:
    for origin in hostile_origins(port):
        for path in ROUTES:
            assert_refused(get(port, path, f"127.0.0.1:{port}", origin), path, 403)


def test_two_origins_are_refused(port: int) -> None:
    headers = [("Host", f"127.0.0.1:{port}"), *BEARER.items()]
    two = [("Origin", f"http://127.0.0.1:{port}"), ("Origin", "http://evil.com")]
    assert_refused(send(port, "GET", "/api/v1/status", headers + two), "/api/v1/status", 403)


def test_origins_this_server_allows_pass(port: int) -> None:
    host = f"127.0.0.1:{port}"
    for origin in (
        f"http://127.0.0.1:{port}",  # the page's own
        f"http://localhost:{port}",  # the page opened under another loopback name
        f"http://[::1]:{port}",
        f"HTTP://LOCALHOST:{port}",
        "https://app.example",
        "https://app.example:443",
        "http://tool.example:3000",
    ):
        for path in ROUTES:
            status = get(port, path, host, origin)[0]
            assert status not in (421, 403), (origin, path, status)
    # A configured host's own origin (the page served under that name)
    assert (
        get(port, "/api/v1/status", f"vault.example:{port}", f"http://vault.example:{port}")[0]
        == 200
    )


def test_a_refused_write_changes_nothing(server: RunningIndexer, port: int) -> None:
    """A PUT and an MCP session refused at the door: the note stays as it was, no
    session is opened."""
    note = vault_dir(server, "en") / "kept.md"
    good = [("Host", f"127.0.0.1:{port}"), ("Content-Type", "text/markdown"), *BEARER.items()]
    made = send(port, "PUT", "/api/v1/en/notes/kept.md", good, b"# kept\n")
    assert made[0] in (200, 201), made
    before = note.read_bytes()
    for host, origin in (
        (f"127.0.0.1:{port}@evil.com", None),
        (f"127.0.0.1:{port}", f"http://127.0.0.1:{port}.evil.com"),
        (f"127.0.0.1:{port}", "http://localhost:3000"),
    ):
        hostile = [("Host", host), *BEARER.items()] + ([("Origin", origin)] if origin else [])
        markdown = [*hostile, ("Content-Type", "text/markdown")]
        answer = send(port, "PUT", "/api/v1/en/notes/kept.md", markdown, b"# changed\n")
        assert answer[0] in (421, 403), answer
        body = json.dumps(initialize("hostile")).encode()
        opened = send(port, "POST", "/mcp", [*hostile, *HEADERS.items()], body)
        assert opened[0] in (421, 403) and "mcp-session-id" not in opened[1], opened
    assert note.read_bytes() == before


def test_an_absolute_target_of_another_host_is_misdirected(
    server: RunningIndexer, port: int
) -> None:
    """``GET http://evil.example/api/v1/status`` (RFC 9112's absolute form): its authority
    is the request's host, whatever the Host header says. uvicorn gave the whole target
    as the path: a plain 404 on every route, the guards never told the host."""
    own = f"127.0.0.1:{port}"
    others = [host for host in hostile_hosts(port)[7:-1] if "@" not in host]  # (user info: 400)
    for authority in ["evil.example", f"evil.example:{port}", *others]:
        for path in ROUTES:
            answer = get(port, f"http://{authority}{path}", own)
            assert_refused(answer, path, 421)
    for path in ROUTES:  # another scheme than the connection's is another server
        assert_refused(get(port, f"https://{own}{path}", own), path, 421)
    note = vault_dir(server, "en") / "absolute.md"
    markdown = [("Host", own), ("Content-Type", "text/markdown"), *BEARER.items()]
    refused = send(port, "PUT", "http://evil.example/api/v1/en/notes/absolute.md", markdown, b"#")
    assert refused[0] == 421 and not note.exists(), refused


def test_an_absolute_target_of_this_server_is_served(server: RunningIndexer, port: int) -> None:
    """Its own authority in the target: served as the path alone (the Host header, here
    another's, is ignored as RFC 9112 says)."""
    for authority in (f"127.0.0.1:{port}", f"LocalHost:{port}", f"vault.example:{port}"):
        for host in (f"127.0.0.1:{port}", "evil.example"):
            status, _, body = get(port, f"http://{authority}/api/v1/status", host)
            assert status == 200 and "langs" in json.loads(body), (authority, host, body[:200])
            status, _, body = get(port, f"HTTP://{authority}/health?x=1", host)
            assert status == 200 and json.loads(body)["status"] == "ok", (authority, body)
    note = vault_dir(server, "en") / "absolute-own.md"
    markdown = [("Host", "evil.example"), ("Content-Type", "text/markdown"), *BEARER.items()]
    target = f"http://127.0.0.1:{port}/api/v1/en/notes/absolute-own.md"
    assert send(port, "PUT", target, markdown, b"# own\n")[0] == 201
    assert note.read_bytes().endswith(b"# own\n")


def test_a_target_that_is_no_path_is_refused(port: int) -> None:
    """The asterisk and authority forms, a bare word, user information: 400, in the API's
    error body."""
    own = f"127.0.0.1:{port}"
    for target in ("*", own, "api/v1/status", f"http://user@{own}/api/v1/status", "http:///x"):
        status, headers, body = get(port, target, own)
        assert status == 400, (target, status, body[:200])
        assert json.loads(body)["error"]["code"] == "invalid_argument"
        assert headers["x-content-type-options"] == "nosniff"
