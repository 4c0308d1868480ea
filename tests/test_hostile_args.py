"""Arguments that used to break the error contract: lone UTF-16 surrogates, 10,000 tags.

Every refusal is a coded tool error (never an uncoded one or ``internal``), changes
nothing, and the DEBUG line of the call is still written.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from fastmcp import Client
from fastmcp.exceptions import ToolError
from helpers.history import vault_with_history
from helpers.snapshots import snapshot
from starlette.applications import Starlette

from indexer.core import Core
from indexer.index.service import NoteIndex
from indexer.settings import Settings
from indexer.vault.sandbox import Sandbox
from indexer.vault.vault import Vault
from indexer.web.app import build_app
from indexer.web.mcp import create_server
from shared.errors import InvalidArgumentError
from shared.utf8 import field_not_text
from shared.workspace import Workspace

LONE = "\ud800"
# Each tool with its string arguments (a lone surrogate goes into each one in turn).
CALLS: list[tuple[str, dict[str, object]]] = [
    ("read", {"lang": "en", "path": "a.md"}),
    ("write", {"lang": "en", "path": "a.md", "content": "# a\n", "if_match": "x"}),
    ("stat", {"lang": "en", "path": "a.md"}),
    ("append", {"lang": "en", "path": "a.md", "content": "more\n"}),
    ("find", {"lang": "en", "pattern": "**/*.md", "path": ""}),
    ("grep", {"lang": "en", "pattern": "alpha", "path": "", "glob": "**/*.md"}),
    ("delete", {"lang": "en", "path": "a.md"}),
    ("search", {"lang": "en", "query": "alpha", "type": "note", "path": ""}),
]
CASES = [
    (tool, key)
    for tool, args in CALLS
    for key, value in args.items()
    if isinstance(value, str) and key != "lang"
] + [("search", "tags")]


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[tuple[Client, Path]]:
    ws = Workspace(tmp_path / "ws")
    settings = Settings(workspace=ws, max_file_bytes=1 << 20)
    vault = Vault(Sandbox(ws), max_file_bytes=settings.max_file_bytes)
    vault.write("en", "a.md", "# a\nalpha\n")
    index = NoteIndex(ws)
    index.open()
    index.reconcile()
    vault.listeners.append(index.note_changed)
    try:
        async with Client(create_server(Core(settings, vault, index))) as client:
            yield client, tmp_path
    finally:
        index.close()


class StrictStream(logging.StreamHandler):  # type: ignore[type-arg]
    """A handler writing UTF-8 strictly, as a log file or a journal does; remembers errors."""

    def __init__(self) -> None:
        super().__init__(io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict"))
        self.failed = 0

    def handleError(self, record: logging.LogRecord) -> None:
        self.failed += 1


@pytest.mark.parametrize(("tool", "key"), CASES)
async def test_a_lone_surrogate_is_an_invalid_argument(
    rig: tuple[Client, Path], tool: str, key: str
) -> None:
    client, root = rig
    args = dict(next(args for name, args in CALLS if name == tool))
    args[key] = [f"tag{LONE}"] if key == "tags" else f"x{LONE}y"
    handler = StrictStream()
    logger = logging.getLogger("indexer.tools")
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.DEBUG)
    before = snapshot(root)
    try:
        with pytest.raises(ToolError) as info:
            await client.call_tool(tool, args)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    text = str(info.value)
    assert text.startswith(("invalid_argument: ", "forbidden_path: ")), text
    assert snapshot(root) == before
    assert handler.failed == 0, "the DEBUG line of the call could not be written"


async def test_ten_thousand_tags_are_an_invalid_argument(rig: tuple[Client, Path]) -> None:
    client, _ = rig
    tags = [f"t{n}" for n in range(10_000)]
    with pytest.raises(ToolError) as info:
        await client.call_tool("search", {"lang": "en", "query": "alpha", "tags": tags})
    assert str(info.value).startswith("invalid_argument: "), str(info.value)
    found = await client.call_tool("search", {"lang": "en", "query": "alpha", "tags": ["x"] * 50})
    assert found.structured_content is not None


async def test_a_blank_tag_is_an_invalid_argument(rig: tuple[Client, Path]) -> None:
    """It matched no note, silently (as a blank type did before it was refused)."""
    client, _ = rig
    with pytest.raises(ToolError) as info:
        await client.call_tool("search", {"lang": "en", "query": "alpha", "tags": [""]})
    assert str(info.value).startswith("invalid_argument: "), str(info.value)


async def test_a_search_folder_outside_the_vault_is_refused(rig: tuple[Client, Path]) -> None:
    """Every other tool refused ``../``; search ran and found nothing."""
    client, _ = rig
    for path in ("../", "x/../../y", "/etc", "~"):
        with pytest.raises(ToolError) as info:
            await client.call_tool("search", {"lang": "en", "query": "alpha", "path": path})
        assert str(info.value).startswith("forbidden_path: "), path


HUGE = 2**63  # one past SQLite's largest INTEGER
# Each tool with a whole-number argument; the huge number goes into each one in turn.
NUMBERS: list[tuple[str, dict[str, object], str]] = [
    ("read", {"lang": "en", "path": "a.md"}, "version"),
    ("read", {"lang": "en", "path": "a.md"}, "offset"),
    ("read", {"lang": "en", "path": "a.md"}, "limit"),
    ("diff", {"lang": "en", "path": "a.md", "from_version": 1}, "from_version"),
    ("diff", {"lang": "en", "path": "a.md", "from_version": 1}, "to_version"),
    ("restore", {"lang": "en", "path": "a.md"}, "version"),
    ("history", {"lang": "en", "path": "a.md"}, "limit"),
    ("search", {"lang": "en", "query": "alpha"}, "offset"),
    ("search", {"lang": "en", "query": "alpha"}, "limit"),
    ("find", {"lang": "en", "pattern": "**/*.md"}, "limit"),
    ("grep", {"lang": "en", "pattern": "alpha"}, "limit"),
]


@pytest.mark.parametrize(("tool", "args", "key"), NUMBERS)
@pytest.mark.parametrize("number", [HUGE, -HUGE - 1, 10**22])
async def test_a_number_sqlite_cannot_hold_is_an_invalid_argument(
    rig: tuple[Client, Path], tool: str, args: dict[str, object], key: str, number: int
) -> None:
    """It used to overflow in SQLite (``internal``); now it is refused before the tool."""
    client, root = rig
    assert tool in {t.name for t in await client.list_tools()}
    before = snapshot(root)
    with pytest.raises(ToolError) as info:
        await client.call_tool(tool, {**args, key: number})
    assert str(info.value).startswith("invalid_argument: "), str(info.value)
    assert f"'{key}'" in str(info.value) and "out of range" in str(info.value)
    assert snapshot(root) == before
    largest = {**args, key: 2**63 - 1}  # the largest that fits is the tool's to judge
    judged = await client.call_tool(tool, largest, raise_on_error=False)
    if judged.is_error:  # a refusal with its code (too big a limit, no such version)
        text = judged.content[0].text  # type: ignore[union-attr]
        assert text.split(":")[0] in {"invalid_argument", "not_found"}, text


VaultCall = Callable[[Vault, str], object]
# Each vault method with a lone surrogate in one of its string arguments, and the name the
# refusal gives it: for a caller that is no transport (the CLI, a job), the vault refuses
# it itself. (Content raised UnicodeEncodeError, a glob too or matched nothing, an etag
# was a conflict, a reason "the control or invisible character U+D800".)
CORE: dict[str, tuple[VaultCall, str]] = {
    "write content": (lambda v, e: v.write("en", "a.md", f"# a\n{LONE}\n"), "content"),
    "write reason": (lambda v, e: v.write("en", "a.md", "# b\n", reason=LONE), "reason"),
    "write if_match": (lambda v, e: v.write("en", "a.md", "# b\n", if_match=e + LONE), "if_match"),
    "append content": (lambda v, e: v.append("en", "a.md", f"x{LONE}\n"), "content"),
    "append if_match": (lambda v, e: v.append("en", "a.md", "x\n", if_match=LONE), "if_match"),
    "find pattern": (lambda v, e: v.find("en", f"**/*{LONE}.md"), "the glob pattern"),
    "grep glob": (lambda v, e: v.grep("en", "alpha", "", f"{LONE}*"), "the glob pattern"),
    "move if_match": (lambda v, e: v.move("en", "a.md", "b.md", LONE), "if_match"),
    "move reason": (lambda v, e: v.move("en", "a.md", "b.md", reason=LONE), "reason"),
    "delete if_match": (lambda v, e: v.delete("en", "a.md", if_match=LONE), "if_match"),
    "restore if_match": (lambda v, e: v.restore("en", "a.md", 1, if_match=LONE), "if_match"),
}


@pytest.mark.parametrize("case", CORE)
def test_the_vault_itself_refuses_a_lone_surrogate_by_name(tmp_path: Path, case: str) -> None:
    call, name = CORE[case]
    with vault_with_history(tmp_path, 1 << 20) as vault:
        etag = vault.write("en", "a.md", "# a\nalpha\n")["etag"]
        before = snapshot(tmp_path / "ws/memory"), vault.history("en", "a.md")
        with pytest.raises(InvalidArgumentError) as info:
            call(vault, etag)
        assert (snapshot(tmp_path / "ws/memory"), vault.history("en", "a.md")) == before
    assert str(info.value).startswith(f"invalid_argument: {name} is not valid text: "), info.value
    assert "lone surrogate" in str(info.value)


TOKEN = "tok-" + "s" * 32
Answer = tuple[int, dict[str, Any]]


@contextlib.asynccontextmanager
async def served(tmp_path: Path) -> AsyncIterator[Starlette]:
    """The whole app (token set), its lifespan running, served in-process as ASGI (in the
    test's own task: the lifespan's task group must be left where it was entered)."""
    ws = Workspace(tmp_path / "ws")
    settings = Settings(workspace=ws, max_file_bytes=1 << 20, token=TOKEN)
    vault = Vault(Sandbox(ws), max_file_bytes=settings.max_file_bytes)
    vault.write("en", "a.md", "# a\nalpha\n")
    app = build_app(Core(settings, vault, None))
    async with app.router.lifespan_context(app):
        yield app


async def post_mcp(
    app: Starlette, message: dict[str, Any], *, token: str | None = TOKEN, session: str = ""
) -> tuple[int, dict[str, Any], dict[bytes, bytes]]:
    """POST one JSON-RPC message to /mcp as ``json.dumps`` writes it (a lone surrogate as
    its escape, ``\\ud800``): the status, the JSON answered and the headers."""
    return await post_raw(app, json.dumps(message).encode(), token=token, session=session)


async def post_raw(
    app: Starlette, body: bytes, *, token: str | None = TOKEN, session: str = ""
) -> tuple[int, dict[str, Any], dict[bytes, bytes]]:
    """POST ``body`` to /mcp: the status, the JSON answered and the headers."""
    headers = [
        (b"host", b"127.0.0.1"),
        (b"content-type", b"application/json"),
        (b"accept", b"application/json, text/event-stream"),
        (b"content-length", b"%d" % len(body)),
        (b"mcp-protocol-version", b"2025-11-25"),
    ]
    headers += [(b"authorization", f"Bearer {token}".encode())] if token else []
    headers += [(b"mcp-session-id", session.encode())] if session else []
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST"}
    scope |= {"scheme": "http", "path": "/mcp", "raw_path": b"/mcp", "root_path": ""}
    scope |= {"query_string": b"", "headers": headers, "client": ("127.0.0.1", 1)}
    scope |= {"server": ("127.0.0.1", 80)}
    messages = [{"type": "http.request", "body": body, "more_body": False}]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop()
        await anyio.sleep_forever()  # (the client stays: the call is not cancelled)
        raise AssertionError("unreachable")

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    start = next(m for m in sent if m["type"] == "http.response.start")
    data = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], json.loads(data) if data else {}, dict(start["headers"])


def tool_call(name: str, arguments: dict[str, Any], call_id: int = 7) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": call_id, "method": "tools/call", "params": params}


async def open_session(app: Starlette) -> str:
    client = {"name": "raw", "version": "0"}
    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": client}
    start = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
    status, _, headers = await post_mcp(app, start)
    assert status == 200, status
    session = headers[b"mcp-session-id"].decode()
    done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await post_mcp(app, done, session=session))[0] == 202
    return session


HTTP_CASES = [
    ("grep", {"lang": "en", "pattern": "alpha", "path": f"x{LONE}"}, "path"),
    ("grep", {"lang": "en", "pattern": "alpha", "glob": f"**/*{LONE}"}, "glob"),
    ("grep", {"lang": "en", "pattern": f"al{LONE}"}, "pattern"),
    ("write", {"lang": "en", "path": "new.md", "content": f"# n\n{LONE}\n"}, "content"),
    ("write", {"lang": "en", "path": f"n{LONE}.md", "content": "# n\n"}, "path"),
    ("append", {"lang": "en", "path": "a.md", "content": "x\udfff"}, "content"),
    ("move", {"lang": "en", "path": "a.md", "new_path": f"b{LONE}.md"}, "new_path"),
]


@pytest.mark.parametrize(("tool", "args", "key"), HTTP_CASES)
async def test_over_http_a_lone_surrogate_is_a_tool_error_naming_the_argument(
    tmp_path: Path, tool: str, args: dict[str, Any], key: str
) -> None:
    """The MCP library's JSON parser refused the whole body: HTTP 400, a JSON-RPC parse
    error without an id ("unexpected end of hex escape"), which no client could tie to
    its call. It is the tool boundary's refusal now, after the token check."""
    async with served(tmp_path) as app:
        session = await open_session(app)
        before = snapshot(tmp_path)
        unauthorized = await post_mcp(app, tool_call(tool, args), token=None, session=session)
        status, answer, _ = await post_mcp(app, tool_call(tool, args), session=session)
    assert unauthorized[0] == 401
    assert status == 200 and answer["id"] == 7, answer
    assert answer["result"]["isError"] is True
    assert answer["result"]["content"][0]["text"] == (
        f"invalid_argument: the argument {key!r} is not valid Unicode text (it holds a lone"
        " UTF-16 surrogate, which no file or index can store)"
    )
    assert snapshot(tmp_path) == before


