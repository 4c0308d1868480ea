"""Bounds on requests: how many at once, how large, how many large ones, MCP sessions.

``RequestLimits`` (ASGI middleware, inside the Host/Origin guard) reads every request
body itself before the app sees it:

- at most ``max_requests`` requests are in flight; more get a 503 at once (``/health``
  and the sessions' event streams are never refused), whose JSON-RPC error on ``/mcp``
  says ``unavailable`` (the agent client retries it);
- a body over ``body_cap`` (the largest a legitimate call needs: a note of
  ``max_file_bytes`` JSON-escaped) is drained, not kept, and answered ``too_large``:
  a JSON-RPC tool error on ``/mcp``, the REST error body with 413 elsewhere;
- at most ``max_large_bodies`` bodies over ``LARGE_BODY`` bytes are read and handled at
  once: the others wait unread (the kernel and the 64 KiB flow-control buffer hold their
  bytes), so 100 clients sending 4 MiB each cost a few bodies' memory, not 100; after
  the last large one, freed memory is given back to the system (``malloc_trim``);
- a client that goes away mid-body is one debug line, not a traceback; one that goes
  away after its body, before its answer, has its call cancelled.

``tune_mcp_transport`` raises the MCP SDK's own 4 MiB body limit to ``body_cap`` (that
limit answered a plain-text 413, and JSON escaping made a 2.2 MB note of ``"`` lines hit
it), lowers its cap on open sessions and hooks ``sessions.guard_sessions`` (sessions that
never get past ``initialize`` give their place up).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from typing import Any

import anyio.to_thread
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from indexer.idle_trim import give_memory_back
from indexer.web.sessions import guard_sessions
from shared.utf8 import utf8_problem

log = logging.getLogger("indexer.web")

LARGE_BODY = 256 * 1024
JSON_ESCAPE_FACTOR = 6  # a control character becomes \u00XX: six bytes for one
KEEP = 64 * 1024  # of an oversized body, the head and the tail are kept (the JSON-RPC id)
EXEMPT = frozenset({"/health"})
_ID = re.compile(rb'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.){0,200}")\s*[,}]')
_METHOD = re.compile(rb'"method"\s*:\s*"([a-z/_]{1,64})"')


def body_cap(max_file_bytes: int) -> int:
    """The largest request body a legitimate call can need."""
    return max_file_bytes * JSON_ESCAPE_FACTOR + KEEP


class RequestLimits:
    """See the module docstring."""

    def __init__(
        self, app: ASGIApp, *, max_requests: int, max_large_bodies: int, max_body: int
    ) -> None:
        self.app = app
        self.max_requests = max_requests
        self.max_body = max_body
        self._large = asyncio.Semaphore(max_large_bodies)
        self._large_in_flight = 0
        self._in_flight = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in EXEMPT or _event_stream(scope):
            await self.app(scope, receive, send)
            return
        if self._in_flight >= self.max_requests:
            log.warning("refused a request: %d requests are in flight", self._in_flight)
            await reply(send, 503, _busy(scope))
            return
        self._in_flight += 1
        try:
            await self._handle(scope, receive, send)
        finally:
            self._in_flight -= 1

    async def _handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        declared = _content_length(scope)
        if declared is not None and declared > self.max_body and not _mcp(scope):
            # Answered before a byte is read (the connection then closes): the body
            # could only be refused, and a client declaring more than it sends held a
            # large-body place until the body timeout. (``/mcp`` reads on: its refusal
            # carries the request's id, found in the body.)
            await reply(send, 413, _error("too_large", self._too_large_text()))
            return
        if scope["method"] in ("GET", "HEAD", "OPTIONS") and not _has_body(scope):
            await self.app(scope, receive, send)
            return
        if declared is not None and declared <= LARGE_BODY:
            await self._with_body(scope, receive, send)
            return
        await self._large.acquire()  # the others wait here, their bytes unread
        self._large_in_flight += 1
        try:
            await self._with_body(scope, receive, send)
        finally:
            self._large_in_flight -= 1
            self._large.release()
            if self._large_in_flight == 0:
                await anyio.to_thread.run_sync(give_memory_back)

    async def _with_body(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The app on the whole body; cancelled if the client goes away before its answer
        (``_gone``): a client of the newer MCP protocol cancels a call so, and the MCP
        library answering in JSON never reads the stream again to hear it (a search
        moved to a thread ran to its end, its place among those in flight held)."""
        body = await self._read(scope, receive, send)
        if body is None:
            return
        answered = False
        replay = replaying(body, receive)

        async def sending(message: Message) -> None:
            nonlocal answered
            if message["type"] == "http.response.body" and not message.get("more_body"):
                answered = True
            await send(message)

        error: Exception | None = None
        async with anyio.create_task_group() as group:

            async def gone() -> None:
                await receive()  # (after the whole body: only the client's going away)
                if not answered:
                    log.debug("a client went away before its answer: its call is cancelled")
                    group.cancel_scope.cancel()

            group.start_soon(gone)
            try:
                await self.app(scope, replay, sending)
            except Exception as exc:  # (raised as it is after the group, not in one)
                error = exc
            group.cancel_scope.cancel()
        if error is not None:
            raise error

    async def _read(self, scope: Scope, receive: Receive, send: Send) -> bytes | None:
        """The whole body; None when the request was answered (too large) or is gone."""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                log.debug("a client went away in the middle of its request body")
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body:
                await self._too_large(scope, receive, send, b"".join(chunks) + chunk, message)
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    async def _too_large(
        self, scope: Scope, receive: Receive, send: Send, head: bytes, message: Message
    ) -> None:
        """Drain the rest after ``message``, the part that crossed the limit (keeping the
        body's tail), then answer ``too_large`` (a body whose last part crossed it waited
        for one more, forever)."""
        tail = head[-KEEP:]
        head = head[:KEEP]
        while message.get("more_body", False):
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            tail = (tail + message.get("body", b""))[-KEEP:]
        text = self._too_large_text()
        if _mcp(scope):
            await reply(send, 200, _jsonrpc_refusal(head, tail, f"too_large: {text}"))
        else:
            await reply(send, 413, _error("too_large", text))

    def _too_large_text(self) -> str:
        return f"the request is larger than the limit of {self.max_body} bytes"


