"""Where the REST API and the browser page hang in the daemon's one Starlette app."""

from __future__ import annotations

from pathlib import Path

from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import Receive, Scope, Send

from indexer.core import Core
from indexer.web.api import PREFIX, api_app
from indexer.web.auth import Logins, WebGuard, login_endpoints
from indexer.web.http_errors import no_route

UI_DIR = Path(__file__).resolve().parent / "ui"


def web_middleware(logins: Logins) -> list[Middleware]:
    """For ``http_app(middleware=...)``: runs inside fastmcp's Host/Origin guard."""
    return [Middleware(WebGuard, logins=logins)]


def web_routes(core: Core, logins: Logins) -> list[BaseRoute]:
    """``/api/v1`` (the REST API), ``/ui`` (the page's static files and its login), and
    ``/`` leading to the page."""
    login, login_link = login_endpoints(logins)
    ui = [
        Route("/login", login, methods=["GET", "POST"]),
        Mount("/", StaticFiles(directory=UI_DIR, html=True)),
    ]
    return [
        Route(PREFIX, _ApiRoot()),  # (an app, not a function: every method)
        Mount(PREFIX, app=api_app(core, login_link)),
        Mount("/ui", routes=ui),
        Route("/", _to_the_page, methods=["GET", "HEAD"]),
    ]


class _ApiRoot:
    """``/api/v1`` itself is no route: the API's JSON 404 for every method, not the
    router's redirect to ``/api/v1/`` (an empty 307, a PUT's body sent on to a 404)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await no_route(Request(scope))(scope, receive, send)


async def _to_the_page(request: Request) -> Response:
    """The server's own address, opened in a browser, is the page (it was a 404)."""
    return RedirectResponse("/ui/", status_code=307)