async def test_over_http_escaped_pairs_pass_and_other_requests_are_refused_by_name(
    tmp_path: Path,
) -> None:
    emoji = tool_call("write", {"lang": "en", "path": "e.md", "content": "# e 😀\n"})
    named = tool_call(f"gr{LONE}ep", {"lang": "en", "pattern": "alpha"})
    read = {"jsonrpc": "2.0", "id": 8, "method": "resources/read", "params": {"uri": LONE}}
    async with served(tmp_path) as app:
        session = await open_session(app)
        status, written, _ = await post_mcp(app, emoji, session=session)  # (\\ud83d\\ude00)
        before = snapshot(tmp_path)
        misnamed = (await post_mcp(app, named, session=session))[1]
        unread = (await post_mcp(app, read, session=session))[1]
        assert snapshot(tmp_path) == before
    assert status == 200 and written["result"]["isError"] is False, written
    assert "# e 😀" in (tmp_path / "ws/memory/languages/en/vault/e.md").read_text()
    assert misnamed["result"]["content"][0]["text"].startswith(
        "invalid_argument: the request's 'name' is not valid Unicode text"
    )
    assert unread["id"] == 8 and unread["error"]["message"].startswith(
        "invalid_argument: the request's 'uri' is not valid Unicode text"
    )


