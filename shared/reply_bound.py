"""A bound on how much of a model endpoint's reply is read, for both sides' OpenAI clients.

The SDK reads a reply's whole body before anything checks it: an endpoint answering 200
with a body that never ends grew the process by 1 GB in 4 s, and by several GB before
the request's timeout. ``bound_reply`` is an httpx response hook (it runs before the SDK
reads the body) that makes the read stop, raising ``ReplyTooLarge``, past the bound.
httpx2 is imported when a reply arrives: it comes with the SDK, which needs it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

# An answer's own limits are about 1 M characters; JSON may spell each in 6 bytes.
MAX_REPLY_BYTES = 8 << 20


class ReplyTooLarge(Exception):
    """Raised while a reply body is read, once it grows past ``MAX_REPLY_BYTES``."""


async def bound_reply(response: Any) -> None:
    """The response hook: the body is read at most ``MAX_REPLY_BYTES`` far."""
    import httpx2

    class BoundedBody(httpx2.AsyncByteStream):
        async def __aiter__(self) -> AsyncIterator[bytes]:
            read = 0
            async for part in inner:
                read += len(part)
                if read > MAX_REPLY_BYTES:
                    raise ReplyTooLarge(
                        f"the model's reply is larger than {MAX_REPLY_BYTES >> 20} MiB; not read"
                    )
                yield part

        async def aclose(self) -> None:
            await inner.aclose()

    inner = response.stream
    response.stream = BoundedBody()


def too_large(exc: BaseException) -> ReplyTooLarge | None:
    """The ``ReplyTooLarge`` behind an SDK error, if that is what it was."""
    while exc is not None:
        if isinstance(exc, ReplyTooLarge):
            return exc
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return None
