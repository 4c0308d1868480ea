"""Connect an MCP client to the indexer at an endpoint, within ``connect_timeout``.

A connect that fails is ``IndexerOfflineError`` saying why in words: refused, no
answer, or a token the server refuses (HTTP 401, which the MCP client words only
"Server returned an error response").

A server at its cap of requests in flight refuses at the door (503 ``unavailable``):
the connect is made again after ``BUSY_PAUSES``, as a call is. The MCP client (protocol
2026-07-28) first probes ``server/discover``, and takes any JSON-RPC refusal of the
probe for a server of the 2025 protocol (``mcp.client._probe.negotiate_auto``): it
falls back at once to ``initialize``, whose MCP session a restart or the server's idle
timeout can end. A probe refused as busy is raised as ``_Busy`` instead (no JSON-RPC
error: the MCP client passes it up rather than falling back), so a busy server is
asked again and the client lands on the current protocol once it has a place.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import httpx2
from fastmcp import Client
from fastmcp.client.transports import StreamableHttpTransport
from fastmcp.client.transports.base import TransportOptions
from mcp import ClientSession
from mcp.shared.exceptions import MCPError

from agent_client.discovery import Endpoint
from agent_client.repeats import NotingTransport
from agent_client.settings import ClientSettings
from agent_client.tls import context_for
from agent_client.unreachable import asked_while_busy, said_busy, why_unreachable
from shared.errors import IndexerOfflineError
from shared.workspace import shell_word


class _Busy(Exception):
    """The server refused a step of connecting as busy (its words: ``str``)."""


class _ProbingTransport(StreamableHttpTransport):
    """Streamable HTTP whose ``server/discover`` probe, refused as busy, is ``_Busy``
    rather than the MCP client's cue to fall back to the 2025 protocol. (The MCP
    client keeps a transport's own ``send_discover`` and calls it to probe.)"""

    @contextlib.asynccontextmanager
    async def connect_session(
        self,
        *,
        transport_options: TransportOptions | None = None,
        **session_kwargs: Any,
    ) -> AsyncGenerator[ClientSession, None]:
        async with super().connect_session(
            transport_options=transport_options, **session_kwargs
        ) as session:
            probe = session.send_discover

            async def send_discover(version: str) -> dict[str, Any]:
                try:
                    return await probe(version)
                except MCPError as exc:
                    if said_busy(exc):
                        raise _Busy(str(exc)) from None
                    raise

            session.send_discover = send_discover  # type: ignore[method-assign]
            yield session


def _indexer_http(url: str, **kwargs: Any) -> httpx2.AsyncClient:
    """An HTTP client for the indexer at ``url``, whose every request goes through
    ``NotingTransport`` (its fate noted for the call that made it: ``repeats``) and never
    through a proxy the environment names (``HTTP_PROXY``, ``HTTPS_PROXY``,
    ``ALL_PROXY``): the indexer runs on this machine (its URL file is in the workspace),
    and a proxy set for the outside world cannot reach this machine's loopback, and
    would be sent the token. Its TLS context is the process's for that URL (``tls``)."""
    transport = NotingTransport(httpx2.AsyncHTTPTransport(verify=context_for(url)))
    return httpx2.AsyncClient(transport=transport, trust_env=False, **kwargs)


async def connect_client(settings: ClientSettings, endpoint: Endpoint) -> Client[Any]:
    """A client connected to the indexer at ``endpoint``, which serves the settings'
    workspace; the caller closes it (``close_client``). Else ``IndexerOfflineError``,
    after about ``sum(BUSY_PAUSES)`` seconds of asking again when the server is busy."""
    return await asked_while_busy(
        lambda: _connect_once(settings, endpoint),
        lambda exc: isinstance(exc, _Busy),
        f"cannot connect to the indexer at {endpoint.url}: it",
    )


