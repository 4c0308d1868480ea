"""A real indexer and the local model stub, with the environment an ``agent-client``
process needs to use both: the stack the agent client's kill and recovery tests run."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from helpers.indexer_process import RunningIndexer, start_indexer
from helpers.llm_stub import LLMStub, Script, running_llm_stub

Stack = tuple[RunningIndexer, LLMStub, dict[str, str]]


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
