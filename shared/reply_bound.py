"""A bound on how much of a model endpoint's reply is read, for both sides' OpenAI clients.

The SDK reads a reply's whole body before anything checks it: an endpoint answering 200
with a body that never ends grew the process by 1 GB in 4 s, and by several GB before
the request's timeout; a gzip body of 0.3 MB inflated to 300 MB the same way. The
clients ask for replies as they are or gzip'd (``REQUEST_HEADERS``), and ``bound_reply``
is an httpx response hook (it runs before the SDK reads the body) that inflates a gzip
or deflate body itself and stops the read, raising ``ReplyTooLarge``, once what it
yields passes the bound; another encoding is refused. httpx2 is imported when a reply
arrives: it comes with the SDK, which needs it.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator
from typing import Any

# An answer's own limits are about 1 M characters; JSON may spell each in 6 bytes.
MAX_REPLY_BYTES = 8 << 20
# The encodings inflated here (zlib reads gzip and zlib-wrapped deflate by their header)
REQUEST_HEADERS = {"Accept-Encoding": "gzip, deflate"}
_INFLATED = ("gzip", "x-gzip", "deflate")


class ReplyTooLarge(Exception):
    """Raised while a reply body is read, once it grows past ``MAX_REPLY_BYTES`` (or when
    it comes in an encoding that is not inflated here)."""


async def bound_reply(response: Any) -> None:
    """The response hook: the body is read (and inflated) at most ``MAX_REPLY_BYTES`` far."""
    import httpx2

    encodings = [
        value.strip().lower()
        for value in response.headers.get_list("content-encoding", split_commas=True)
        if value.strip().lower() not in ("", "identity")
    ]
    if len(encodings) > 1 or (encodings and encodings[0] not in _INFLATED):
        raise ReplyTooLarge(f"the model's reply came encoded as {', '.join(encodings)}; not read")
    inflater = zlib.decompressobj(wbits=47) if encodings else None  # 47: gzip or zlib header
    if encodings:
        del response.headers["content-encoding"]  # inflated here, not by httpx again

    class BoundedBody(httpx2.AsyncByteStream):
        async def __aiter__(self) -> AsyncIterator[bytes]:
            nonlocal inflater
            room, started = MAX_REPLY_BYTES, False
            async for part in inner:
                if inflater is not None:
                    try:
                        try:
                            inflated = inflater.decompress(part, room + 1)
                        except zlib.error:
                            if started or encodings[0] != "deflate":
                                raise
                            inflater = zlib.decompressobj(wbits=-15)  # deflate, no header
                            inflated = inflater.decompress(part, room + 1)
                    except zlib.error as err:
                        raise ReplyTooLarge(f"the model's reply does not inflate ({err})") from None
                    started, part = True, inflated
                    if inflater.unconsumed_tail:  # more than the room left: past the bound
                        room = -1
                room -= len(part)
                if room < 0:
                    raise ReplyTooLarge(
                        f"the model's reply is larger than {MAX_REPLY_BYTES >> 20} MiB; not read"
                    )
                yield part
            rest = inflater.flush() if inflater is not None else b""
            if len(rest) > room:
                raise ReplyTooLarge(
                    f"the model's reply is larger than {MAX_REPLY_BYTES >> 20} MiB; not read"
                )
            if rest:
                yield rest

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
