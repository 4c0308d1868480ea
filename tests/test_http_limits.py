"""``RequestLimits`` on its own, as ASGI: a call whose client went away before its answer
is cancelled (the MCP library answering in JSON never reads the stream again)."""

from __future__ import annotations

import anyio
import pytest
from starlette.types import Message, Receive, Scope, Send

from indexer.web.limits import RequestLimits

BODY = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call"}'
SCOPE: Scope = {
    "type": "http",
    "method": "POST",
    "path": "/mcp",
    "headers": [(b"content-length", str(len(BODY)).encode())],
}


def client(gone_after: float | None) -> tuple[Receive, list[Message]]:
    """The body, then (after ``gone_after`` seconds, or never) the client's going away."""
    sent: list[Message] = []
    messages = [{"type": "http.request", "body": BODY, "more_body": False}]

    async def receive() -> Message:
        if messages:
            return messages.pop()
        if gone_after is None:
            await anyio.sleep_forever()
        await anyio.sleep(gone_after)
        return {"type": "http.disconnect"}

    return receive, sent


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_call_whose_client_went_away_is_cancelled(anyio_backend: str) -> None:
    cancelled: list[bool] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        assert (await receive())["body"] == BODY
        try:
            await anyio.sleep(5)  # (a long call)
        except anyio.get_cancelled_exc_class():
            cancelled.append(True)
            raise

    receive, sent = client(gone_after=0.05)
    with anyio.fail_after(2):
        await RequestLimits(app, max_requests=4, max_large_bodies=1, max_body=1 << 20)(
            SCOPE,
            receive,
            sent.append,  # type: ignore[arg-type]
        )
    assert cancelled == [True] and sent == []


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_an_answered_call_is_not_cancelled_and_errors_pass_as_they_are(
    anyio_backend: str,
) -> None:
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await receive()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}", "more_body": False})
        await anyio.sleep(0.1)  # (the server notes the answer sent: the stream ends)

    async def sending(message: Message) -> None:
        sent.append(message)

    receive, sent = client(gone_after=0)  # (the stream ends at once once answered)
    limits = RequestLimits(app, max_requests=4, max_large_bodies=1, max_body=1 << 20)
    await limits(SCOPE, receive, sending)
    assert [m["type"] for m in sent] == ["http.response.start", "http.response.body"]

    async def failing(scope: Scope, receive: Receive, send: Send) -> None:
        await receive()
        raise ValueError("the app's own error")

    receive, sent = client(gone_after=None)
    failing_limits = RequestLimits(failing, max_requests=4, max_large_bodies=1, max_body=1 << 20)
    with pytest.raises(ValueError, match="the app's own error"):  # (not an ExceptionGroup)
        await failing_limits(SCOPE, receive, sending)
