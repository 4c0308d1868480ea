"""A recorded Anthropic Messages API: answers ``POST /v1/messages`` with the given
assistant messages, in order, and keeps every request body.

Runs ``http.server`` in a thread on port 0, so the real ``anthropic`` SDK talks to it
over HTTP (``ANTHROPIC_BASE_URL``), in this process or in a subprocess.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def assistant(message_id: str, *content: dict[str, Any]) -> dict[str, Any]:
    """A recorded assistant message; it asks for tools when it holds ``tool_use`` blocks."""
    asks = any(block["type"] == "tool_use" for block in content)
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-5-5",
        "content": list(content),
        "stop_reason": "tool_use" if asks else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def tool_use(block_id: str, **command: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": block_id, "name": "memory", "input": command}


@dataclass
class RecordedAPI:
    url: str
    replies: list[dict[str, Any]]
    requests: list[dict[str, Any]] = field(default_factory=list)

    def tool_results(self) -> list[dict[str, Any]]:
        """The ``tool_result`` blocks the client sent back, in order."""
        return [
            block
            for body in self.requests
            for message in body["messages"]
            if message["role"] == "user" and isinstance(message["content"], list)
            for block in message["content"]
            if block.get("type") == "tool_result"
        ]


@contextmanager
def recorded_api(replies: list[dict[str, Any]]) -> Iterator[RecordedAPI]:
    api = RecordedAPI("", replies)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            api.requests.append(body)
            index = len(api.requests) - 1
            status, reply = (200, replies[index]) if index < len(replies) else (500, {})
            data = json.dumps(reply).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    api.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield api
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
