"""The ASGI app: the Vault MCP server at ``/mcp`` and ``/health``, in one Starlette app.

Host/Origin protection (DNS rebinding) comes from fastmcp's ``http_app`` and covers every
route of the app it returns; the bearer token guards ``/mcp``. ``/health`` answers without
the token (liveness checks, stale-URL detection), so it says nothing about the machine.
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse

import indexer
from indexer.core import Core
from indexer.web.mcp import create_server


def build_app(core: Core) -> Starlette:
    """The app serving ``core``; built once per process by the daemon."""
    settings = core.settings
    mcp = create_server(core)

    @mcp.custom_route("/health", methods=["GET"])
    async def health(request: Request) -> JSONResponse:
        ready = core.index.ready if core.index is not None else False
        return JSONResponse({"status": "ok", "version": indexer.__version__, "index_ready": ready})

    return mcp.http_app(
        path="/mcp",
        json_response=True,
        host_origin_protection=True,
        allowed_hosts=list(settings.allowed_hosts) or None,
        allowed_origins=list(settings.allowed_origins) or None,
    )
