"""MCP protocol conformance of a real ``indexer serve``, as a strict client sees it: each
tool's schemas are JSON Schema and its answers match them; a call of a tool that is not
there is refused with a SPEC code; a POST body that is no JSON-RPC message, or is not
sent as JSON, gets a JSON-RPC error in one line (the library's answers were a page of
pydantic errors under the wrong code, and a bare text 400); the server serves after.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx2
import jsonschema
import pytest
from helpers.indexer_process import RunningIndexer, start_indexer, vault_dir
from helpers.raw_mcp import HEADERS, initialize

NOTES = {
    "en": ("items/cats.md", "# Cats\n\nCats sleep a lot.\n", "cats"),
    "zh": ("items/mao.md", "# 猫\n\n猫喜欢睡觉。\n", "猫"),
    "ar": ("items/qitta.md", "# قطط\n\nالقطط تنام كثيرا.\n", "القطط"),
}
NOT_A_MESSAGE = [
    b"42",
    b'"ping"',
    b"null",
    b'{"id": 3, "method": "ping"}',
    b'{"jsonrpc": "1.0", "id": 3, "method": "ping"}',
    b'{"jsonrpc": "2.0", "id": 3}',
    b'{"jsonrpc": "2.0", "id": 3, "method": 5}',
    b'{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": 5}',
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningIndexer]:
    ws = tmp_path_factory.mktemp("conformance") / "ws"
    for lang, (path, text, _) in NOTES.items():
        note = ws / "memory" / "languages" / lang / "vault" / path
        note.parent.mkdir(parents=True)
        note.write_text(text, encoding="utf-8")
    running = start_indexer(ws)
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
async def session(server: RunningIndexer) -> AsyncIterator[tuple[httpx2.AsyncClient, dict]]:
    """An HTTP client and the headers of a session it opened (past ``initialized``)."""
    async with httpx2.AsyncClient(timeout=10) as http:
        opened = await http.post(server.url, json=initialize("strict"), headers=HEADERS)
        headers = {**HEADERS, "Mcp-Session-Id": opened.headers["mcp-session-id"]}
        done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await http.post(server.url, json=done, headers=headers)).status_code == 202
        yield http, headers


async def ask(http: httpx2.AsyncClient, url: str, headers: dict, method: str, **params: Any):
    body = {"jsonrpc": "2.0", "id": 9, "method": method, "params": params}
    answer = await http.post(url, json=body, headers=headers)
    assert answer.status_code == 200, answer.text[:300]
    return answer.json()


async def test_every_answer_matches_its_tool_schema(
    server: RunningIndexer, session: tuple[httpx2.AsyncClient, dict]
) -> None:
    """Successes and refusals of tools in three languages, as a strict client checks them."""
    http, headers = session
    listed = await ask(http, server.url, headers, "tools/list")
    tools = {tool["name"]: tool for tool in listed["result"]["tools"]}
    for tool in tools.values():
        jsonschema.Draft202012Validator.check_schema(tool["inputSchema"])
        jsonschema.Draft202012Validator.check_schema(tool["outputSchema"])
    calls: list[tuple[str, dict[str, Any], bool]] = [("status", {}, True)]
    for lang, (path, _, word) in NOTES.items():
        calls += [
            ("read", {"lang": lang, "path": path}, True),
            ("stat", {"lang": lang, "path": path}, True),
            ("find", {"lang": lang}, True),
            ("grep", {"lang": lang, "pattern": word, "fixed": True}, True),
            ("search", {"lang": lang, "query": word}, True),
            ("recall", {"lang": lang, "query": word}, True),
            ("summary", {"lang": lang}, True),
            ("history", {"lang": lang, "path": path}, True),
            ("read", {"lang": lang, "path": "none.md"}, False),
            ("read", {"lang": lang, "path": "../x.md"}, False),
            ("grep", {"lang": lang, "pattern": "("}, False),
            ("write", {"lang": lang, "path": path, "content": "# x\n", "if_match": ""}, False),
            ("read", {"lang": lang}, False),
        ]
    for name, arguments, works in calls:
        result = (
            await ask(http, server.url, headers, "tools/call", name=name, arguments=arguments)
        )["result"]
        text = result["content"][0]["text"]
        assert result["isError"] is not works, (name, arguments, text)
        if works:
            jsonschema.validate(result["structuredContent"], tools[name]["outputSchema"])
            assert json.loads(text) == result["structuredContent"], name
        else:
            assert text.split(":", 1)[0] in {
                "not_found",
                "forbidden_path",
                "invalid_argument",
                "conflict",
            }, text


async def test_a_tool_that_is_not_there_is_refused_with_a_code(
    server: RunningIndexer, session: tuple[httpx2.AsyncClient, dict]
) -> None:
    """The library's words were "Unknown tool: 'rm'": no SPEC code to read."""
    http, headers = session
    for name in ["rm", "Read", "x" * 300]:
        answer = await ask(http, server.url, headers, "tools/call", name=name, arguments={})
        result = answer["result"]
        assert result["isError"] is True
        said = result["content"][0]["text"]
        assert said.startswith("invalid_argument: there is no tool named "), said
        assert repr(name[:100]) in said and len(said) < 200, said
    async with server.client() as client:  # (fastmcp's client: a result, not an exception)
        called = await client.call_tool("rm", {}, raise_on_error=False)
    assert called.is_error and called.content[0].text.startswith("invalid_argument: ")


