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
JSON-RPC error for any other request, and a 400 with a JSON-RPC error naming the field
for a notification (which has no id to answer). Nothing runs.

It also answers a request whose id is no string or whole number (null, ``1.5``, an
object): the library took such a call for a notification, answered 202, did nothing,
and its client waited for an answer that never came; and a compressed body, with the
REST API's 415 (the library's answer was "Parse error: expected value"); a body not
sent as JSON, or no JSON-RPC message, as ``jsonrpc_shape`` says. A request
naming a session this server does not hold is left to the library, whatever its body:
its 404 tells the client to open a new session.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

from indexer.web.jsonrpc_shape import media_refusal, plain_invalid_requests
from indexer.web.limits import is_request_id, jsonrpc_refusal, replaying, reply
from indexer.web.sessions import unknown_session
from shared.utf8 import field_not_text

log = logging.getLogger("indexer.web")

# A top-level id that is no string or whole number may follow (null, true, an object, 1.5)
_ODD_ID = re.compile(rb'"id"\s*:\s*(?:[^\s"0-9-]|-?[0-9]+[.eE])')
_BAD_ID = "invalid_argument: the request's id is not a string or a whole number"
_BATCH_START = re.compile(rb"\s*\[")
_BATCH = (
    "invalid_argument: a JSON-RPC batch (an array of messages) is not taken: MCP sends one"
    " message a request since its 2025-06-18 version"
)


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
    """The JSON-RPC answer to a request whose body holds a lone surrogate, or whose id is
    none (``is_request_id``); None for any other body (the library parses it, and says
    what else may be wrong with it). An answer without an id goes out as a 400. A batch
    is refused whole, in words (the library's answer was pages of its validation errors)."""
    if _BATCH_START.match(body) is not None:
        return jsonrpc_refusal(None, None, _BATCH)
    # Only a body with a surrogate's escape (``\\ud8``-``\\udf``, maybe half of an escaped
    # emoji's pair) or an odd id is parsed twice: 0.13 s for 36 MB of escaped emoji.
    if b"\\ud" not in body and b"\\uD" not in body and _ODD_ID.search(body) is None:
        return None
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, dict):
        return None  # (a batch, a bare value: the library refuses them, 400)
    method, request_id = message.get("method"), message.get("id")
    request = isinstance(method, str) and "id" in message
    # The library took a call with such an id for a notification: 202, nothing done, its
    # client waiting. (A notification with ``"id": null``, as JSON-RPC 1.0 wrote one, and
    # an id holding a lone surrogate, refused by name below, are not refused so.)
    odd = request and not is_request_id(request_id) and not isinstance(request_id, str)
    if odd and not str(method).startswith("notifications/"):
        return jsonrpc_refusal(None, method, _BAD_ID)
    params = message.get("params")
    arguments = params.get("arguments") if isinstance(params, dict) else None
    text = not_text_refusal(arguments) if isinstance(arguments, dict) else None
    if text is None:  # elsewhere: a tool's name, a resource's URI, the id, a notification's
        bad = field_not_text(params) if isinstance(params, dict) else None
        bad = bad if bad is not None else field_not_text(message)
        if bad is None:  # (only escaped pairs: characters outside the BMP)
            return None
        what = "request" if request else "message"
        text = (
            f"invalid_argument: the {what}'s {bad!r} is not valid Unicode text (it holds a"
            " lone UTF-16 surrogate)"
        )
    return jsonrpc_refusal(request_id if request else None, method, text)


class NotTextRefusals:
    """ASGI wrapper of the MCP endpoint: a POST whose body holds a lone surrogate or an
    id that is none (``body_refusal``), is compressed or is not sent as JSON, is answered
    here; any other request goes on, its body replayed (and a body that is no JSON-RPC
    message answered as ``jsonrpc_shape`` says)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or self._gone(scope):
            await self.app(scope, receive, send)
            return
        coding = _coding(scope)
        if coding not in ("", "identity"):  # (the library: "Parse error: expected value")
            text = (
                f"unsupported_media_type: a body with Content-Encoding {coding[:40]!r} is not"
                " taken: send it uncompressed"
            )
            await reply(send, 415, jsonrpc_refusal(None, None, text))
            return
        media = media_refusal(scope)
        if media is not None:  # (the library: a bare "Invalid Content-Type header", 400)
            await reply(send, 415, jsonrpc_refusal(None, None, media))
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
            log.debug("refused a request: %s", _said(answer))
            await reply(send, 200 if answer["id"] is not None else 400, answer)
            return
        await self.app(scope, replaying(body, receive), plain_invalid_requests(send))

    def _gone(self, scope: Scope) -> bool:
        """A request for a session this server does not hold is the library's to answer
        (404: the client opens a new one), whatever its body."""
        return unknown_session(getattr(self.app, "session_manager", None), scope)


def _coding(scope: Scope) -> str:
    """The request's Content-Encoding, as the REST API reads it (``auth.csrf_refusal``)."""
    for name, value in scope["headers"]:
        if name == b"content-encoding":
            return value.decode("latin-1").strip().lower()
    return ""


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
