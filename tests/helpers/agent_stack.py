"""A real indexer and the local model stub, with the environment an ``agent-client``
process needs to use both: the stack the agent client's kill and recovery tests run."""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest.mock import patch

from agent_client.command import main
from helpers.indexer_process import RunningIndexer, start_indexer
from helpers.llm_stub import LLMStub, Message, RawReply, Script, running_llm_stub

Stack = tuple[RunningIndexer, LLMStub, dict[str, str]]
ENTRY_ID = re.compile(r"entry:([0-9a-f]+)")  # (how a history row's reason names its entry)


def agent_stack(workspace: Path, script: Script) -> Iterator[Stack]:
    """An indexer on ``workspace``, the stub answering by ``script``, and the client's
    environment (English vault, UTC, the stub as its model); stopped afterwards."""
    server = start_indexer(workspace)
    try:
        with running_llm_stub() as stub:
            stub.run(script)
            env = {
                **os.environ,
                "AGENT_CLIENT_WORKSPACE": str(server.workspace),
                "AGENT_CLIENT_LANG": "en",
                "AGENT_CLIENT_TZ": "UTC",
                "VAULT_LLM_MODEL": "stub",
                "OPENAI_API_KEY": "unused",
                "OPENAI_BASE_URL": stub.base_url,
            }
            yield server, stub, env
    finally:
        server.stop()


def hold_at(stub: LLMStub, turn: int, script: Script) -> tuple[threading.Event, threading.Event]:
    """``stub`` answers by ``script`` but holds back its answer to request ``turn`` of a
    merge: the first event is set once it is held, the second lets it go (or 30 s do)."""
    held, release = threading.Event(), threading.Event()

    def holding(request: dict[str, Any], number: int) -> Message | RawReply:
        if number == turn:
            held.set()
            release.wait(30)
        return script(request, number)

    stub.run(holding)
    return held, release


def entry_ids(server: RunningIndexer, path: str) -> list[str]:
    """The entry ids in the reasons of ``path``'s history (English vault), newest first:
    asked of the server by the history tool, in this process (an ``agent-client
    history`` run per note was a Python start of 2-6 s at a load of 12-19, and the
    kill tests checked 4 to 6 notes each, past pytest's 120 s with their own runs)."""

    async def ask() -> list[str]:
        async with server.client() as client:
            done = await client.call_tool("history", {"lang": "en", "path": path})
        versions = done.structured_content["versions"]  # type: ignore[index]
        return [found for v in versions for found in ENTRY_ID.findall(v.get("reason") or "")]

    return asyncio.run(ask())


def run_here(env: dict[str, str], *argv: str) -> tuple[int, str, str]:
    """``agent-client ARGV`` with ``env`` as its environment, run in this process by the
    command's own entry point: its status, stdout and stderr. A run that is not killed
    nor run beside another needs no process of its own, and one was a Python start
    importing fastmcp, mcp and openai (2 s, 5-8 s at a load of 10) per step."""
    out, err = io.StringIO(), io.StringIO()
    with (
        patch.dict(os.environ, env, clear=True),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()
