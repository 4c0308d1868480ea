"""The app uvicorn starts with: requests before the real app is built wait for it,
its lifespan runs from ready() to our shutdown, and a failed build answers 503."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from indexer.web.deferred import DeferredApp


def real_app(events: list[str]) -> Starlette:
    async def hello(request: Request) -> JSONResponse:
        return JSONResponse({"hello": request.state.greeting})

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[dict[str, Any]]:
        events.append("startup")
        yield {"greeting": "world"}
        events.append("shutdown")

    return Starlette(routes=[Route("/hello", hello)], lifespan=lifespan)


async def get(app: DeferredApp, path: str) -> tuple[int, bytes]:
    sent: list[dict] = []

    async def receive() -> dict:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "GET",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": [(b"host", b"127.0.0.1")],
        "scheme": "http",
        "server": ("127.0.0.1", 80),
        "http_version": "1.1",
        "root_path": "",
        "state": {},
    }
    await app(scope, receive, send)
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return status, body


async def lifespan_of(app: DeferredApp) -> tuple[asyncio.Queue, asyncio.Queue, asyncio.Task]:
    inbox: asyncio.Queue = asyncio.Queue()
    outbox: asyncio.Queue = asyncio.Queue()
    task = asyncio.create_task(app({"type": "lifespan", "state": {}}, inbox.get, outbox.put))
    await inbox.put({"type": "lifespan.startup"})
    assert (await outbox.get())["type"] == "lifespan.startup.complete"  # at once
    return inbox, outbox, task


async def test_early_requests_wait_for_the_real_app_and_its_lifespan_state() -> None:
    app = DeferredApp()
    inbox, outbox, task = await lifespan_of(app)
    early = asyncio.create_task(get(app, "/hello"))
    await asyncio.sleep(0.05)
    assert not early.done()  # held, not refused
    events: list[str] = []
    await app.ready(real_app(events))
    assert events == ["startup"]
    assert await early == (200, b'{"hello":"world"}')
    assert await get(app, "/hello") == (200, b'{"hello":"world"}')
    await inbox.put({"type": "lifespan.shutdown"})
    assert (await outbox.get())["type"] == "lifespan.shutdown.complete"
    await task
    assert events == ["startup", "shutdown"]


async def test_a_failed_build_answers_unavailable() -> None:
    app = DeferredApp()
    early = asyncio.create_task(get(app, "/mcp"))
    await asyncio.sleep(0.01)
    app.failed()
    status, body = await early
    assert status == 503 and b"unavailable" in body
