"""A small OpenAI-compatible chat-completions server, scripted per test.

It runs starlette on uvicorn in a thread (port 0), so the real ``openai`` SDK talks to it
over HTTP. A script is a function ``(request, turn) -> assistant message`` called for
every ``POST /v1/chat/completions``; ``turn`` counts requests from 0. Helpers build the
messages: ``tool_call(name, **args)``, ``final(obj)`` and ``say(text)``; ``http_error(...)``
and ``RawReply`` answer with any status and body (a refusal, a malformed completion).
Scripts read the tool results the client sent back with ``last_tool_result(request)``.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

Message = dict[str, Any]


@dataclass(frozen=True)
class RawReply:
    """A response sent as it is: any status, any JSON body (bytes: those bytes, of
    ``media_type``), with any ``headers`` (a ``Retry-After``)."""

    status: int
    body: Any
    media_type: str = "application/json"
    headers: dict[str, str] | None = None


Script = Callable[[dict[str, Any], int], "Message | RawReply"]


def tool_call(name: str, raw_arguments: str | None = None, **args: Any) -> Message:
    """An assistant message calling one tool (``raw_arguments`` sends text verbatim)."""
    arguments = raw_arguments if raw_arguments is not None else json.dumps(args)
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call_{time.monotonic_ns()}",
                "type": "function",
                "function": {"name": name, "arguments": arguments},
            }
        ],
    }


def say(text: str) -> Message:
    return {"role": "assistant", "content": text}


def final(updated_files: list[str], summary: str) -> Message:
    return say(json.dumps({"updated_files": updated_files, "update_summary": summary}))


def http_error(status: int, message: str, code: str | None = None) -> RawReply:
    """An error response shaped like OpenAI's (``{"error": {"message", "type", "code"}}``)."""
    error = {"message": message, "type": "invalid_request_error", "code": code}
    return RawReply(status, {"error": error})


def completion(message: Message | None, turn: int = 0, model: str = "stub") -> dict[str, Any]:
    """The body of a chat completion whose one choice holds ``message``."""
    finish = "tool_calls" if message and message.get("tool_calls") else "stop"
    return {
        "id": f"chatcmpl-{turn}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
    }


def last_tool_result(request: dict[str, Any]) -> str:
    """The content of the newest ``tool`` message in the request."""
    for message in reversed(request["messages"]):
        if message["role"] == "tool":
            return str(message["content"])
    raise AssertionError("no tool result in the request")


class LLMStub:
    """The running stub: its base URL, the requests it got, and the current script."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.script: Script = lambda request, turn: say("no script")
        self.usage_per_turn: int | None = 100  # None: usage reported as null
        self.delay = 0.0
        self.base_url = ""
        self.in_flight = 0  # requests being answered now, and the most ever at once
        self.max_in_flight = 0
        self.hold: threading.Event | None = None  # while set and not set(): answers wait
        # The script run off the server's loop: one that holds a request back (waits on
        # an event) lets the others be answered meanwhile. Else they wait behind it.
        self.threaded = False

    def run(self, script: Script | list[Message | RawReply]) -> None:
        """Use ``script`` from now on (a list is played in order, then repeats its last)."""
        self.requests.clear()
        self.max_in_flight = 0
        if isinstance(script, list):
            steps = script
            self.script = lambda request, turn: steps[min(turn, len(steps) - 1)]
        else:
            self.script = script

    async def _complete(self, request: Request) -> Response:
        body = await request.json()
        turn = len(self.requests)
        self.requests.append(body)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.delay:
                await asyncio.sleep(self.delay)
            while self.hold is not None and not self.hold.is_set():
                await asyncio.sleep(0.01)
            if self.threaded:
                reply = await asyncio.to_thread(self.script, body, turn)
            else:
                reply = self.script(body, turn)
        finally:
            self.in_flight -= 1
        if isinstance(reply, RawReply) and isinstance(reply.body, bytes):  # sent as they are
            return Response(reply.body, reply.status, reply.headers, reply.media_type)
        if isinstance(reply, RawReply):
            return JSONResponse(reply.body, reply.status, reply.headers)
        usage = {
            "prompt_tokens": None if self.usage_per_turn is None else self.usage_per_turn - 10,
            "completion_tokens": 10,
            "total_tokens": self.usage_per_turn,
        }
        return JSONResponse({**completion(reply, turn, body.get("model", "stub")), "usage": usage})


@contextmanager
def running_llm_stub() -> Iterator[LLMStub]:
    """Start the stub on 127.0.0.1:<free port>; stop it afterwards."""
    stub = LLMStub()
    app = Starlette(routes=[Route("/v1/chat/completions", stub._complete, methods=["POST"])])
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            host="127.0.0.1",
            port=0,
            log_level="warning",
            lifespan="off",
            timeout_graceful_shutdown=1,
        )
    )
    thread = threading.Thread(target=server.run, name="llm-stub", daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the LLM stub did not start")
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    stub.base_url = f"http://127.0.0.1:{port}/v1"
    try:
        yield stub
    finally:
        server.should_exit = True
        thread.join(10)
