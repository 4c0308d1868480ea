"""POST bodies to the MCP endpoint that are no JSON-RPC message, answered in plain words.

The MCP library (``mcp`` 2.3, its 2025 Streamable HTTP transport) answered them so:

- a body that is JSON but no message (``42``, an object without ``"jsonrpc": "2.0"``, a
  ``method`` that is no string, ``params`` that are no object): -32602 "Invalid params"
  and about 1 KB of its pydantic validation errors. JSON-RPC 2.0 says -32600 "Invalid
  Request"; the library's own 2026 transport says it in one line;
- a body sent without ``Content-Type: application/json`` (``curl -d``'s form type, or
  none): a 400 whose body is the bare text "Invalid Content-Type header", with no
  content type of its own and no JSON-RPC error for a client to read.

``media_refusal`` names the second before the library sees the request (``NotTextRefusals``
answers it 415, as the REST API does); ``plain_invalid_requests`` rewrites the first on
its way out. Only a 400 is held to be looked at: the answers of good requests pass as
they are sent.
"""

from __future__ import annotations

import json

from starlette.types import Message, Scope, Send

from indexer.web.limits import jsonrpc_refusal

_LIBRARY_WORDS = "Validation error: "  # (its words in mcp.server.streamable_http)
_INVALID_PARAMS = -32602
INVALID_REQUEST = (
    "invalid_argument: the body is not a JSON-RPC 2.0 message: send one JSON object with"
    ' "jsonrpc": "2.0" and a string "method" (and an "id", a string or a whole number, for'
    ' a request; "params", if any, an object)'
)


def media_refusal(scope: Scope) -> str | None:
    """The refusal of a POST whose Content-Type is not JSON (the library's own test:
    it starts with ``application/json``), or None."""
    for name, value in scope["headers"]:
        if name == b"content-type":
            given = value.decode("latin-1").strip()
            if given.lower().startswith("application/json"):
                return None
            break
    else:
        given = ""
    said = f"Content-Type {given[:60]!r}" if given else "no Content-Type"
    return (
        f"unsupported_media_type: a body with {said} is not taken: send the JSON-RPC"
        " message as application/json"
    )


def plain_invalid_requests(send: Send) -> Send:
    """``send`` with the library's answer to a body that is no message (see the module
    docstring) replaced by JSON-RPC's -32600 in plain words."""
    start: Message | None = None
    chunks: list[bytes] = []

    async def sending(message: Message) -> None:
        nonlocal start
        if message["type"] == "http.response.start" and message["status"] == 400:
            start = message  # held until its body is seen
            return
        if start is None or message["type"] != "http.response.body":
            await send(message)
            return
        chunks.append(message.get("body", b""))
        if message.get("more_body", False):
            return
        body = b"".join(chunks)
        if _is_library_validation_error(body):
            body = json.dumps(jsonrpc_refusal(None, None, INVALID_REQUEST)).encode()
        headers = [(k, v) for k, v in start.get("headers", []) if k != b"content-length"]
        headers.append((b"content-length", b"%d" % len(body)))
        await send({**start, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    return sending


def _is_library_validation_error(body: bytes) -> bool:
    try:
        answer = json.loads(body)
    except ValueError:
        return False
    error = answer.get("error") if isinstance(answer, dict) else None
    return (
        isinstance(error, dict)
        and answer.get("id") is None
        and error.get("code") == _INVALID_PARAMS
        and str(error.get("message", "")).startswith(_LIBRARY_WORDS)
    )
