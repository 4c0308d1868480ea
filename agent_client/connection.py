"""Talk to the indexer's Vault MCP server: one session, lang-bound typed handles.

``open_session(settings)`` discovers the URL, connects within ``connect_timeout`` (a
busy server asked again, as a call is: ``mcp_client``) and yields a ``VaultSession``;
``session.vault(lang)`` is a ``Vault`` handle with one typed method per tool
(``agent_client.vault``).
``mcp_vault_connection(lang)`` does both for one-off use.

Errors are mapped here, in one place: a tool refusal becomes the ``VaultError`` subclass
named by its code (``error_from_message``); anything that means "no server to talk to"
(no URL file, connection refused, timeout, the server vanished mid-call) becomes
``IndexerOfflineError`` and marks the session broken so the caller reconnects.

A server that lost the client's MCP session (2025 protocol: the client's when the
server refused its ``server/discover`` probe other than as busy) to a restart or its
idle timeout answers 404: the call is made again, once, on a new connection
(``session_gone``: it never ran). A call that failed on the way to an indexer that
restarted on another port since is made again there, once, if it may be
(``repeats``: a read, or a call none of whose requests left this client).

The MCP client (fastmcp and the MCP SDK: over a second to import) is imported as a
session opens, once the URL file names a server: ``--help``, bad usage and an indexer
that is not running answer without it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from agent_client.discovery import Endpoint, discover
from agent_client.off_loop import import_off_loop
from agent_client.repeats import READ_ONLY_TOOLS, Sending, moved_to, noting
from agent_client.settings import ClientSettings
from agent_client.transport_logs import quiet_transport_logs
from agent_client.unreachable import (
    asked_while_busy,
    is_offline,
    said_busy,
    session_gone,
    why_unreachable,
)
from agent_client.vault import Vault
from shared.errors import (
    IndexerOfflineError,
    InvalidArgumentError,
    NotFoundError,
    VaultError,
    error_from_message,
)
from shared.langs import check_lang
from shared.utf8 import texts_in, utf8_problem

if TYPE_CHECKING:
    from fastmcp import Client

logger = logging.getLogger("agent_client.connection")
T = TypeVar("T")


class VaultSession:
    """One live connection to the indexer; not bound to a lang."""

    def __init__(
        self,
        client: Client[Any],
        endpoint: Endpoint,
        call_timeout: float,
        *,
        settings: ClientSettings | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.broken = False
        self._client = client
        self._call_timeout = call_timeout
        self._settings = settings  # to connect again with (None: never, an in-memory server)
        self._reconnecting = asyncio.Lock()
        self._tools: dict[str, frozenset[str]] | None = None  # name -> its parameters
        self._prompts: dict[str, str] = {}

    def vault(self, lang: str) -> Vault:
        return Vault(self, check_lang(lang))

    @property
    def alive(self) -> bool:
        return not self.broken and self._client.is_connected()

    @property
    def session_id(self) -> str | None:
        """The server's MCP session of this connection: the 2025 protocol's (the 2026
        protocol has none), as the MCP client took it from the server's answers."""
        get = getattr(self._client.transport, "get_session_id", None)
        found = get() if callable(get) else None
        return found if isinstance(found, str) and found else None

    def forget_prompts(self) -> None:
        """Ask for the prompts again: the server reads them from files that can be edited
        while it runs. Its tools stay those of its start (``Endpoint.instance``)."""
        self._prompts.clear()

    async def close(self) -> None:
        await _close_client(self._client)

    async def _on_client(self, use: Callable[[Client[Any]], Awaitable[T]], *, read_only: bool) -> T:
        """``use(client)``; once more on a new connection when the server no longer knows
        this client's session: it refused the request before any tool saw it, so even a
        write is not made twice; or when the indexer restarted elsewhere, if ``repeats``
        says the call may be made again. ``IndexerOfflineError`` if none can be made."""
        client, endpoint, settings = self._client, self.endpoint, self._settings
        try:
            with noting(changing=not read_only) as sending:
                return await _noted(use(client), sending)
        except Exception as exc:
            lost = session_gone(exc)
            moved = None if lost else moved_to(settings, endpoint, exc, read_only, sending)
            if settings is None or not (lost or moved):
                raise
        with noting():  # (connecting again changes nothing: no request of the call's)
            await self._reconnect(client, settings, moved)
        with noting(changing=not read_only) as sending:
            return await _noted(use(self._client), sending)

    async def _reconnect(
        self, gone: Client[Any], settings: ClientSettings, moved: Endpoint | None = None
    ) -> None:
        """Connect again in place of ``gone``: to ``moved``, where the indexer restarted,
        else to the indexer the URL file names (which lost this client's session)."""
        async with self._reconnecting:
            if self._client is not gone:
                return  # (a call made meanwhile connected again already)
            self.broken = True  # until connected again
            endpoint = moved or discover(settings.url_file, settings.token_file)
            self._client = await _open_client(settings, endpoint)
            self.broken = False
            before, self.endpoint = self.endpoint, endpoint
            if endpoint != before:  # a restart: its tools may have changed
                self._tools = None
                self._prompts.clear()
        if moved is not None:
            logger.info("the indexer at %s restarted at %s: connected there", before.url, moved.url)
        else:
            logger.info(
                "the indexer at %s had lost this client's session: connected again", endpoint.url
            )
        await _close_client(gone)

    async def call(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        """Call one tool; its JSON result, or the typed error it was refused with.

        A server at its cap of requests in flight refuses at the door (503, the request
        unread, so nothing of it ran) with ``unavailable``: the call is made again after
        a growing pause, for up to about ``sum(BUSY_PAUSES)`` seconds.

        Text that is not UTF-8 (a lone surrogate) is refused here: sent, it would break
        the transport, which looks like an offline indexer."""
        from fastmcp.exceptions import ToolError  # (loaded with the client: ``open_session``)

        for key, value in args.items():
            for text in texts_in(value):
                problem = utf8_problem(text)
                if problem is not None:
                    raise InvalidArgumentError(
                        f"the argument {key!r} is not valid UTF-8 text: {problem}"
                    )
        handled = sys.exc_info()[1]  # (what the caller handles: no part of why we failed)
        try:
            result = await asked_while_busy(
                lambda: self._on_client(
                    lambda client: client.call_tool(name, args, timeout=self._call_timeout),
                    read_only=name in READ_ONLY_TOOLS,
                ),
                said_busy,
                f"tool {name!r} at {self.endpoint.url}: the indexer",
            )
        except ToolError as exc:
            raise error_from_message(str(exc)) from None
        except IndexerOfflineError:  # (it could not connect again, or stayed busy)
            raise
        except Exception as exc:
            raise self._offline(f"tool {name!r}", exc, handled) from exc
        data = result.structured_content
        if not isinstance(data, dict):
            raise VaultError(f"tool {name!r} returned no JSON object")
        return data

    async def tool_names(self) -> frozenset[str]:
        """Names of the tools the server offers (asked once per session)."""
        return frozenset(await self._tool_params())

    async def tool_params(self, name: str) -> frozenset[str]:
        """The parameters of the server's tool ``name`` (none when it has no such tool):
        an older server refuses a parameter it does not know."""
        return (await self._tool_params()).get(name, frozenset())

    async def _tool_params(self) -> dict[str, frozenset[str]]:
        if self._tools is None:
            handled = sys.exc_info()[1]
            try:
                tools = await self._on_client(lambda client: client.list_tools(), read_only=True)
            except IndexerOfflineError:
                raise
            except Exception as exc:
                raise self._offline("list_tools", exc, handled) from exc
            self._tools = {t.name: frozenset(t.input_schema.get("properties", {})) for t in tools}
        return self._tools

    async def prompt_text(self, name: str) -> str:
        """The text of a served prompt (``prompts/<name>.md``), as prompt or resource."""
        if name not in self._prompts:
            self._prompts[name] = await self._load_prompt(name)
        return self._prompts[name]

    async def _load_prompt(self, name: str) -> str:
        handled = sys.exc_info()[1]
        try:
            result = await self._on_client(lambda client: client.get_prompt(name), read_only=True)
            texts = [getattr(m.content, "text", "") for m in result.messages]
            if any(texts):
                return "\n\n".join(t for t in texts if t)
        except IndexerOfflineError:
            raise
        except Exception as exc:
            if is_offline(exc):
                raise self._offline(f"prompt {name!r}", exc, handled) from exc
        try:
            contents = await self._on_client(
                lambda client: client.read_resource(f"vault://prompts/{name}"), read_only=True
            )
        except IndexerOfflineError:
            raise
        except Exception as exc:
            if is_offline(exc):
                raise self._offline(f"resource {name!r}", exc, handled) from exc
            raise NotFoundError(f"the indexer serves no prompt {name!r} ({exc})") from None
        return "\n\n".join(getattr(c, "text", "") for c in contents)

    def _offline(
        self, what: str, exc: BaseException, handled: BaseException | None
    ) -> IndexerOfflineError:
        self.broken = True
        why = why_unreachable(exc, self._call_timeout, handled)
        return IndexerOfflineError(f"{what} at {self.endpoint.url} failed: {why}")


async def _open_client(settings: ClientSettings, endpoint: Endpoint) -> Client[Any]:
    """A client connected to the indexer at ``endpoint``, which serves the settings'
    workspace, once it has a place for it; else ``IndexerOfflineError``. (The MCP client
    is imported here, once a server is named, off the event loop: see the module.)"""
    await import_off_loop("agent_client.mcp_client")
    from agent_client.mcp_client import connect_client

    return await connect_client(settings, endpoint)


async def end_session(endpoint: Endpoint, session_id: str, timeout: float) -> bool:
    """End an MCP session on the server without its connection (``mcp_client``)."""
    await import_off_loop("agent_client.mcp_client")
    from agent_client.mcp_client import delete_session

    return await delete_session(endpoint, session_id, timeout)


async def _close_client(client: Client[Any]) -> None:
    from agent_client.mcp_client import close_client

    await close_client(client)


@contextlib.asynccontextmanager
async def open_session(
    settings: ClientSettings, endpoint: Endpoint | None = None
) -> AsyncIterator[VaultSession]:
    """Connect within ``settings.connect_timeout``; else ``IndexerOfflineError``.

    The endpoint is discovered now (from the URL file) unless the caller just did so.
    """
    quiet_transport_logs()
    endpoint = endpoint or discover(settings.url_file, settings.token_file)
    client = await _open_client(settings, endpoint)
    session = VaultSession(client, endpoint, settings.call_timeout, settings=settings)
    try:
        yield session
    finally:
        await session.close()


@contextlib.asynccontextmanager
async def mcp_vault_connection(
    lang: str, settings: ClientSettings | None = None
) -> AsyncIterator[Vault]:
    """A lang-bound vault handle over a fresh connection (settings default to the env)."""
    check_lang(lang)
    async with open_session(settings or ClientSettings.resolve()) as session:
        yield session.vault(lang)


async def _noted(call: Awaitable[T], sending: Sending) -> T:
    """``call``, its requests noted in ``sending``; one the server refused unread (busy,
    or its session gone) ran nothing, whatever answer came back."""
    try:
        return await call
    except Exception as exc:
        if session_gone(exc) or said_busy(exc):
            sending.ran_nothing()
        raise
