"""A lang whose vault is not made yet, asked through each front end of one running
``indexer serve``: the tools answer it as any empty vault (SPEC: a vault is made by its
first write), with no results; both command lines say so with the same words, exit 0,
and name the vaults that have notes (a typo in ``--lang``). ``indexer search`` exited 1
with ``not_found`` where REST, MCP and ``agent-client search`` answered no results.
Nothing is made on disk by asking."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import fastmcp
import httpx2
import pytest
from helpers.indexer_process import RunningIndexer, start_indexer, vault_dir

pytestmark = pytest.mark.e2e
SAID = "The vault 'zz' has no notes (vaults with notes: en)."


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningIndexer]:
    workspace = tmp_path_factory.mktemp("novault") / "ws"
    note = workspace / "memory/languages/en/vault/items/moon.md"
    note.parent.mkdir(parents=True)
    note.write_text("---\ntitle: Moon\n---\nThe moon orbits the earth.\n")
    running = start_indexer(workspace, env={"INDEXER_SUMMARIES": "0"})
    try:
        yield running
    finally:
        running.stop()


def command(server: RunningIndexer, program: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    base = (sys.executable, "-m", program, "search", "--workspace", str(server.workspace))
    return subprocess.run(
        [*base, "--lang", "zz", *args], capture_output=True, text=True, env=env, timeout=120
    )


def test_every_front_end_answers_no_results(server: RunningIndexer) -> None:
    before = sorted(Path(server.workspace, "memory").rglob("*"))
    rest = httpx2.get(server.url.removesuffix("/mcp") + "/api/v1/zz/search?q=moon", timeout=30)
    assert rest.status_code == 200 and rest.json()["results"] == []

    async def mcp() -> dict:
        async with fastmcp.Client(server.url) as client:
            got = await client.call_tool("search", {"lang": "zz", "query": "moon"})
        assert isinstance(got.structured_content, dict)
        return got.structured_content

    assert asyncio.run(mcp())["results"] == []
    indexer = command(server, "indexer", "moon")
    assert (indexer.returncode, indexer.stderr) == (0, ""), indexer.stderr
    assert indexer.stdout == f"no notes match. {SAID}\n"
    agent = command(server, "agent_client", "moon")
    assert (agent.returncode, agent.stderr) == (0, ""), agent.stderr
    assert agent.stdout == f"No notes match 'moon'. {SAID}\n"
    for program in ("indexer", "agent_client"):
        as_json = command(server, program, "--json", "moon")
        assert as_json.returncode == 0 and json.loads(as_json.stdout)["results"] == []
    assert not vault_dir(server, "zz").exists()
    assert sorted(Path(server.workspace, "memory").rglob("*")) == before
