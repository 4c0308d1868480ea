"""The session a long-lived caller (the Memory Writer, the memory tool) keeps open across
its calls, reopened when the indexer restarts or fails (``SessionKeeper``)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from agent_client.connection import VaultSession, end_session, open_session
from agent_client.discovery import Endpoint, discover
from agent_client.settings import ClientSettings
from shared.errors import IndexerOfflineError


@dataclass(frozen=True)
class LeftSession:
    """An MCP session (2025 protocol) a keeper let go of without closing its connection,
    whose event loop is gone: the server keeps it until its idle timeout (and counts it
    against its cap of sessions) unless told (``end_left``)."""

    endpoint: Endpoint
    session_id: str


class SessionKeeper:
    """One connection reused across entries and batches, reopened when needed.

    ``begin()`` (at the start of each batch or action) re-reads the URL file: a changed
    URL or token, a restarted server (``Endpoint.instance``) or a dead session closes the
    connection so that the next ``get()`` opens a fresh one. After a failure within a
    batch, entries that would go to the endpoint that just failed are refused at once (no
    new timeout per entry); the next batch tries again.
    """

    def __init__(self, settings: ClientSettings) -> None:
        self._settings = settings
        self._stack: contextlib.AsyncExitStack | None = None
        self._session: VaultSession | None = None
        self._failed: Endpoint | None = None

    async def begin(self) -> None:
        self._failed = None
        if self._session is None:
            return
        try:
            endpoint = discover(self._settings.url_file, self._settings.token_file)
        except IndexerOfflineError:
            endpoint = None
        if endpoint != self._session.endpoint or not self._session.alive:
            await self.close()
        else:
            self._session.forget_prompts()

    async def get(self) -> VaultSession:
        if self._session is not None and not self._session.broken:
            return self._session
        if self._session is not None:
            self._failed = self._session.endpoint
        await self.close()
        endpoint = discover(self._settings.url_file, self._settings.token_file)
        if endpoint == self._failed:
            raise IndexerOfflineError(f"the indexer at {endpoint.url} just failed; not retrying")
        stack = contextlib.AsyncExitStack()
        try:
            self._session = await stack.enter_async_context(open_session(self._settings, endpoint))
        except IndexerOfflineError:
            self._failed = endpoint
            raise
        self._stack = stack
        return self._session

    def refusal(self) -> IndexerOfflineError | None:
        """The error ``get()`` would raise at once, trying no connection (no URL file, a
        server gone from the workspace, the indexer that just failed in this batch), or
        None. A writer drops an entry so without making its record first, nor listing
        the others' (a dead indexer's batch: most of the time each entry took)."""
        if self._session is not None and not self._session.broken:
            return None
        failed = self._session.endpoint if self._session is not None else self._failed
        try:
            endpoint = discover(self._settings.url_file, self._settings.token_file)
        except IndexerOfflineError as exc:
            return exc
        if endpoint == failed:
            return IndexerOfflineError(f"the indexer at {endpoint.url} just failed; not retrying")
        return None

    async def moved(self) -> bool:
        """Whether the URL file names another indexer than the one that just failed (it
        restarted, on another port): the caller may try its entry there once. The next
        ``get()`` opens a session to it."""
        failed = self._session.endpoint if self._session is not None else self._failed
        try:
            endpoint = discover(self._settings.url_file, self._settings.token_file)
        except IndexerOfflineError:
            return False
        if failed is None or endpoint == failed:
            return False
        await self.close()
        self._failed = None
        return True

    async def close(self) -> None:
        stack, self._stack, self._session = self._stack, None, None
        if stack is not None:
            await stack.aclose()

    def abandon(self) -> LeftSession | None:
        """Let the connection go without closing it, for a keeper whose event loop is
        gone (its streams and tasks cannot be awaited on another loop, nor its sockets
        closed from one); the session that leaves on the server, if it has one."""
        session, self._stack, self._session = self._session, None, None
        session_id = session.session_id if session is not None else None
        if session is None or session_id is None:
            return None
        return LeftSession(session.endpoint, session_id)


async def end_left(left: LeftSession, settings: ClientSettings) -> bool:
    """End ``left`` on the server (an HTTP DELETE of its session, as the MCP client sends
    when it closes), within ``connect_timeout``; only while the URL file names the same
    start of the indexer: after a restart the session went with the old start, and
    whatever answers at its old port now is not sent the token. True when it ended."""
    try:
        endpoint = discover(settings.url_file, settings.token_file)
    except IndexerOfflineError:
        return False
    if endpoint != left.endpoint:
        return False
    return await end_session(endpoint, left.session_id, settings.connect_timeout)
