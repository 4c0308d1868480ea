"""The TLS context of the agent client's HTTP clients to the indexer, made once a process.

An HTTP transport made without one builds its own and loads the CA bundle into it
(25-35 ms of CPU), whatever its URL's scheme: the client did so at every connection, at
every reconnection and at every check of its token. A plain ``http://`` URL (the
indexer on this machine) needs no CA: its context trusts none, so that a redirect to
``https://`` fails verification rather than going unchecked. An ``https://`` one gets
the verifying context the HTTP client would make (the system's CAs, or those
``SSL_CERT_FILE`` or ``SSL_CERT_DIR`` name), one per CA setting, at its first use.
"""

from __future__ import annotations

import os
import ssl
import threading

import httpx2

_made: dict[tuple[str | None, str | None] | None, ssl.SSLContext] = {}
_making = threading.Lock()  # (the memory tool connects from a loop of its own thread)


def context_for(url: str) -> ssl.SSLContext:
    """The TLS context for a client of ``url``, shared by every client of the process."""
    if url.startswith("https://"):  # (the only spelling a URL file may have: ``discovery``)
        key: tuple[str | None, str | None] | None = (
            os.environ.get("SSL_CERT_FILE"),
            os.environ.get("SSL_CERT_DIR"),
        )
    else:
        key = None
    found = _made.get(key)
    if found is not None:
        return found
    with _making:
        found = _made.get(key)
        if found is None:
            found = _trusting_none() if key is None else httpx2.create_ssl_context()
            _made[key] = found
        return found


def _trusting_none() -> ssl.SSLContext:
    """A context that verifies certificates but trusts no CA: any TLS handshake fails."""
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