async def _connect_once(settings: ClientSettings, endpoint: Endpoint) -> Client[Any]:
    """``connect_client`` once; ``_Busy`` when the server refused a step as busy."""

    def http_client(
        headers: dict[str, str] | None = None,
        timeout: httpx2.Timeout | None = None,
        auth: httpx2.Auth | None = None,
        **kwargs: Any,
    ) -> httpx2.AsyncClient:
        # Connecting is bounded by connect_timeout; a call by call_timeout (in the session).
        read = max(settings.call_timeout, 300.0)
        timeout = httpx2.Timeout(read, connect=settings.connect_timeout)
        return _indexer_http(endpoint.url, headers=headers, timeout=timeout, auth=auth, **kwargs)

    transport = _ProbingTransport(
        endpoint.url, auth=endpoint.token, httpx_client_factory=http_client
    )
    client: Client[Any] = Client(
        transport, timeout=settings.call_timeout, init_timeout=settings.connect_timeout
    )
    try:
        async with asyncio.timeout(settings.connect_timeout):
            await client.__aenter__()
    except Exception as exc:
        await close_client(client)
        busy = _busy_in(exc)
        if busy is not None:
            raise busy from None
        why = why_unreachable(exc, settings.connect_timeout)
        answered = why != "connection refused" and not why.startswith("no answer")
        if answered and await _token_refused(endpoint, settings.connect_timeout):
            held = "its token" if endpoint.token else f"no token ({settings.token_file} is missing)"
            raise IndexerOfflineError(
                f"the indexer at {endpoint.url} answers but refuses {held} (HTTP 401):"
                f" {settings.token_file} must hold the token `indexer serve` was given"
            ) from exc
        raise IndexerOfflineError(
            f"cannot connect to the indexer at {endpoint.url} ({why}); is "
            f"`indexer serve --workspace {shell_word(settings.workspace)}` running?"
        ) from exc
    # Connected: its session runs in a task of its own (fastmcp's). Closed on every way
    # out, a cancellation (an interrupt) as the workspace is asked for included: left open,
    # the loop's shutdown finalized it from another task (pages of anyio's errors).
    try:
        served = await _served_workspace(client, settings.call_timeout)
        if served is not None and served != Path(settings.workspace).resolve():
            raise IndexerOfflineError(
                f"{settings.url_file} is stale: the indexer at {endpoint.url} serves another "
                f"workspace ({served}); start `indexer serve --workspace"
                f" {shell_word(settings.workspace)}`"
            )
    except BaseException:
        await close_client(client)
        raise
    return client


async def _served_workspace(client: Client[Any], timeout: float) -> Path | None:
    """The workspace the server serves (its ``status``), or None when it does not say.
    A URL file left by a crash can name a port another workspace's indexer took since:
    writes would land in that workspace. ``_Busy`` when the server refused to say."""
    try:
        async with asyncio.timeout(timeout):
            result = await client.call_tool("status", {}, raise_on_error=False)
    except MCPError as exc:
        if said_busy(exc):
            raise _Busy(str(exc)) from None
        return None  # the session's first call tells what is wrong, as before
    except Exception:
        return None
    served = None if result.is_error else (result.structured_content or {}).get("workspace")
    return Path(served).resolve() if isinstance(served, str) else None


def _busy_in(exc: BaseException) -> _Busy | None:
    """The busy refusal behind a failed connect, if one is: the probe's (``_Busy``) or,
    after a fallback for another reason, the 2025 ``initialize``'s; in the chain of
    causes or in an exception group the MCP client raised."""
    seen: set[int] = set()
    todo = [exc]
    while todo:
        one = todo.pop()
        if id(one) in seen:
            continue
        seen.add(id(one))
        if isinstance(one, _Busy):
            return one
        if said_busy(one):
            return _Busy(str(one))
        if isinstance(one, BaseExceptionGroup):
            todo.extend(one.exceptions)
        below = one.__cause__ or one.__context__
        if below is not None:
            todo.append(below)
    return None


async def close_client(client: Client[Any]) -> None:
    """Close ``client``; closing one whose server is already gone may raise: nothing to
    save then."""
    with contextlib.suppress(Exception):
        await client.__aexit__(None, None, None)


async def delete_session(endpoint: Endpoint, session_id: str, timeout: float) -> bool:
    """End the MCP session ``session_id`` (2025 protocol) on the server with the HTTP
    DELETE the MCP client sends as it closes, from a client of the caller's event loop:
    for a connection whose own objects belong to a loop that is gone. The same token
    (the server keeps a session to the credential that opened it), no protocol version
    header (the server then routes the request to its sessions). True when the server
    ended it or no longer had it (404)."""
    headers = {"Mcp-Session-Id": session_id}
    if endpoint.token:
        headers["Authorization"] = f"Bearer {endpoint.token}"
    try:
        async with _indexer_http(endpoint.url, timeout=timeout) as http:
            answer = await http.delete(endpoint.url, headers=headers)
    except (httpx2.HTTPError, httpx2.InvalidURL):
        return False
    return answer.status_code in (200, 204, 404)


async def _token_refused(endpoint: Endpoint, timeout: float) -> bool:
    """Whether the server says 401 to this client's token (the MCP client's own error
    for it says only "Server returned an error response")."""
    headers = {"Authorization": f"Bearer {endpoint.token}"} if endpoint.token else {}
    try:
        async with _indexer_http(endpoint.url, timeout=timeout) as http:
            answer = await http.get(endpoint.url, headers=headers)
    except (httpx2.HTTPError, httpx2.InvalidURL):  # (no HTTPError: it went up as a traceback)
        return False
    return answer.status_code == 401
