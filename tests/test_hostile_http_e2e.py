"""Hostile and broken MCP clients over raw HTTP against a real ``indexer serve``: odd
JSON-RPC ids, lone surrogates where no argument is, a session of another server, a body
past the cap whose id is no JSON. Each gets a clear answer (the call's id where there
is one), nothing is written for a refused call, and the log holds no traceback.
"""

from __future__ import annotations

import gzip
import json
import socket
import zlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx2
import pytest
from helpers.indexer_process import RunningIndexer, start_indexer, vault_dir
from helpers.raw_mcp import HEADERS, initialize
from helpers.snapshots import snapshot

from indexer.web.limits import body_cap

MAX_FILE_BYTES = 4096
INITIALIZE = initialize("hostile")
LONE = "\ud800"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningIndexer]:
    ws = tmp_path_factory.mktemp("hostile") / "ws"
    running = start_indexer(ws, env={"INDEXER_MAX_FILE_BYTES": str(MAX_FILE_BYTES)})
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
async def session(server: RunningIndexer) -> AsyncIterator[tuple[httpx2.AsyncClient, dict]]:
    """An HTTP client and the headers of a session it opened (past ``initialized``)."""
    async with httpx2.AsyncClient(timeout=10) as http:
        opened = await http.post(server.url, json=INITIALIZE, headers=HEADERS)
        headers = {**HEADERS, "Mcp-Session-Id": opened.headers["mcp-session-id"]}
        done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await http.post(server.url, json=done, headers=headers)).status_code == 202
        yield http, headers


def write_call(path: str, content: str = "# n\n", call_id: str = "7") -> bytes:
    """A ``write`` of ``path`` as raw JSON, its id spelled ``call_id`` as it is."""
    arguments = {"lang": "en", "path": path, "content": content}
    params = json.dumps({"name": "write", "arguments": arguments})
    return f'{{"jsonrpc":"2.0","id":{call_id},"method":"tools/call","params":{params}}}'.encode()


def strict_json(text: str) -> Any:
    """``text`` as JSON, refusing what is none (NaN, Infinity) as a client's parser does."""

    def no_constant(name: str) -> None:
        raise ValueError(f"{name} is no JSON")

    return json.loads(text, parse_constant=no_constant)


ODD_IDS = ["null", "1.5", "1.0", "1e400", "NaN", "true", '{"a": 1}', "[1]"]


@pytest.mark.parametrize("call_id", ODD_IDS)
async def test_a_call_whose_id_is_no_id_is_refused_not_swallowed(
    server: RunningIndexer, session: tuple[httpx2.AsyncClient, dict], call_id: str
) -> None:
    """The MCP library took such a call for a notification: 202, nothing done, and the
    client waited for an answer that never came. MCP's ids are strings and integers."""
    http, headers = session
    before = snapshot(server.workspace / "memory")
    body = write_call("odd.md", call_id=call_id)
    answer = await http.post(server.url, content=body, headers=headers)
    assert answer.status_code == 400, (answer.status_code, answer.text[:200])
    error = strict_json(answer.text)
    assert error["id"] is None
    assert error["error"]["message"] == (
        "invalid_argument: the request's id is not a string or a whole number"
    )
    assert snapshot(server.workspace / "memory") == before


@pytest.mark.parametrize("call_id", ["1e400", "NaN", '{"a": 1}', "true"])
async def test_a_lone_surrogate_refusal_echoes_no_id_that_is_none(
    session: tuple[httpx2.AsyncClient, dict], server: RunningIndexer, call_id: str
) -> None:
    """The refusal echoed any id: ``Infinity`` and ``NaN`` (no JSON: the client's parser
    failed on the answer), an object or ``true``."""
    http, headers = session
    body = write_call("lone.md", content=f"# n\n{LONE}\n", call_id=call_id)
    answer = await http.post(server.url, content=body, headers=headers)
    assert answer.status_code == 400
    assert strict_json(answer.text)["id"] is None
    assert not (vault_dir(server, "en") / "lone.md").exists()


async def test_ids_that_are_ids_pass(
    server: RunningIndexer, session: tuple[httpx2.AsyncClient, dict]
) -> None:
    http, headers = session
    for n, call_id in enumerate(['"x"', "-1", "0", str(10**30)]):
        answer = await http.post(
            server.url, content=write_call(f"id{n}.md", call_id=call_id), headers=headers
        )
        assert answer.status_code == 200 and answer.json()["id"] == json.loads(call_id)
        assert answer.json()["result"]["isError"] is False, answer.text[:300]
    # A notification written with "id": null (JSON-RPC 1.0) is still one
    notification = {"jsonrpc": "2.0", "id": None, "method": "notifications/initialized"}
    answer = await http.post(server.url, json=notification, headers=headers)
    assert answer.status_code == 202, answer.text[:200]


async def test_a_notification_or_an_answer_holding_a_lone_surrogate_is_named(
    server: RunningIndexer, session: tuple[httpx2.AsyncClient, dict]
) -> None:
    """They were the library's parse error: "unexpected end of hex escape"."""
    http, headers = session
    cancelled = {"requestId": 3, "reason": f"gave up {LONE}"}
    notification = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancelled}
    reply = {"jsonrpc": "2.0", "id": 5, "result": {"text": LONE}}
    for message, field in [(notification, "reason"), (reply, "result")]:
        answer = await http.post(server.url, content=json.dumps(message), headers=headers)
        assert answer.status_code == 400
        assert answer.json()["id"] is None
        assert answer.json()["error"]["message"] == (
            f"invalid_argument: the message's {field!r} is not valid Unicode text (it holds"
            " a lone UTF-16 surrogate)"
        )


