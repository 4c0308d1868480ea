"""The ASGI app: the Vault MCP server at ``/mcp``, the REST API at ``/api/v1``, the
browser page at ``/ui`` and ``/health``, in one Starlette app over one ``Core``.

Host/Origin protection (DNS rebinding) comes from fastmcp's ``http_app`` and covers every
route of the app it returns; fastmcp matches names only, so ``ExactHostOrigin`` refuses
first what is not exactly a Host and Origin this server answers to. The bearer token
guards ``/mcp`` (fastmcp's auth) and ``/api/v1`` and ``/ui`` (``WebGuard``: the token or
the page's login cookie). ``/health`` answers without the token (liveness checks,
stale-URL detection), so it says nothing about the machine: which workspace it serves is
a digest (``workspace_id``), not a path.
Bounds on connections and requests: ``connections`` (uvicorn's protocol) and ``limits``
(``RequestLimits``, the MCP session manager's limits).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse

import indexer
from indexer.core import Core
from indexer.web.api import PREFIX
from indexer.web.auth import Logins
from indexer.web.host_origin import ExactHostOrigin
from indexer.web.http_errors import GuardRefusalsAsJson
from indexer.web.limits import RequestLimits, body_cap, tune_mcp_transport
from indexer.web.mcp import create_server
from indexer.web.mcp_text import refuse_lone_surrogates
from indexer.web.mount import web_middleware, web_routes
from indexer.web.request_target import RequestTargetForms
from shared.workspace import workspace_id


def build_app(core: Core) -> Starlette:
    """The app serving ``core``; built once per process by the daemon."""
    settings = core.settings
    mcp = create_server(core)
    served = workspace_id(settings.workspace.root)

    @mcp.custom_route("/health", methods=["GET"])
    async def health(request: Request) -> JSONResponse:
        index = core.index
        ready = index.ready if index is not None else False
        partial = index.partial if index is not None else True
        # (a vault this user may not read: its notes stay indexed, maybe out of date)
        kept_out = index.unreadable_vaults() if index is not None else {}
        return JSONResponse(
            {
                "status": "ok",
                "version": indexer.__version__,
                "index_ready": ready,
                "index_partial": partial or bool(kept_out),
                "unreadable_vaults": kept_out,
                "workspace_id": served,
                # (``config-snippet``: a snippet stays valid across restarts only then)
                "port_fixed": settings.port != 0,
            }
        )

    logins = Logins(settings.token)
    limits = settings.limits
    cap = body_cap(settings.max_file_bytes)
    bounded = Middleware(
        RequestLimits,
        max_requests=limits.max_requests,
        max_large_bodies=limits.max_large_bodies,
        max_body=cap,
    )
    app = mcp.http_app(
        path="/mcp",
        json_response=True,
        host_origin_protection=True,
        # (lists, even empty: None would read FASTMCP_HTTP_ALLOWED_* instead of ours)
        allowed_hosts=list(settings.allowed_hosts),
        allowed_origins=list(settings.allowed_origins),
        middleware=[*web_middleware(logins), bounded],
        session_idle_timeout=limits.session_idle_timeout,
    )
    refuse_lone_surrogates(app)  # (the MCP library's parser refused the whole body)
    app.router.routes.extend(web_routes(core, logins))
    app.add_middleware(
        ExactHostOrigin, hosts=settings.allowed_hosts, origins=settings.allowed_origins
    )  # (around fastmcp's guard: both refuse alike)
    app.add_middleware(GuardRefusalsAsJson, prefix=PREFIX)  # around the guards
    app.add_middleware(RequestTargetForms, prefix=PREFIX)  # outermost: the path they see
    started = app.router.lifespan_context

    @contextlib.asynccontextmanager
    async def lifespan(app_: Starlette) -> AsyncIterator[Any]:
        async with started(app_) as state:  # fastmcp builds the session manager here
            tune_mcp_transport(
                app,
                max_body=cap,
                max_sessions=limits.max_sessions,
                handshake_timeout=limits.session_handshake_timeout,
            )
            yield state

    app.router.lifespan_context = lifespan
    return app
