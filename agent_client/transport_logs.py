"""Keep the transport libraries' per-request lines out of an embedding application's log.

At INFO, ``httpx2`` (under both the MCP client and the OpenAI SDK) logs one
``HTTP Request: POST ...`` line per request, and the MCP client's Streamable HTTP
transport logs session ids and reconnects. A host that logs at INFO would get a line per
tool call. So when a writer or a connection is created, these loggers are set to WARNING,
unless the host has set their level already (its choice wins). The root logger, its
handlers and ``logging.basicConfig`` are never touched.
"""

from __future__ import annotations

import logging

NOISY_LOGGERS = ("httpx2", "mcp.client.streamable_http")


def quiet_transport_logs() -> None:
    """Raise the noisy transport loggers to WARNING where the host left them unset."""
    for name in NOISY_LOGGERS:
        logger = logging.getLogger(name)
        if logger.level == logging.NOTSET:
            logger.setLevel(logging.WARNING)