@pytest.mark.parametrize("body", NOT_A_MESSAGE)
async def test_a_body_that_is_no_message_is_an_invalid_request(
    server: RunningIndexer, session: tuple[httpx2.AsyncClient, dict], body: bytes
) -> None:
    """JSON-RPC's -32600 in one line; it was -32602 and ~1 KB of pydantic's errors."""
    http, headers = session
    answer = await http.post(server.url, content=body, headers=headers)
    assert answer.status_code == 400, answer.text[:300]
    assert answer.headers["content-type"] == "application/json"
    error = answer.json()
    assert error["id"] is None and error["error"]["code"] == -32600, error
    said = error["error"]["message"]
    assert said.startswith("invalid_argument: the body is not a JSON-RPC 2.0 message"), said
    assert "pydantic" not in said and len(said) < 300, said
    still = await ask(http, server.url, headers, "ping")
    assert still["result"] == {}


async def test_other_refusals_of_the_library_are_left_as_they_were(
    server: RunningIndexer, session: tuple[httpx2.AsyncClient, dict]
) -> None:
    """Only that answer is rewritten: a parse error, a missing session, an unknown method
    and an unknown prompt keep the library's words and codes."""
    http, headers = session
    broken = await http.post(server.url, content=b'{"jsonrpc":', headers=headers)
    assert broken.status_code == 400 and broken.json()["error"]["code"] == -32700
    anonymous = {k: v for k, v in headers.items() if k != "Mcp-Session-Id"}
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    missing = await http.post(server.url, json=ping, headers=anonymous)
    assert missing.status_code == 400 and "Missing session ID" in missing.text
    unknown = await ask(http, server.url, headers, "foo/bar")
    assert unknown["error"]["code"] == -32601
    prompt = await ask(http, server.url, headers, "prompts/get", name="nope")
    assert prompt["error"] == {"code": -32602, "message": "Unknown prompt: 'nope'"}


@pytest.mark.parametrize("content_type", [None, "text/plain", "application/x-www-form-urlencoded"])
async def test_a_body_not_sent_as_json_is_415_with_a_jsonrpc_error(
    server: RunningIndexer, session: tuple[httpx2.AsyncClient, dict], content_type: str | None
) -> None:
    """The library answered a 400 whose body was the bare text "Invalid Content-Type
    header", with no content type: nothing a JSON-RPC client can read."""
    http, headers = session
    sent = {k: v for k, v in headers.items() if k != "Content-Type"}
    if content_type is not None:
        sent["Content-Type"] = content_type
    call = {"jsonrpc": "2.0", "id": 4, "method": "tools/call"}
    call["params"] = {
        "name": "write",
        "arguments": {"lang": "en", "path": "form.md", "content": "x"},
    }
    answer = await http.post(server.url, content=json.dumps(call).encode(), headers=sent)
    assert answer.status_code == 415, answer.text[:300]
    said = answer.json()["error"]["message"]
    assert said.startswith("unsupported_media_type: a body with "), said
    assert said.endswith("send the JSON-RPC message as application/json")
    assert not (vault_dir(server, "en") / "form.md").exists()
    charset = {**headers, "Content-Type": "application/json; charset=utf-8"}
    still = await http.post(
        server.url, json={**call, "params": {"name": "status"}}, headers=charset
    )
    assert still.json()["result"]["isError"] is False


def test_the_log_holds_no_traceback(server: RunningIndexer) -> None:
    """(Last: every test above ran against this server.)"""
    log = server.log()
    assert "Traceback" not in log and " 500 " not in log, log[-3000:]
