"""Tool arguments that are no text (a lone UTF-16 surrogate): one refusal, in-process and
over HTTP.

JSON may spell a lone surrogate (``"\\ud800"``: a JavaScript client's ``JSON.stringify``
writes one a model produced), and Python reads it as a ``str`` that no file, index or
log can store. ``ToolBoundary`` (``indexer.web.mcp``) refuses such an argument before
any tool runs; over HTTP, the MCP library's JSON parser refused the whole body first:
HTTP 400 and a JSON-RPC parse error without an id ("unexpected end of hex escape"), so
the client could not tell which call failed, or why. ``NotTextRefusals`` wraps the MCP
endpoint, inside the token check, and answers such a request itself with the refusal
the tool boundary gives (``not_text_refusal``): a tool error for ``tools/call``, a
JSON-RPC error for any other request. Nothing runs; the session is not looked at.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

from indexer.web.limits import jsonrpc_refusal, replaying, reply
from shared.utf8 import field_not_text

log = logging.getLogger("indexer.web")


def not_text_refusal(arguments: Mapping[str, object]) -> str | None:
    """The refusal of a call whose arguments hold text that is no UTF-8, naming the first
    such argument; None when every string is text."""
    bad = field_not_text(arguments)
    if bad is None:
        return None
    return (
        f"invalid_argument: the argument {bad!r} is not valid Unicode text (it holds a lone"
        " UTF-16 surrogate, which no file or index can store)"
    )


def body_refusal(body: bytes) -> dict | None:
    """The JSON-RPC answer to a request whose body holds a lone surrogate; None for any
    other body (the library parses it, and says what else may be wrong with it)."""
    # Only a body with a surrogate's escape (``\\ud8``-``\\udf``, maybe half of an escaped
    # emoji's pair) is parsed twice: 0.13 s for 36 MB of escaped emoji, none for others.
    if b"\\ud" not in body and b"\\uD" not in body:
        return None
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, dict) or not isinstance(message.get("method"), str):
        return None
    request_id = message.get("id")
    if request_id is None:  # a notification: there is no call to answer
        return None
    params = message.get("params")
    arguments = params.get("arguments") if isinstance(params, dict) else None
    text = not_text_refusal(arguments) if isinstance(arguments, dict) else None
    if text is None:  # elsewhere: a tool's name, a resource's URI, the id
        bad = field_not_text(params) if isinstance(params, dict) else None
        bad = bad if bad is not None else field_not_text(message)
        if bad is None:  # (only escaped pairs: characters outside the BMP)
            return None
        text = (
            f"invalid_argument: the request's {bad!r} is not valid Unicode text (it holds a"
            " lone UTF-16 surrogate)"
        )
    if field_not_text({"id": request_id}) is not None:
        request_id = None  # (echoed, it would be no JSON text either)
    return jsonrpc_refusal(request_id, message["method"], text)


class NotTextRefusals:
    """ASGI wrapper of the MCP endpoint: a POST whose body holds a lone surrogate is
    answered here (``body_refusal``); any other request goes on, its body replayed."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away mid-body: nothing to answer
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        answer = body_refusal(body)
        if answer is not None:
            log.debug("refused a request holding a lone surrogate: %s", _said(answer))
            await reply(send, 200, answer)
            return
        await self.app(scope, replaying(body, receive), send)


def _said(answer: dict) -> str:
    error = answer.get("error") or answer["result"]["content"][0]
    return str(error.get("message") or error.get("text"))[:200]


def refuse_lone_surrogates(app: Any) -> None:
    """Wrap the MCP endpoint of ``app`` (fastmcp's ``http_app``) in ``NotTextRefusals``,
    below the token check (a request without the token is still refused first)."""
    for route in getattr(app, "routes", []):
        parent, endpoint = route, getattr(route, "app", None)
        while endpoint is not None and not hasattr(endpoint, "session_manager"):
            parent, endpoint = endpoint, getattr(endpoint, "app", None)
        if endpoint is not None:
            parent.app = NotTextRefusals(endpoint)
            return
    log.warning("could not find the MCP endpoint: a lone surrogate fails its JSON parser")
