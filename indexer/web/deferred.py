"""The ASGI app uvicorn starts with: it accepts at once and serves once the real app
(``indexer.web.app``) is built.

Importing fastmcp and the MCP SDK takes about a second, most of a start-up; nothing
of it is needed to bind the port. So the daemon starts uvicorn with this app, writes
the URL file as soon as the port accepts connections, and then builds the real app
(``ready``). Requests that arrive before are held until then (none is answered by
anything less than the real app: the Host/Origin guard and the token are its own);
if building it fails they get a 503 and the daemon stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

log = logging.getLogger("indexer.web")

WAIT_SECONDS = 60.0
_UNAVAILABLE = b'{"error": {"code": "unavailable", "message": "the indexer failed to start"}}'


class DeferredApp:
    """ASGI: lifespan answered at once; requests wait for ``ready(app)``."""

    def __init__(self) -> None:
        self._app: ASGIApp | None = None
        self._state: dict[str, Any] = {}
        self._ready = asyncio.Event()
        self._failed = False
        self._stop = asyncio.Event()
        self._lifespan: asyncio.Task[None] | None = None

    async def ready(self, app: Any) -> None:
        """Run ``app``'s lifespan (startup now, shutdown with ours) and serve it."""
        started: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        async def run() -> None:  # one task enters and leaves the lifespan (anyio's rule)
            try:
                async with app.router.lifespan_context(app) as state:
                    self._state = dict(state or {})
                    started.set_result(None)
                    await self._stop.wait()
            except BaseException as err:
                if not started.done():
                    started.set_exception(err)
                raise

        self._lifespan = asyncio.create_task(run())
        await started
        self._app = app
        self._ready.set()

    def failed(self) -> None:
        """The real app could not be built: answer 503 to whoever waits."""
        self._failed = True
        self._ready.set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan_events(receive, send)
            return
        if not self._ready.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._ready.wait(), WAIT_SECONDS)
        app = self._app
        if app is None or self._failed:
            if scope["type"] == "http":
                await _unavailable(send)
            return
        if self._state:
            scope["state"] = {**scope.get("state", {}), **self._state}
        await app(scope, receive, send)

    async def _lifespan_events(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                self._stop.set()
                if self._lifespan is not None:
                    try:
                        await self._lifespan
                    except Exception:
                        log.exception("the app's shutdown failed")
                await send({"type": "lifespan.shutdown.complete"})
                return


async def _unavailable(send: Send) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": 503,
            "headers": [(b"content-type", b"application/json")],
        }
    )
    await send({"type": "http.response.body", "body": _UNAVAILABLE})
