"""``indexer.web.sessions`` on a stand-in for the MCP library's session manager: which
session gives its place up at the cap, the short first idle period, and a request that
reaches a closing session (the real server: ``test_session_handshake_e2e``)."""

from __future__ import annotations

import logging
import math
from typing import Any

import anyio
import pytest

from indexer.web.sessions import guard_sessions

HANDSHAKE = 15.0


class Transport:
    """A session's transport as the manager holds it."""

    def __init__(self, session_id: str) -> None:
        self.mcp_session_id = session_id
        self.idle_scope = anyio.CancelScope()
        self.idle_scope.deadline = math.inf
        self.is_terminated = False
        self.gate: anyio.Event | None = None  # a request waits on it when set
        self.fail: Exception | None = None

    async def handle_request(self, scope: Any, receive: Any, send: Any) -> None:
        if self.gate is not None:
            await self.gate.wait()
        if self.fail is not None:
            raise self.fail
        self.idle_scope.deadline = anyio.current_time() + 300  # (the library's idle timeout)


class Manager:
    """What ``guard_sessions`` uses of ``StreamableHTTPSessionManager``."""

    def __init__(self, max_sessions: int) -> None:
        self.max_sessions = max_sessions
        self._server_instances: dict[str, Transport] = {}
        self._session_owners: dict[str, object] = {}
        self._count = 0

    def _admit_session(self, requestor: object) -> Transport | None:
        if len(self._server_instances) >= self.max_sessions:
            return None
        self._count += 1
        transport = Transport(f"s{self._count}")
        self._server_instances[transport.mcp_session_id] = transport
        return transport


async def request(transport: Transport) -> list[dict]:
    """One request through the (hooked) transport; the messages it sent."""
    sent: list[dict] = []

    async def send(message: dict) -> None:
        sent.append(message)

    await transport.handle_request({"type": "http"}, None, send)
    return sent


def guarded(max_sessions: int) -> Manager:
    manager = Manager(max_sessions)
    assert guard_sessions(manager, handshake_timeout=HANDSHAKE)
    return manager


async def open_session(manager: Manager) -> Transport | None:
    """Admit a session and answer its opening request (``initialize``)."""
    transport = manager._admit_session(None)
    if transport is not None:
        await request(transport)
    return transport


async def test_at_the_cap_the_oldest_session_never_used_gives_its_place_up() -> None:
    manager = guarded(3)
    used = await open_session(manager)
    first = await open_session(manager)
    second = await open_session(manager)
    assert used and first and second
    await request(used)  # (notifications/initialized: in use)
    newest = await open_session(manager)
    assert newest is not None
    assert set(manager._server_instances) == {"s1", "s3", "s4"}
    assert first.idle_scope.cancel_called and not second.idle_scope.cancel_called
    assert not used.idle_scope.cancel_called


async def test_sessions_in_use_or_busy_are_never_closed_to_make_room() -> None:
    manager = guarded(2)
    used = await open_session(manager)
    assert used is not None
    await request(used)
    opening = manager._admit_session(None)  # its initialize still being answered
    assert opening is not None
    opening.gate = anyio.Event()
    async with anyio.create_task_group() as group:
        group.start_soon(request, opening)
        await anyio.sleep(0)
        assert manager._admit_session(None) is None  # refused, as before
        opening.gate.set()
    assert set(manager._server_instances) == {"s1", "s2"}
    assert not (used.idle_scope.cancel_called or opening.idle_scope.cancel_called)


async def test_the_first_idle_period_is_the_handshake_timeout() -> None:
    manager = guarded(5)
    transport = await open_session(manager)
    assert transport is not None
    left = transport.idle_scope.deadline - anyio.current_time()
    assert 0 < left <= HANDSHAKE
    await request(transport)  # its second request: the full idle timeout again
    assert transport.idle_scope.deadline - anyio.current_time() > HANDSHAKE


async def test_a_request_reaching_a_session_as_it_closes_is_answered_404(
    caplog: pytest.LogCaptureFixture,
) -> None:
    manager = guarded(5)
    transport = await open_session(manager)
    assert transport is not None
    transport.fail = anyio.ClosedResourceError()
    transport.is_terminated = True
    with caplog.at_level(logging.DEBUG, logger="indexer.web"):
        sent = await request(transport)
    assert sent[0]["status"] == 404
    assert [r.message for r in caplog.records] == ["a request reached an MCP session as it closed"]
    transport.is_terminated = False  # a stream closed on a live session: a real error
    with pytest.raises(anyio.ClosedResourceError):
        await request(transport)


def test_the_transport_logs_no_traceback_of_a_closed_stream(
    caplog: pytest.LogCaptureFixture,
) -> None:
    guarded(1)
    transport_log = logging.getLogger("mcp.server.streamable_http")
    with caplog.at_level(logging.ERROR, logger="mcp.server.streamable_http"):
        for error, line in (
            (anyio.ClosedResourceError(), "Error handling POST request"),
            (ValueError("real"), "Error handling POST request"),
            (anyio.ClosedResourceError(), "Unexpected closure of read stream in message router"),
        ):
            try:
                raise error
            except Exception:
                transport_log.exception(line)
    kept = [(r.exc_info[0], r.msg) for r in caplog.records if r.exc_info]
    assert kept == [
        (ValueError, "Error handling POST request"),
        (anyio.ClosedResourceError, "Unexpected closure of read stream in message router"),
    ]


def test_a_manager_of_another_shape_is_left_as_it_is(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="indexer.web"):
        assert not guard_sessions(object(), handshake_timeout=HANDSHAKE)
    assert "could not hook the MCP session manager" in caplog.text
