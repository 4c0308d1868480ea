"""A hostile model's replies, each said in words the user can act on: real SDK, scripted
local model (``llm_stub``), real ``indexer serve`` (as ``test_agent_llm``)."""

from __future__ import annotations

import pytest
from helpers.indexer_process import RunningIndexer
from helpers.llm_stub import LLMStub, final, say, tool_call
from test_agent_llm import entry, lang, run_entry, stub, vault_dir

__all__ = ["lang", "stub"]  # (the fixtures, shared with the LLM path's tests)

DEEP = "[" * 100_000 + "]" * 100_000  # (200 KB: json's parser gives up long before)


@pytest.mark.parametrize(
    ("reply", "said"),
    [
        (tool_call("read", raw_arguments=DEEP), "the arguments of 'read' are JSON nested too deep"),
        (say(DEEP), "malformed confirmation: the final message is JSON nested too deep"),
    ],
)
def test_json_nested_too_deep_is_said_so(
    server: RunningIndexer, stub: LLMStub, lang: str, reply: dict[str, object], said: str
) -> None:
    """Tool arguments or a confirmation nested 100,000 deep ended the merge with Python's
    "RecursionError: maximum recursion depth exceeded while decoding a JSON array" (a
    reply nested as deep already said "nested too deep")."""
    stub.run([reply, final([], "nothing")] if reply["content"] is None else [reply])
    notice = run_entry(server, stub, entry(lang, "Deep", "went"), fallback=True)
    assert notice.ok and notice.method == "fallback", notice
    assert said in (notice.fallback_reason or ""), notice.fallback_reason
    assert "RecursionError" not in (notice.fallback_reason or "")
    assert (vault_dir(server, lang) / notice.updated_files[0]).read_text().count("went") == 1
