"""Telling why the indexer could not be reached, in words, from an exception chain
(the MCP client raises ``RuntimeError`` and exception groups that say nothing), whether
it no longer knows the client's MCP session (``session_gone``), and whether it refused a
request as busy (``said_busy``: asked again after ``BUSY_PAUSES``)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from typing import TypeVar

import httpx2

from shared.errors import IndexerOfflineError

_BEARER = re.compile(r"(?i)bearer\s+\S+")

# Pauses before asking again a server that said it is busy (``unavailable``): 6 s in all.
BUSY_PAUSES = (0.05, 0.1, 0.2, 0.4, 0.8, 1.5, 1.5, 1.5)
T = TypeVar("T")


def why_unreachable(
    exc: BaseException, timeout: float, handled: BaseException | None = None
) -> str:
    """What went wrong on the way to the server, in words (``RuntimeError`` says nothing).
    ``handled``: what the caller was handling when it made the call (the chain's context
    reaches it, and its words are not the transport's: a merge's failure being undone)."""
    chain = _causes(exc, handled)
    for seen in chain:
        if isinstance(seen, ConnectionRefusedError):
            return "connection refused"
        if isinstance(seen, TimeoutError | httpx2.TimeoutException):
            return f"no answer within {timeout:g} s"
        if isinstance(seen, httpx2.HTTPStatusError):
            return f"HTTP {seen.response.status_code} {seen.response.reason_phrase}"
    plain = [e for e in chain if not isinstance(e, BaseExceptionGroup)]
    messages = [" ".join(str(e).split()) for e in plain if str(e).strip()]
    said = messages[-1][:200] if messages else type(exc).__name__
    return _BEARER.sub("Bearer ***", said)  # a header value an error quotes (never the token)


def _causes(exc: BaseException, handled: BaseException | None) -> list[BaseException]:
    """``exc``, its cause, the cause's cause..., each once, up to ``handled``."""
    chain: list[BaseException] = []
    seen: BaseException | None = exc
    while seen is not None and seen not in chain and seen is not handled:
        chain.append(seen)
        seen = seen.__cause__ or seen.__context__
    return chain


def is_offline(exc: BaseException) -> bool:
    """Whether ``exc`` (or its cause) is a transport failure rather than a refusal."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, httpx2.TransportError | OSError | TimeoutError):
            return True
        seen = seen.__cause__
    text = str(exc)
    return "timed out" in text or "closed" in text or "error response" in text


# The JSON-RPC errors of an HTTP 404 to a request naming an MCP session (2025 protocol)
# that the server does not have: its session manager's, its closed transport's, and the
# MCP client's own words for a 404 with no JSON-RPC body.
_SESSION_GONE = frozenset(
    {"Session not found", "Not Found: Session has been terminated", "Session terminated"}
)
_INVALID_REQUEST = -32600


def session_gone(exc: BaseException) -> bool:
    """Whether the server refused a request because it does not know its session (it
    restarted, or closed the session after its idle timeout).

    Such a request was never run: the MCP library (``mcp`` 2.3) looks the session up
    before it reads the request, and a terminated session's transport answers 404 before
    it hands the message on. Once handed on, a request whose session then closes is
    answered 500 ("Session terminated before the request completed", in the JSON answers
    the indexer gives), so the indexer's own 404 for a request reaching a closing session
    (``indexer.web.sessions``: only when no answer began) is of one not handed on either.
    """
    from mcp.shared.exceptions import MCPError  # (loaded with the client: ``connection``)

    return (
        isinstance(exc, MCPError) and exc.code == _INVALID_REQUEST and exc.message in _SESSION_GONE
    )


def said_busy(exc: BaseException) -> bool:
    """Whether the server refused a request at its cap of requests in flight: a 503 at
    the door, the request unread (``indexer.web.limits``), so nothing of it ran."""
    from mcp.shared.exceptions import MCPError  # (loaded with the client: ``connection``)

    return isinstance(exc, MCPError) and exc.message.startswith("unavailable:")


async def asked_while_busy(
    ask: Callable[[], Awaitable[T]], busy: Callable[[BaseException], bool], who: str
) -> T:
    """``ask()``, made again after each of ``BUSY_PAUSES`` while it fails as ``busy`` says
    (the server refused it unread); then ``IndexerOfflineError``: "<who> stayed busy for
    <the pauses' sum> s". Any other failure goes up as it is."""
    for pause in (*BUSY_PAUSES, None):
        try:
            return await ask()
        except Exception as exc:
            if not busy(exc):
                raise
            if pause is None:
                raise IndexerOfflineError(
                    f"{who} stayed busy for {sum(BUSY_PAUSES):g} s ({exc})"
                ) from None
        await asyncio.sleep(pause)
    raise AssertionError("unreachable")  # (the last pause, None, returns or raises)