async def test_a_lone_surrogate_for_a_session_of_another_server_is_404(
    server: RunningIndexer,
) -> None:
    """It was answered as the refusal of a call (200), so its client, whose session was
    gone, heard nothing of it; the 404 tells it to open a new one."""
    headers = {**HEADERS, "Mcp-Session-Id": "f" * 32}
    async with httpx2.AsyncClient(timeout=10) as http:
        body = write_call("other.md", content=f"# n\n{LONE}\n")
        answer = await http.post(server.url, content=body, headers=headers)
    assert answer.status_code == 404, answer.text[:200]
    assert answer.json()["error"]["message"] == "Session not found"


async def test_what_held_already_holds(
    server: RunningIndexer, session: tuple[httpx2.AsyncClient, dict]
) -> None:
    """Escaped pairs are characters; an escaped backslash before ``ud800`` is text; a
    reversed pair, a batch and a chunked body are answered, not run."""
    http, headers = session
    vault = vault_dir(server, "en")
    url = server.url
    pair = write_call("pair.md", content="# 😀\n")  # (json.dumps writes \\ud83d\\ude00)
    written = await http.post(url, content=pair, headers=headers)
    assert written.json()["result"]["isError"] is False
    assert (vault / "pair.md").read_text().endswith("\n# 😀\n")
    backslash = write_call("backslash.md", content="# a\n\\ud800\n")
    assert (await http.post(url, content=backslash, headers=headers)).status_code == 200
    assert (vault / "backslash.md").read_text().endswith("\n# a\n\\ud800\n")
    before = snapshot(server.workspace / "memory")
    reversed_pair = write_call("rev.md", content="# \ude00\ud83d\n")
    answer = (await http.post(url, content=reversed_pair, headers=headers)).json()
    assert answer["id"] == 7 and "'content' is not valid Unicode text" in str(answer)
    batch = b"[" + write_call("b1.md", content=LONE) + b"," + write_call("b2.md") + b"]"
    assert (await http.post(url, content=batch, headers=headers)).status_code == 400
    # A batch of valid calls: refused whole, in words (it was pages of validation errors)
    valid = b" \n[" + write_call("b3.md") + b"," + write_call("b4.md", call_id='"8"') + b"]"
    refused = await http.post(url, content=valid, headers=headers)
    assert refused.status_code == 400 and refused.json()["id"] is None
    said = refused.json()["error"]["message"]
    assert said.startswith("invalid_argument: a JSON-RPC batch") and len(said) < 200, said

    async def chunks() -> AsyncIterator[bytes]:
        body = write_call("c.md", content=f"# {LONE}\n")
        for start in range(0, len(body), 7):
            yield body[start : start + 7]

    answer = await http.post(url, content=chunks(), headers=headers)
    assert answer.json()["id"] == 7 and answer.json()["result"]["isError"] is True
    assert snapshot(server.workspace / "memory") == before


async def test_a_compressed_body_is_refused_as_the_rest_api_does(
    server: RunningIndexer, session: tuple[httpx2.AsyncClient, dict]
) -> None:
    """The library answered "Parse error: expected value at line 1 column 1"."""
    http, headers = session
    before = snapshot(server.workspace / "memory")
    for coding, packed in [("gzip", gzip.compress), ("deflate", zlib.compress)]:
        zipped = {**headers, "Content-Encoding": coding}
        answer = await http.post(server.url, content=packed(write_call("z.md")), headers=zipped)
        assert answer.status_code == 415, answer.text[:200]
        assert answer.json()["error"]["message"] == (
            f"unsupported_media_type: a body with Content-Encoding {coding!r} is not taken:"
            " send it uncompressed"
        )
    assert snapshot(server.workspace / "memory") == before


@pytest.mark.parametrize("call_id", [b'"\\q"', b"007", b'"\\u12"', b'"\xff"', b'"\\ud800"'])
def test_a_body_past_the_cap_whose_id_is_no_json_is_too_large(
    server: RunningIndexer, call_id: bytes
) -> None:
    """The refusal of a body past the cap reads its id with a pattern and parsed what
    it found: an id that looks like one but is no JSON (a bad escape, a leading zero,
    bytes not UTF-8) was a 500 and uvicorn's traceback; a lone surrogate was echoed."""
    pad = b"x" * (body_cap(MAX_FILE_BYTES) + 1)
    body = b'{"jsonrpc":"2.0","id":' + call_id + b',"method":"tools/call","params":{"x":"'
    body += pad + b'"}}'
    port = int(server.url.split(":")[2].split("/")[0])
    head = "".join(f"{name}: {value}\r\n" for name, value in HEADERS.items())
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{head}".encode()
            + b"Content-Length: %d\r\n\r\n" % len(body)
            + body
        )
        answer = b""
        while b"\r\n\r\n" not in answer or not answer.endswith(b"}"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
    status, _, payload = answer.partition(b"\r\n\r\n")
    assert status.startswith(b"HTTP/1.1 200"), answer[:300]
    refusal = strict_json(payload.decode())
    assert refusal["id"] is None
    assert refusal["error"]["message"].startswith("too_large: ")


def test_the_log_holds_no_traceback(server: RunningIndexer) -> None:
    """(Last: every test above ran against this server.)"""
    log = server.log()
    assert "Traceback" not in log and " 500 " not in log, log[-3000:]