def test_a_lone_surrogate_nested_deeper_than_python_recurses_is_still_named() -> None:
    """The walk over every string of a value recursed: a lone surrogate nested deeper
    than Python's recursion limit raised ``RecursionError`` (for the REST bodies and the
    MCP arguments alike), where its refusal was due."""
    deep: object = [LONE]
    for _ in range(3 * sys.getrecursionlimit()):
        deep = [deep]
    assert field_not_text({"ok": "text", "x": {"y": deep}}) == "x"
    assert field_not_text({"x": [[["text"]]], "y": "😀"}) is None


async def test_over_http_a_deeply_nested_lone_surrogate_is_refused_or_left_to_the_parser(
    tmp_path: Path,
) -> None:
    """A body nested just below the depth where ``json.loads`` gives up (which depth that
    is depends on the stack below the app): ``json.loads`` read it, and the check of its
    strings raised ``RecursionError``, a 500 and uvicorn's traceback. Each depth is now
    the refusal or, deeper, the MCP library's own parse error."""
    async with served(tmp_path) as app:
        session = await open_session(app)
        for depth in range(850, 1050):
            nested = "[" * depth + json.dumps(LONE) + "]" * depth
            call = tool_call("grep", {"lang": "en", "pattern": "alpha", "x": 0}, depth)
            body = json.dumps(call).replace("0}", nested + "}", 1)
            status, answer, _ = await post_raw(app, body.encode(), session=session)
            assert status in (200, 400), (depth, status)
            if status == 200:
                assert answer["id"] == depth and answer["result"]["isError"] is True
                assert "the argument 'x' is not valid Unicode text" in str(answer)
