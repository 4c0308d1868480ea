"""Who may use ``/api/v1`` and ``/ui``, and what a browser may make them do.

Host/Origin checks come first, from fastmcp's guard around the whole app (the same
one ``/mcp`` has). Then ``WebGuard``:

- With a token configured, every request needs ``Authorization: Bearer <token>``
  (compared in constant time) or the page's session cookie; else 401. Without a
  token, loopback access works as it does for ``/mcp``. Two ``Authorization`` lines
  are refused 400 on every path, ``/mcp`` too (``repeated_credentials``): read as their
  first, a right token first let a request through whatever the second said.
- The cookie comes only from a one-time login code: ``indexer open`` asks
  ``POST /api/v1/login-link`` (bearer token only) for a code that lives 60 seconds and
  works once, and hands it to the browser in a 0600 file (``indexer.cli.login_file``)
  that leads to ``/ui/login#code=``: the page there (``login.js``) posts the fragment to
  ``POST /ui/login``, which trades it for an ``HttpOnly; SameSite=Strict`` cookie holding
  a random session id (the token itself never reaches the browser; the code never
  reaches a command line, which every local user reads in /proc). ``GET
  /ui/login?code=`` does the same for a link pasted by hand (``indexer open --print``).
- CSRF (``csrf_refusal``, applied by each API write route): a write (PUT/POST/DELETE)
  must carry a JSON or text content type (the SPEC's rule); a DELETE without a body
  needs none (``curl -X DELETE`` or ``requests.delete`` send none: they were refused
  415). A form on another site cannot PUT or DELETE at all, and POSTs only form or
  text/plain types: POST routes take JSON only (checked where they parse). A cross-site
  script that sends a DELETE, or sets such a type, needs a CORS preflight, which this
  server never grants; the Origin guard refuses a foreign origin anyway, and the Strict
  cookie is never sent cross-site.
- Every answer gets nosniff, no-referrer and no framing; the page a strict CSP (no
  inline script, no eval); the API a CSP that runs nothing, so even a raw file opened
  as a page is inert.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from html import escape

from starlette.datastructures import Headers, MutableHeaders
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from indexer.web.http_errors import COMMON_HEADERS, error_response
from indexer.web.params import (
    JSON_TYPES,
    REQUIRED,
    fields,
    is_text_type,
    json_object,
    read_body,
)
from shared.errors import VaultError

CODE_SECONDS = 60.0
SESSION_SECONDS = 24 * 3600.0
MAX_SESSIONS = 64
LOGIN_PATHS = ("/ui/login", "/ui/login.js")  # (what a browser not logged in may fetch)
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
UI_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
API_CSP = "default-src 'none'; img-src 'self'; frame-ancestors 'none'; sandbox"
Clock = Callable[[], float]
Endpoint = Callable[[Request], Awaitable[Response]]


def _digest(secret: str) -> bytes:
    return hashlib.sha256(secret.encode("utf-8", "surrogateescape")).digest()


@dataclass
class Logins:
    """One-time login codes and the browser sessions they opened (in memory: a restart
    logs the page out, which is what a restart of a local daemon should do)."""

    token: str | None
    clock: Clock = time.monotonic
    _codes: dict[bytes, float] = field(default_factory=dict)
    _sessions: dict[bytes, float] = field(default_factory=dict)

    def bearer_ok(self, header: str | None) -> bool:
        scheme, _, credentials = (header or "").partition(" ")
        if self.token is None or scheme.lower() != "bearer":  # RFC 9110: any case, as /mcp
            return False
        # exactly what follows one space, as /mcp reads it ("Bearer  tok" is refused by both)
        given = credentials.encode("utf-8", "surrogateescape")
        return hmac.compare_digest(given, self.token.encode("utf-8"))

    def mint_code(self) -> str:
        now = self.clock()
        self._codes = {k: t for k, t in self._codes.items() if t > now}
        code = secrets.token_urlsafe(32)
        self._codes[_digest(code)] = now + CODE_SECONDS
        return code

    def redeem(self, code: str) -> str | None:
        """A new session id for a live, unused code (the code is spent either way)."""
        expires = self._codes.pop(_digest(code), None)
        now = self.clock()
        if expires is None or expires <= now:
            return None
        self._sessions = {k: t for k, t in self._sessions.items() if t > now}
        while len(self._sessions) >= MAX_SESSIONS:  # drop the oldest
            self._sessions.pop(min(self._sessions, key=self._sessions.__getitem__))
        session = secrets.token_urlsafe(32)
        self._sessions[_digest(session)] = now + SESSION_SECONDS
        return session

    def session_ok(self, session: str | None) -> bool:
        if not session:
            return False
        expires = self._sessions.get(_digest(session))
        return expires is not None and expires > self.clock()


def cookie_name(scope: Scope) -> str:
    """Per port: cookies ignore ports, and two indexers must not log each other out."""
    server = scope.get("server")
    return f"vault_ui_{server[1]}" if server and server[1] else "vault_ui"


def _area(path: str) -> str | None:
    if path.startswith("/api/"):
        return "api"
    if path == "/ui" or path.startswith("/ui/"):
        return "ui"
    return None


class WebGuard:
    """ASGI middleware for ``/api/`` and ``/ui``: credentials and security headers."""

    def __init__(self, app: ASGIApp, logins: Logins) -> None:
        self.app = app
        self.logins = logins

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        area = _area(scope.get("path", "")) if scope["type"] == "http" else None
        if scope["type"] == "http" and self.logins.token is not None:
            refusal = repeated_credentials(scope, area)
            if refusal is not None:
                await refusal(scope, receive, send if area is None else _with_headers(send, area))
                return
        if area is None:
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        refusal = self._refusal(scope, headers, area)
        send = _with_headers(send, area)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _refusal(self, scope: Scope, headers: Headers, area: str) -> Response | None:
        state = scope.setdefault("state", {})
        if self.logins.token is None:
            state["auth"] = "none"
        elif self.logins.bearer_ok(headers.get("authorization")):
            state["auth"] = "bearer"
        elif self.logins.session_ok(Request(scope).cookies.get(cookie_name(scope))):
            state["auth"] = "cookie"
        elif scope["path"] not in LOGIN_PATHS:
            return _unauthorized(area)
        if area == "api" and "\n" in scope["path"]:
            # No route pattern matches a line feed (``.`` stops there): it would meet the
            # outer app's plain-text 404 rather than the API's JSON refusal.
            return error_response("forbidden_path", "the path contains a control character")
        return None


def repeated_credentials(scope: Scope, area: str | None) -> Response | None:
    """The refusal of a request with more than one ``Authorization`` line, or None.

    Credentials that say two things are not guessed at (RFC 6750 3.1: 400
    ``invalid_request``): Starlette and the MCP library read the first line alone."""
    lines = sum(1 for name, _ in scope.get("headers", ()) if name.lower() == b"authorization")
    if lines < 2:
        return None
    message = f"send one Authorization header, not {lines}: which one holds the token?"
    if area == "api":
        return error_response("invalid_argument", message)
    if area == "ui":
        return _page(400, "Two Authorization headers", escape(message))
    return JSONResponse({"error": "invalid_request", "error_description": message}, 400)


def csrf_refusal(method: str, headers: Headers) -> Response | None:
    """The refusal of a write that a cross-site form could have sent, or that says its
    body's type twice (400), or None.

    Applied by the API to each of its write routes (after routing, so an unknown
    method still answers 405)."""
    if method not in UNSAFE_METHODS:
        return None
    kinds = headers.getlist("content-type")
    if len(kinds) > 1 or "," in "".join(kinds).partition(";")[0]:
        # (read as the first, a body also said to be JSON was stored as Markdown)
        return error_response(
            "invalid_argument", "send one Content-Type: the body is of one type, not several"
        )
    coding = headers.get("content-encoding", "").strip().lower()
    if coding not in ("", "identity"):  # (a gzip body was read as text, or refused as not UTF-8)
        return error_response(
            "unsupported_media_type",
            f"a body with Content-Encoding {coding[:40]!r} is not taken: send it uncompressed",
        )
    kind = headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if kind in JSON_TYPES or is_text_type(kind):  # (a POST route then takes JSON only)
        return None
    if method == "DELETE" and not kind and not _carries_body(headers):
        return None
    need = {
        "DELETE": "application/json or a text type, or none and no body",
        "POST": "application/json",
    }.get(method, "application/json or a text type (text/markdown, text/plain...)")
    return error_response(
        "unsupported_media_type", f"a {method} needs Content-Type {need} (no form posts)"
    )


def _carries_body(headers: Headers) -> bool:
    """Whether a request says it sends a body (a length past 0, or chunks)."""
    length = headers.get("content-length", "").strip()
    return length not in ("", "0") or "transfer-encoding" in headers


def _unauthorized(area: str) -> Response:
    challenge = {"WWW-Authenticate": 'Bearer realm="vault-memory"'}
    if area == "api":
        return error_response(
            "unauthorized", "send Authorization: Bearer <token> (see indexer.mcp.token)", challenge
        )
    return _page(
        401,
        "Login needed",
        "This indexer has a token. Open the page with <code>indexer open --workspace W</code>, "
        "which logs this browser in through a one-time link.",
        challenge,
    )


def _page(status: int, title: str, body_html: str, headers: dict | None = None) -> HTMLResponse:
    html = (
        f'<!doctype html><meta charset="utf-8"><title>{escape(title)}</title>'
        f"<main><h1>{escape(title)}</h1><p>{body_html}</p></main>"
    )
    return HTMLResponse(html, status_code=status, headers=headers)


def _with_headers(send: Send, area: str) -> Send:
    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = MutableHeaders(scope=message)
            for name, value in COMMON_HEADERS.items():
                headers.setdefault(name, value)
            headers.setdefault("Content-Security-Policy", UI_CSP if area == "ui" else API_CSP)
            if area == "api":
                headers.setdefault("Cache-Control", "no-store")
        await send(message)

    return sending


def login_endpoints(logins: Logins) -> tuple[Endpoint, Endpoint]:
    """``GET /ui/login?code=`` (the one-time link) and ``POST /api/v1/login-link``."""

    async def login(request: Request) -> Response:
        if logins.token is None:
            return RedirectResponse("/ui/", status_code=303)
        if request.method == "POST":
            return await _posted_login(request, logins)
        code = request.query_params.get("code", "")
        if not code:  # (the code is in the fragment, which only the page's script reads)
            return _page(200, "Logging in", LOGIN_SCRIPT)
        session = logins.redeem(code)
        if session is None:
            return _expired()
        return _with_session(RedirectResponse("/ui/", status_code=303), request, session)

    async def login_link(request: Request) -> Response:
        data = await read_body(request, 1024)
        fields(json_object(data) if data else {}, {})  # an empty object, or no body at all
        if logins.token is None:
            return JSONResponse({"path": "/ui/", "expires_in": None})
        if request.state.auth != "bearer":
            return error_response("unauthorized", "a login link needs the bearer token")
        code = logins.mint_code()
        return JSONResponse({"path": f"/ui/login?code={code}", "expires_in": int(CODE_SECONDS)})

    return login, login_link


LOGIN_SCRIPT = (
    'Logging this browser in&hellip;<script src="/ui/login.js"></script>'
    "<noscript>The login needs JavaScript.</noscript>"
)


def _expired() -> Response:
    return _page(
        401,
        "This login link has expired",
        "A login link works once, for a minute. Run <code>indexer open --workspace W</code> again.",
    )


async def _posted_login(request: Request, logins: Logins) -> Response:
    """``POST /ui/login`` with ``{"code": ...}`` (JSON only: no form can send it): the
    session cookie in a same-origin answer, so the page's next navigation, made by this
    origin, carries the Strict cookie (a redirect answering a navigation that began in
    a file:// page would not: its chain began cross-site)."""
    refusal = csrf_refusal("POST", request.headers)
    if refusal is not None:
        return refusal
    try:
        body = fields(json_object(await read_body(request, 1024)), {"code": (str, REQUIRED)})
    except VaultError as err:
        return error_response(err.code, str(err))
    session = logins.redeem(body["code"]) if body["code"] else None
    if session is None:
        return error_response("unauthorized", "this login code has expired or was used")
    return _with_session(JSONResponse({"page": "/ui/"}), request, session)


def _with_session(response: Response, request: Request, session: str) -> Response:
    response.set_cookie(
        cookie_name(request.scope),
        session,
        max_age=int(SESSION_SECONDS),
        path="/",
        httponly=True,
        samesite="strict",
    )
    return response
