"""A request's target in absolute form (``GET http://host:port/path``) read as RFC 9112
(section 3.2.2) says: its authority replaces the ``Host`` header, its path is the path.

uvicorn's h11 protocol puts the whole target in the scope's ``path`` and ``raw_path``
(``http://evil.example/api/v1/status``): no route matched it, so every such request got
a plain 404, whatever host it named, past the Host/Origin guards that never saw the
authority it was meant for. ``RequestTargetForms`` (outermost) rewrites the scope: the
target's authority becomes the one ``Host`` header and its path the path, so
``ExactHostOrigin`` answers 421 for a host this server does not serve, and the request
to its own (``http://127.0.0.1:PORT/...``) is served as in origin form.

A target of another scheme than the connection's (``https://`` on plain HTTP) is
misdirected too (421). Any other form (``*``, ``host:port``, a bare word, an authority
with user information) is refused 400: this server serves paths only.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from indexer.web.http_errors import COMMON_HEADERS, GuardRefusalsAsJson, error_response

# scheme "://" authority [path]: the authority ends at the first "/" (the query was cut
# off by uvicorn at the first "?"); a "#", "@" or space in it is no authority
_ABSOLUTE = re.compile(
    rb"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://(?P<authority>[^/#@\s]*)(?P<path>.*)"
)
BAD_TARGET = (
    "the request target must be a path (/...) or an absolute URL of this server "
    "(http://host:port/...)"
)


class RequestTargetForms:
    """ASGI middleware: an absolute-form target as its authority and path (see above)."""

    def __init__(self, app: ASGIApp, prefix: str) -> None:
        self.app = app
        self.prefix = prefix

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        raw = scope.get("raw_path") or b""
        if scope["type"] != "http" or raw.startswith(b"/"):
            await self.app(scope, receive, send)
            return
        found = _ABSOLUTE.fullmatch(raw)
        if found is None:
            await error_response("invalid_argument", BAD_TARGET, COMMON_HEADERS)(
                scope, receive, send
            )
            return
        path = found["path"] or b"/"
        if not path.startswith(b"/") or not found["authority"]:
            await error_response("invalid_argument", BAD_TARGET, COMMON_HEADERS)(
                scope, receive, send
            )
            return
        scope = rewritten(scope, found["authority"], path)
        if found["scheme"].decode("ascii").lower() != str(scope.get("scheme", "http")).lower():
            refused = Response("Misdirected Request", status_code=421)
            await GuardRefusalsAsJson(refused, self.prefix)(scope, receive, send)
            return
        await self.app(scope, receive, send)


def rewritten(scope: Scope, authority: bytes, raw_path: bytes) -> Scope:
    """``scope`` with ``authority`` its one Host header and ``raw_path`` its path (the
    path percent-decoded as uvicorn decodes one)."""
    headers = [(k, v) for k, v in scope.get("headers", ()) if k.lower() != b"host"]
    root = str(scope.get("root_path", ""))
    return {
        **scope,
        "headers": [(b"host", authority), *headers],
        "path": root + unquote(raw_path.decode("ascii")),
        "raw_path": root.encode("ascii") + raw_path,
    }
