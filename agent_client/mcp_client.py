"""Connect an MCP client to the indexer at an endpoint, within ``connect_timeout``.

A connect that fails is ``IndexerOfflineError`` saying why in words: refused, no
answer, or a token the server refuses (HTTP 401, which the MCP client words only
"Server returned an error response").
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import httpx2
from fastmcp import Client
from fastmcp.client.transports import StreamableHttpTransport

from agent_client.discovery import Endpoint
from agent_client.settings import ClientSettings
from agent_client.unreachable import why_unreachable
from shared.errors import IndexerOfflineError


async def connect_client(settings: ClientSettings, endpoint: Endpoint) -> Client[Any]:
    """A client connected to ``endpoint``; the caller closes it (``close_client``)."""

    def http_client(
        headers: dict[str, str] | None = None,
        timeout: httpx2.Timeout | None = None,
        auth: httpx2.Auth | None = None,
        **kwargs: Any,
    ) -> httpx2.AsyncClient:
        # Connecting is bounded by connect_timeout; a call by call_timeout (in the session).
        read = max(settings.call_timeout, 300.0)
        timeout = httpx2.Timeout(read, connect=settings.connect_timeout)
        return httpx2.AsyncClient(headers=headers, timeout=timeout, auth=auth, **kwargs)

    transport = StreamableHttpTransport(
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
            f"`indexer serve --workspace {settings.workspace}` running?"
        ) from exc
    return client


async def close_client(client: Client[Any]) -> None:
    """Close ``client``; closing one whose server is already gone may raise: nothing to
    save then."""
    with contextlib.suppress(Exception):
        await client.__aexit__(None, None, None)


async def _token_refused(endpoint: Endpoint, timeout: float) -> bool:
    """Whether the server says 401 to this client's token (the MCP client's own error
    for it says only "Server returned an error response")."""
    headers = {"Authorization": f"Bearer {endpoint.token}"} if endpoint.token else {}
    try:
        async with httpx2.AsyncClient(timeout=timeout) as http:
            answer = await http.get(endpoint.url, headers=headers)
    except (httpx2.HTTPError, httpx2.InvalidURL):  # (no HTTPError: it went up as a traceback)
        return False
    return answer.status_code == 401