def _mcp(scope: Scope) -> bool:
    return str(scope["path"]).startswith("/mcp")


def _event_stream(scope: Scope) -> bool:
    """A GET of /mcp: a session's stream of server messages (2025 protocol), open as long
    as the session and idle; it does no work, so it takes no place among the requests.
    One that sends a body is a request like any other (the SDK reads a body whole: a
    GET's skipped the bound on large bodies)."""
    return scope["method"] == "GET" and _mcp(scope) and not _has_body(scope)


def _has_body(scope: Scope) -> bool:
    """Whether the request says a body follows (a length above 0, or chunks)."""
    for name, value in scope["headers"]:
        if name == b"transfer-encoding" or (name == b"content-length" and value != b"0"):
            return True
    return False


def _content_length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            return int(value) if value.isdigit() else None
    return None


def _error(code: str, message: str) -> dict:
    return {"error": {"code": code, "message": message}}


BUSY = "the indexer is busy; retry soon"
JSONRPC_SERVER_ERROR = -32000  # the JSON-RPC range left to servers: -32000 to -32099


def _busy(scope: Scope) -> dict:
    """The 503's body: on ``/mcp`` a JSON-RPC error, which MCP clients show as it is (a
    bare status becomes "Server returned an error response") and ours retry; the REST
    error body elsewhere. The request is not read, so its id is not known (null)."""
    if _mcp(scope):
        error = {"code": JSONRPC_SERVER_ERROR, "message": f"unavailable: {BUSY}"}
        return {"jsonrpc": "2.0", "id": None, "error": error}
    return _error("unavailable", BUSY)


def _jsonrpc_refusal(head: bytes, tail: bytes, text: str) -> dict:
    """``jsonrpc_refusal`` of a body too large to parse: its id and method found in the
    body's head or tail."""
    found = _ID.search(head[:512]) or _last(_ID, tail[-512:])
    try:  # (the pattern finds what looks like one: "\\q", 007 or bytes not UTF-8 were a 500)
        request_id: Any = json.loads(found.group(1)) if found else None
    except ValueError:
        request_id = None
    method = _METHOD.search(head[:512]) or _last(_METHOD, tail[-512:])
    return jsonrpc_refusal(request_id, method.group(1).decode() if method else None, text)


def jsonrpc_refusal(request_id: Any, method: str | None, text: str) -> dict:
    """A tool error for a tools/call, else a JSON-RPC error; the message starts with the
    SPEC code either way. An id that is none (``is_request_id``) is answered as null."""
    request_id = request_id if is_request_id(request_id) else None
    if method == "tools/call" and request_id is not None:
        result = {"content": [{"type": "text", "text": text}], "isError": True}
        result["resultType"] = "complete"  # as every tool result (2026-07-28 needs it)
        return {"jsonrpc": "2.0", "id": request_id, "result": result}
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32600, "message": text}}


def is_request_id(value: object) -> bool:
    """Whether ``value`` is an id an answer can echo: MCP's ids are strings and whole
    numbers. Echoed, a float id of ``1e400`` or ``NaN`` was ``Infinity``/``NaN`` (no JSON),
    a string holding a lone surrogate its escape (which the client's own parser refuses),
    an object or ``true`` an id no client sent a request under."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, str) and utf8_problem(value) is None)


def _last(pattern: re.Pattern[bytes], data: bytes) -> re.Match[bytes] | None:
    found = None
    for found in pattern.finditer(data):  # noqa: B007 - the last one is wanted
        pass
    return found


def replaying(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives ``body`` (read whole already) as one message, then what
    ``receive`` gives (the client's disconnect)."""
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


async def reply(send: Send, status: int, payload: dict) -> None:
    """Answer ``payload`` as JSON with ``status``; the app never sees the request."""
    body = json.dumps(payload).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    if status == 503:
        headers.append((b"retry-after", b"1"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def tune_mcp_transport(
    app: Any, *, max_body: int, max_sessions: int, handshake_timeout: float
) -> None:
    """Set the MCP session manager's body limit and session cap, and close its sessions
    that never get past ``initialize`` (``sessions.guard_sessions``). Call it after the
    manager's lifespan started: fastmcp builds the manager then."""
    for route in getattr(app, "routes", []):
        endpoint = getattr(route, "app", None)
        while endpoint is not None and not hasattr(endpoint, "session_manager"):
            endpoint = getattr(endpoint, "app", None)
        manager = getattr(endpoint, "session_manager", None) if endpoint is not None else None
        if manager is None:
            continue
        limit = getattr(manager, "asgi_app", None)
        if limit is not None and hasattr(limit, "max_body_size"):
            limit.max_body_size = max_body
        manager.max_sessions = max_sessions
        guard_sessions(manager, handshake_timeout=handshake_timeout)
        return
    log.warning("could not find the MCP session manager to set its limits")
