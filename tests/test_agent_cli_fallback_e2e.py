"""``agent-client remember`` whose model fails (HTTP 500, a reply that is not JSON, a
429 with a long Retry-After): the entry is merged without it, exit 0, and stderr says
why once (the writer's log line said it again, word for word, above the CLI's line)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from helpers.indexer_process import RunningIndexer, vault_dir
from helpers.llm_stub import RawReply, http_error, running_llm_stub

pytestmark = pytest.mark.e2e

FAILURES = {
    "500": (http_error(500, "upstream exploded"), "HTTP 500"),
    "not-json": (RawReply(200, b"{not json", "application/json"), "not JSON"),
    "429": (
        RawReply(429, {"error": {"message": "slow down"}}, headers={"Retry-After": "900"}),
        "asks to retry after",
    ),
}


@pytest.mark.parametrize("failure", FAILURES)
def test_a_fallback_says_why_once(server: RunningIndexer, failure: str) -> None:
    reply, why = FAILURES[failure]
    with running_llm_stub() as stub:
        stub.run([reply])
        env = {
            **os.environ,
            "AGENT_CLIENT_WORKSPACE": str(server.workspace),
            "AGENT_CLIENT_LANG": "en",
            "VAULT_LLM_MODEL": "stub",
            "OPENAI_BASE_URL": stub.base_url,
            "OPENAI_API_KEY": "unused",
        }
        title = "Ρήμα πηγαίνω"
        command = [sys.executable, "-m", "agent_client", "remember", "--title", title, "πήγα 去了"]
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1] == "  items/ρήμα-πηγαίνω.md"
    assert done.stderr.count(why) == 1, done.stderr
    assert done.stderr.startswith("(merged without the LLM: MergeFailed: "), done.stderr
    assert "πήγα 去了" in (vault_dir(server, "en") / "items/ρήμα-πηγαίνω.md").read_text()
