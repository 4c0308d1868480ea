"""A stand-in for the indexer's HTTP port: forwards to a real indexer, or answers itself.

``McpProxy(target)`` listens on a port of its own (in a thread, on an event loop of its
own) and forwards each request to ``target`` (an ``indexer serve``'s ``/mcp``), except
that:

- ``answer(request)`` may give a reply of its own instead (``Reply``: e.g. the
  indexer's busy 503), the request then never forwarded;
- ``after(request)`` runs once the target answered a forwarded request, before the
  client gets the answer (e.g. to restart the indexer there); it may say ``DROP``: the
  client's connection closes with no answer (the answer lost on the way);
- ``close_port()`` stops listening: later connections are refused, the connections
  kept alive close, and the one the current answer goes back on closes after it.

A GET (the 2025 protocol's event stream) is answered 405, as a server without one does;
so is a DELETE (the end of a 2025 session) unless ``forward_deletes``.
The point is to put the real indexer's answers, and the client's failures, at exact
points of a client's calls; nothing of the agent client runs here.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

import httpx2

DROP = "drop"
_HOP = {"host", "content-length", "connection", "transfer-encoding", "keep-alive"}
# The indexer's own answer at its cap of requests in flight (``indexer.web.limits``).
BUSY_BODY = {
    "jsonrpc": "2.0",
    "id": None,
    "error": {"code": -32000, "message": "unavailable: the indexer is busy; retry soon"},
}


@dataclass
class Reply:
    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)


def busy_reply() -> Reply:
    """The indexer's 503 at its cap of requests in flight, byte for byte in shape."""
    return Reply(
        503,
        json.dumps(BUSY_BODY).encode(),
        {"content-type": "application/json", "retry-after": "1"},
    )


@dataclass
class Seen:
    """One request the proxy got: its JSON-RPC method, and for ``tools/call`` the tool."""

    http_method: str
    method: str | None
    tool: str | None


class McpProxy:
    def __init__(
        self,
        target: str,
        answer: Callable[[Seen], Reply | None] = lambda seen: None,
        after: Callable[[Seen], str | None] = lambda seen: None,
        *,
        forward_deletes: bool = False,
    ) -> None:
        self.target = target
        self.forwarded = {"POST", "DELETE"} if forward_deletes else {"POST"}
        self.answer = answer
        self.after = after
        self.seen: list[Seen] = []
        self._loop = asyncio.new_event_loop()
        self._closing = False
        self._server: asyncio.Server | None = None
        self._idle: set[asyncio.StreamWriter] = set()  # connections between requests
        self._http: httpx2.AsyncClient | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self.port = self._run(self._start())

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def calls(self, tool: str) -> int:
        return sum(1 for s in self.seen if s.tool == tool)

    def _run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout=30)

    async def _start(self) -> int:
        self._http = httpx2.AsyncClient(timeout=60)
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return int(self._server.sockets[0].getsockname()[1])

    def close_port(self) -> None:
        """Stop listening and close the connections kept alive between requests (call it
        from ``answer`` or ``after``, or from another thread: then done once it returns, so
        that no request the caller sends next reaches a connection not yet closed)."""
        if threading.current_thread() is not self._thread:

            async def close() -> None:
                self.close_port()

            self._run(close())
            return
        self._closing = True
        if self._server is not None:
            self._server.close()
        for writer in self._idle:
            writer.close()

    def stop(self) -> None:
        async def stop() -> None:
            self.close_port()
            if self._http is not None:
                await self._http.aclose()

        self._run(stop())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while not self._closing:
                self._idle.add(writer)
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                finally:
                    self._idle.discard(writer)
                request_line, *lines = head.decode("latin-1").split("\r\n")
                http_method = request_line.split(" ", 1)[0]
                headers = dict(line.split(": ", 1) for line in lines if ": " in line)
                size = int(
                    next((v for k, v in headers.items() if k.lower() == "content-length"), 0)
                )
                body = await reader.readexactly(size)
                seen = _seen(http_method, body)
                self.seen.append(seen)
                forwarded = http_method in self.forwarded
                reply = self.answer(seen) if forwarded else Reply(405, b"")
                if reply is None:
                    try:
                        reply = await self._forward(http_method, headers, body)
                    except httpx2.TransportError:  # (the server dropped it: so does this)
                        return
                    if self.after(seen) == DROP:
                        return
                await _send(writer, reply, close=self._closing)
        finally:
            writer.close()
            with contextlib.suppress(OSError):  # (closed, not left to the collector)
                await writer.wait_closed()

    async def _forward(self, http_method: str, headers: dict[str, str], body: bytes) -> Reply:
        assert self._http is not None
        sent = {k: v for k, v in headers.items() if k.lower() not in _HOP}
        got = await self._http.request(http_method, self.target, headers=sent, content=body)
        kept = {
            k: v for k, v in got.headers.items() if k.lower() not in _HOP | {"content-encoding"}
        }
        return Reply(got.status_code, got.content, kept)


def _seen(http_method: str, body: bytes) -> Seen:
    try:
        message = json.loads(body) if body else {}
    except ValueError:
        message = {}
    message = message if isinstance(message, dict) else {}
    params = message.get("params") if isinstance(message.get("params"), dict) else {}
    tool = params.get("name") if message.get("method") == "tools/call" else None
    return Seen(http_method, message.get("method"), tool)


async def _send(writer: asyncio.StreamWriter, reply: Reply, *, close: bool) -> None:
    lines = [f"HTTP/1.1 {reply.status} {HTTPStatus(reply.status).phrase}"]
    lines += [f"{k}: {v}" for k, v in reply.headers.items()]
    lines += [
        f"content-length: {len(reply.body)}",
        f"connection: {'close' if close else 'keep-alive'}",
    ]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + reply.body)
    await writer.drain()
