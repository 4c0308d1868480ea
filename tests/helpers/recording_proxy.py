"""A stand-in for an HTTP proxy set for the outside world (a corporate ``HTTP_PROXY``).

``RecordingProxy()`` listens on a port of its own (in a thread) and answers every
request, forwarded (``GET http://host/...``) or tunnelled (``CONNECT host:port``), with
502, as a proxy on another machine answers for ``127.0.0.1``: its own loopback has no
indexer. It records each request (method, target, ``Authorization`` header): a client
that honours the proxy environment for the local indexer shows there.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ENV_NAMES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


@dataclass(frozen=True)
class Asked:
    method: str
    target: str
    authorization: str | None


class RecordingProxy:
    def __init__(self) -> None:
        self.asked: list[Asked] = []
        asked = self.asked

        class Handler(BaseHTTPRequestHandler):
            def answer(self) -> None:
                asked.append(Asked(self.command, self.path, self.headers.get("Authorization")))
                body = b"proxy: cannot reach that host\n"
                self.send_response(502)
                self.send_header("content-length", str(len(body)))
                self.send_header("connection", "close")
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_CONNECT = answer

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def env(self, base: dict[str, str]) -> dict[str, str]:
        """``base`` with every proxy variable naming this proxy, and no ``NO_PROXY``."""
        env = {k: v for k, v in base.items() if k.lower() != "no_proxy"}
        return {**env, **dict.fromkeys(ENV_NAMES, self.url)}

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)
