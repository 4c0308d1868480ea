"""Which failed calls may be made again on an indexer that restarted meanwhile.

An indexer may restart in the middle of a caller's work (a memory-tool command's read,
then its write), on another port: the next call finds the old port refused. A call whose
connection failed may have run on the old server or not. It is made again, once, on the
start the URL file now names (another URL, or the same one written anew) only when
making it twice cannot change anything twice (the session-gone retry's rule,
``unreachable.session_gone``: a request the server never ran):

- a read-only tool (``READ_ONLY_TOOLS``: those the indexer marks ``readOnlyHint``), the
  tool list or a prompt: reading twice changes nothing, whatever the old server did;
- any other call only when every HTTP request it made failed to *connect* (refused, or
  no TCP/TLS handshake in time): not a byte of it was sent. A request that went out and
  lost its answer (reset, the server gone mid-answer, a timeout) may have landed: an
  ``append`` made again would be there twice, and an edit's ``write`` with ``if_match``
  made again would fail as a conflict that the edit then reads as someone else's change
  and applies again. Such a call stays failed (the caller is told the indexer is
  offline; the Memory Writer settles its own entries).

The MCP client sends a request from a task of its own and reports any transport failure
as "Connection closed", so which requests went out is noted below it: an ``httpx``
transport (``NotingTransport``) records each request's fate in the ``Sending`` of the
call that made it, found through a context variable (the MCP client runs a request's
POST in the context of the task that sent it). The memory tool asks the same of a change
cut short (``noting(changing=True)`` counts a call's requests for the noting around it):
one none of whose requests connected was not made; any other may have been.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator

import httpx2

from agent_client.discovery import Endpoint, discover
from agent_client.settings import ClientSettings
from agent_client.unreachable import is_offline
from shared.errors import IndexerOfflineError

# The indexer's tools marked read-only (``read_only=True``: ``readOnlyHint``); a tool not
# named here (a newer server's) is taken for one that changes something.
READ_ONLY_TOOLS = frozenset(
    {"read", "stat", "find", "grep", "search", "recall", "status", "history", "diff", "summary"}
)


class Sending:
    """What became of the HTTP requests one call made (through ``NotingTransport``)."""

    def __init__(self) -> None:
        self.refused = 0  # requests that never connected: nothing of them was sent
        self.sent = 0  # requests that went out, or may have

    @property
    def never_sent(self) -> bool:
        """Whether the call's requests are known, and none of them left this client. (No
        request noted: a client without ``NotingTransport``, so nothing is known.)"""
        return self.refused > 0 and self.sent == 0

    def ran_nothing(self) -> None:
        """The server answered that it ran none of the call's requests (busy at its cap,
        or asked in a session it no longer has: each refused unread): as if refused at
        the port, so a memory-tool change cut short later is told it changed nothing."""
        self.refused += self.sent or 1
        self.sent = 0


_SENDING: contextvars.ContextVar[Sending | None] = contextvars.ContextVar(
    "vault_memory_sending", default=None
)


@contextlib.contextmanager
def noting(*, changing: bool = False) -> Iterator[Sending]:
    """Note the fate of the requests made within (by this task and those it starts).

    The requests of a ``changing`` call (one that may change something) count for the
    noting around it too, if any: a memory-tool change asks whether any request of its
    own left this client, not those of the reads it made on the way (the tool list) or
    of connecting again. One of which nothing was noted (a client without
    ``NotingTransport``) counts there as sent: nothing is known of it."""
    outer = _SENDING.get()
    sending = Sending()
    token = _SENDING.set(sending)
    try:
        yield sending
    finally:
        _SENDING.reset(token)
        if changing and outer is not None:
            outer.refused += sending.refused
            outer.sent += sending.sent or (0 if sending.refused else 1)


def moved_to(
    settings: ClientSettings | None,
    endpoint: Endpoint,
    failure: BaseException,
    read_only: bool,
    sending: Sending,
) -> Endpoint | None:
    """Where to make again a call that failed (``failure``) on the way to ``endpoint``:
    the indexer the URL file names now, if that is another start of it and the call may
    be made again (see above); else None (and with no ``settings`` to find it by)."""
    if settings is None or not is_offline(failure) or not (read_only or sending.never_sent):
        return None
    try:
        now = discover(settings.url_file, settings.token_file)
    except IndexerOfflineError:
        return None
    return None if now == endpoint else now


class NotingTransport(httpx2.AsyncBaseTransport):
    """An ``httpx`` transport noting, for the call in progress, whether each request
    connected (``Sending``); the requests themselves go through ``inner`` unchanged."""

    def __init__(self, inner: httpx2.AsyncBaseTransport) -> None:
        self._inner = inner

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        sending = _SENDING.get()
        try:
            response = await self._inner.handle_async_request(request)
        except (httpx2.ConnectError, httpx2.ConnectTimeout):
            if sending is not None:
                sending.refused += 1
            raise
        except BaseException:
            if sending is not None:
                sending.sent += 1
            raise
        if sending is not None:
            sending.sent += 1
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()
