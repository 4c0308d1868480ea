"""MCP sessions (2025 protocol) that never get past ``initialize`` give their place up.

A client of the 2025 Streamable HTTP protocol opens a session with ``initialize`` and at
once sends ``notifications/initialized``. One that gives up while connecting (a storm of
them, timing out) sends nothing more, and the MCP library kept each such session for
its idle timeout (``INDEXER_SESSION_IDLE_TIMEOUT``, 5 minutes): ``INDEXER_MAX_SESSIONS``
of them refused every real client ("Too many open sessions") that long.
``guard_sessions`` hooks the library's session manager (``mcp`` 2.3's own attributes):

- a session with no request after its opening one is closed ``handshake_timeout``
  seconds after it: its first idle period is that short, and the library's own idle
  timeout closes it (a request racing the close is answered 404, as for any expiry);
- at the cap, the session that has waited longest for its second request is closed to
  admit the new one, never one that had another request or has one in flight: when
  every session is in use, the cap refuses as before;
- a request reaching a session as it closes (its client's own DELETE racing its calls,
  the server stopping) is one debug line: the library logged it as two
  ``ClosedResourceError`` tracebacks (its own, then uvicorn's "Exception in ASGI
  application") and cut the connection. Other errors stay loud.
"""

from __future__ import annotations

import logging
import weakref
from dataclasses import dataclass
from typing import Any

import anyio
from starlette.types import Message, Receive, Scope, Send

log = logging.getLogger("indexer.web")

CLOSED = (anyio.ClosedResourceError, anyio.BrokenResourceError)
_GONE_BODY = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Session not found"}}'
_POST_FAILED = "Error handling POST request"  # (its words in mcp.server.streamable_http)
_INTERNALS = ("_admit_session", "_server_instances", "_session_owners", "max_sessions")


@dataclass
class _Use:
    """What a session's transport has been handed so far."""

    requests: int = 0  # HTTP requests, the opening one included
    in_flight: int = 0
    since: float = 0.0  # when its last request ended (the loop's clock)


class _ClosedStreamLines(logging.Filter):
    """Drops the MCP transport's traceback of a request that found its session's streams
    closed: ``_guarded`` says it in one debug line when the session was closing, and
    lets it rise (uvicorn's traceback, loud) when it was not."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not (isinstance(error, CLOSED) and record.msg == _POST_FAILED)


_QUIET = _ClosedStreamLines()


def guard_sessions(manager: Any, *, handshake_timeout: float) -> bool:
    """Hook ``manager`` (a ``StreamableHTTPSessionManager``) as the module docstring says;
    False (and a warning) when its internals are not the ones this was written for."""
    if not all(hasattr(manager, name) for name in _INTERNALS):
        log.warning(
            "could not hook the MCP session manager: sessions that never get past"
            " initialize are kept until their idle timeout"
        )
        return False
    SessionGuard(manager, handshake_timeout).install()
    transport_log = logging.getLogger("mcp.server.streamable_http")
    if _QUIET not in transport_log.filters:
        transport_log.addFilter(_QUIET)
    return True


def unknown_session(manager: Any, scope: Scope) -> bool:
    """Whether the request names a session (``Mcp-Session-Id``) that ``manager`` does not
    hold: ended, expired, or another server's. The library answers it 404 before reading
    its body, the answer that tells the client to open a new session."""
    sessions = getattr(manager, "_server_instances", None)
    if not isinstance(sessions, dict):
        return False
    for name, value in scope["headers"]:
        if name == b"mcp-session-id":
            return value.decode("latin-1") not in sessions
    return False


class SessionGuard:
    """Watches every session the manager admits (see the module docstring)."""

    def __init__(self, manager: Any, handshake_timeout: float) -> None:
        self.manager = manager
        self.handshake_timeout = handshake_timeout
        self._admit = manager._admit_session
        self._uses: weakref.WeakKeyDictionary[Any, _Use] = weakref.WeakKeyDictionary()

    def install(self) -> None:
        self.manager._admit_session = self._admit_session

    def _admit_session(self, requestor: Any) -> Any:
        """The library's admission (called under its lock, with no await: nothing else
        runs between the choice of a session to close and the new one taking its place)."""
        cap = self.manager.max_sessions
        if cap is not None and len(self.manager._server_instances) >= cap:
            self._make_room()
        transport = self._admit(requestor)
        if transport is not None:
            self._watch(transport)
        return transport

    def _make_room(self) -> None:
        """Close the session that has waited longest for its second request, if any."""
        waiting = [
            (use.since, session_id, transport)
            for session_id, transport in self.manager._server_instances.items()
            if (use := self._uses.get(transport)) is not None
            and use.requests == 1
            and use.in_flight == 0
        ]
        if not waiting:
            return
        _, session_id, transport = min(waiting, key=lambda item: (item[0], item[1]))
        self.manager._server_instances.pop(session_id, None)  # (its place, now)
        self.manager._session_owners.pop(session_id, None)
        _close(self.manager, transport)
        log.warning(
            "closed an MCP session that sent nothing after initialize to open a new one"
            " (%d sessions are open, the most INDEXER_MAX_SESSIONS allows)",
            self.manager.max_sessions,
        )

    def _watch(self, transport: Any) -> None:
        """Count the requests ``transport`` is handed, from its opening one on."""
        use = _Use()
        self._uses[transport] = use
        handle = transport.handle_request

        async def counted(scope: Scope, receive: Receive, send: Send) -> None:
            use.requests += 1
            use.in_flight += 1
            try:
                await _guarded(transport, handle, scope, receive, send)
            finally:
                use.in_flight -= 1
                use.since = anyio.current_time()
                if use.requests == 1 and use.in_flight == 0:
                    self._hurry(transport)

        transport.handle_request = counted

    def _hurry(self, transport: Any) -> None:
        """After the opening request: the session's first idle period is the handshake's
        (the library sets a full idle timeout again after its next request)."""
        scope = getattr(transport, "idle_scope", None)
        if scope is not None and not scope.cancel_called:
            scope.deadline = min(scope.deadline, anyio.current_time() + self.handshake_timeout)


async def _guarded(transport: Any, handle: Any, scope: Scope, receive: Receive, send: Send) -> None:
    """``handle`` the request; a session closed under it is one debug line and, if no
    answer was begun, a 404 (the spec's answer for a session that is gone)."""
    begun = False

    async def sending(message: Message) -> None:
        nonlocal begun
        begun = begun or message["type"] == "http.response.start"
        await send(message)

    try:
        await handle(scope, receive, sending)
    except CLOSED:
        if not transport.is_terminated:
            raise
        log.debug("a request reached an MCP session as it closed")
        if not begun:
            await _session_gone(send)


async def _session_gone(send: Send) -> None:
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", b"%d" % len(_GONE_BODY)),
    ]
    await send({"type": "http.response.start", "status": 404, "headers": headers})
    await send({"type": "http.response.body", "body": _GONE_BODY})


def _close(manager: Any, transport: Any) -> None:
    """End a session as its idle timeout would (its task discards and terminates it)."""
    scope = getattr(transport, "idle_scope", None)
    if scope is not None:
        scope.cancel()
        return
    group = getattr(manager, "_task_group", None)  # (no idle timeout: no scope to cancel)
    if group is not None:
        group.start_soon(transport.terminate)
