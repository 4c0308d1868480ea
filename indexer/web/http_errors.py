"""The REST API's one error boundary: SPEC error codes to HTTP statuses, one JSON body.

Every refusal answers ``{"error": {"code": ..., "message": ...}}``. Vault codes map
through ``STATUS_BY_CODE``; the few transport codes (no credentials, a write without a
JSON or text body, an unknown route) are listed there too, so the table is the whole
story. Anything unexpected is logged with its traceback and answered as a masked
``internal`` 500: no host paths or exception text leave the process.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable, Mapping

from starlette.datastructures import Headers, MutableHeaders
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from indexer.vault import oserrors
from shared.errors import ConflictError, ExistenceConflictError, StorageError, VaultError

log = logging.getLogger("indexer.api")

STATUS_BY_CODE: dict[str, int] = {
    # vault codes (the SPEC's)
    "invalid_argument": 400,
    "invalid_lang": 400,
    "invalid_frontmatter": 400,
    "forbidden_path": 403,
    "not_found": 404,
    "conflict": 412,
    "too_large": 413,
    "internal": 500,
    # transport codes (this boundary's own)
    "unauthorized": 401,
    "forbidden_origin": 403,
    "method_not_allowed": 405,
    "unsupported_media_type": 415,
    "misdirected_request": 421,
}
# fastmcp's Host/Origin guard answers these statuses in plain words; on the API they
# become the one error body (``GuardRefusalsAsJson``).
GUARD_REFUSALS = {
    421: ("misdirected_request", "the Host header names no host this indexer serves"),
    403: ("forbidden_origin", "the request's Origin is not one this indexer allows"),
}
OPENAPI_PATH = "/api/v1/openapi.json"
INTERNAL_MESSAGE = "the indexer failed on this request (see its log)"
# On every answer (``auth.WebGuard``; the guard's own refusals by ``GuardRefusalsAsJson``).
COMMON_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}


class UnsupportedMediaTypeError(VaultError):
    """A body of a type the route does not take (415, as the CSRF check answers)."""

    code = "unsupported_media_type"


Endpoint = Callable[[Request], Awaitable[Response]]


def error_response(
    code: str, message: str, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    """The one error body, with the status of ``code``."""
    return JSONResponse(
        {"error": {"code": code, "message": message}},
        status_code=STATUS_BY_CODE.get(code, 500),
        headers=dict(headers or {}),
    )


def vault_error_response(err: VaultError) -> JSONResponse:
    if err.code == "internal":  # the server's own failure: the operator must hear of it
        log.error("request failed: %s", err)
    if isinstance(err, StorageError):  # deliberate words about the disk: shown as they are
        response = error_response("internal", err.message)
        response.status_code = err.http_status
        return response
    code = err.code if err.code in STATUS_BY_CODE else "internal"
    message = err.message if code != "internal" else INTERNAL_MESSAGE
    return error_response(code, message)


def header_words(request: Request, err: ExistenceConflictError) -> VaultError:
    """``err`` in the words of the header that asked it: a REST caller who sent
    ``If-None-Match: *`` read of the tool's ``if_match=''``, a parameter it never sent.
    (A route takes the precondition from a header or from the body, never both.)"""
    headers = request.headers
    if err.exists and "if-none-match" in headers:
        return ConflictError("the file already exists (If-None-Match: * means it must not)")
    if not err.exists and "if-match" in headers:
        return ConflictError("the file does not exist (If-Match: * means it must)")
    return err


def refusals(endpoint: Endpoint) -> Endpoint:
    """Run a route: a VaultError becomes its coded answer; anything unexpected is masked."""

    @functools.wraps(endpoint)
    async def wrapper(request: Request) -> Response:
        try:
            return await endpoint(request)
        except ExistenceConflictError as err:
            return vault_error_response(header_words(request, err))
        except VaultError as err:
            return vault_error_response(err)
        except FileNotFoundError:
            return error_response("not_found", "the file disappeared while the request ran")
        except OSError as err:
            described = oserrors.describe(err)
            if described is None:
                log.exception("%s %s failed", request.method, request.url.path)
                return error_response("internal", INTERNAL_MESSAGE)
            log.warning("%s %s: %s (%s)", request.method, request.url.path, described, err.strerror)
            return vault_error_response(described)
        except Exception:
            log.exception("%s %s failed", request.method, request.url.path)
            return error_response("internal", INTERNAL_MESSAGE)

    return wrapper


async def http_exception(request: Request, exc: Exception) -> Response:
    """Starlette's own refusals (no such route, wrong method) in the same body."""
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    if status == 405:
        allow = (
            exc.headers.get("Allow", "") if isinstance(exc, HTTPException) and exc.headers else ""
        )
        return error_response(
            "method_not_allowed", f"{request.method} is not allowed here", {"Allow": allow}
        )
    if status == 404:
        return no_route(request)
    return error_response("invalid_argument", str(getattr(exc, "detail", "bad request")))


def no_route(request: Request) -> Response:
    """The 404 of a path that is no route (the document of the routes named)."""
    return error_response(
        "not_found", f"no API route {request.url.path} (the routes: {OPENAPI_PATH})"
    )


async def server_error(request: Request, exc: Exception) -> Response:
    log.error("%s %s failed", request.method, request.url.path, exc_info=exc)
    return error_response("internal", INTERNAL_MESSAGE)


class GuardRefusalsAsJson:
    """ASGI middleware outside fastmcp's Host/Origin guard: its plain-text refusal of an
    API request (421 for the Host, 403 for the Origin) is answered as the error body, as
    every other API refusal is. On other paths (``/mcp``, ``/health``, the page, a 404)
    every answer, the guard's refusals included, gets the security headers the API's
    answers have (``WebGuard`` adds them there)."""

    def __init__(self, app: ASGIApp, prefix: str) -> None:
        self.app = app
        self.prefix = prefix

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        on_api = path == self.prefix or path.startswith(self.prefix + "/")
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if not on_api:

            async def secured(message: Message) -> None:
                if message["type"] == "http.response.start":
                    headers = MutableHeaders(raw=list(message.get("headers", [])))
                    for name, value in COMMON_HEADERS.items():
                        headers.setdefault(name, value)
                    message["headers"] = headers.raw
                await send(message)

            await self.app(scope, receive, secured)
            return
        replaced = False

        async def relay(message: Message) -> None:
            nonlocal replaced
            if message["type"] == "http.response.start":
                refusal = GUARD_REFUSALS.get(message["status"])
                headers = Headers(raw=message.get("headers", []))
                if refusal and "json" not in headers.get("content-type", ""):
                    replaced = True
                    await error_response(*refusal, COMMON_HEADERS)(scope, receive, send)
                    return
            if not replaced:
                await send(message)

        await self.app(scope, receive, relay)
