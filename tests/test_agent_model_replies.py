"""A hostile model's replies, each said in words the user can act on: real SDK, scripted
local model (``llm_stub``), real ``indexer serve`` (as ``test_agent_llm``)."""

from __future__ import annotations

import asyncio
from datetime import UTC

import pytest
from helpers.indexer_process import RunningIndexer
from helpers.llm_stub import LLMStub, final, say, tool_call
from test_agent_llm import entry, lang, run_entry, seed, stub, vault_dir

from agent_client.connection import mcp_vault_connection
from agent_client.merge.model_keys import without_model_keys
from agent_client.notes import split_note
from agent_client.settings import ClientSettings

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


def test_a_new_note_takes_no_id_date_or_summary_keys_of_the_models(
    server: RunningIndexer, stub: LLMStub, lang: str
) -> None:
    """A note the model created kept the ``id`` it wrote (copied from a note it read: two
    notes of one id; the prompt's own example ``01JD3Q...`` for every new note), the
    ``created`` it made up, and ``type: summary``, which hides a note from every default
    search and from recall: the entry merged, and nowhere to be found."""
    seed(server, lang, "items/go.md", f"---\nid: {GO_ID}\ntitle: Go\ntype: item\n---\n# Go\n")
    made_up = (
        f"---\nid: {GO_ID}\ntitle: Gone\ntype: summary\ncreated: 1999-01-01T00:00:00Z\n"
        "generated_by: llm\nchild_count: 3\nsource: the model\n---\n# Gone\n\n"
        "- gone: the past participle of go\n"
    )
    stub.run(
        [tool_call("write", path="items/gone.md", content=made_up), final(["items/gone.md"], "x")]
    )
    notice = run_entry(server, stub, entry(lang, "Gone", "gone: past participle of go"))
    assert notice.ok and notice.method == "llm", notice
    meta, body = split_note((vault_dir(server, lang) / "items/gone.md").read_text())
    assert meta["id"] != GO_ID and meta["created"].year != 1999
    assert "type" not in meta and "generated_by" not in meta and "child_count" not in meta
    assert meta["source"] == "the model" and "past participle of go" in body
    assert asyncio.run(found(server, lang, "participle")) == ["items/gone.md"]


GO_ID = "01JD3QAAAAAAAAAAAAAAAAAAAA"


async def found(server: RunningIndexer, lang: str, query: str) -> list[str]:
    settings = ClientSettings(workspace=server.workspace, tz=UTC)
    async with mcp_vault_connection(lang, settings) as vault:
        return [hit["path"] for hit in (await vault.search(query))["results"]]


def test_only_the_lines_of_those_keys_go() -> None:
    read = f"---\nid: {GO_ID}\ntitle: Go\ncreated: 2026-01-02T03:04:05Z\non: monday\n---\n# Go\n"
    assert without_model_keys(read + "- went\n", read) == read + "- went\n"  # (as read: kept)
    made_up = (
        "---\nid: 01JD3Q...\ntitle: Go\ncreated: 1999-01-01T00:00:00Z\non: monday\n"
        "generated_by:\n  - llm\n  - fallback\ntype: Summary\ntags: [a]\n---\n# Go\n"
    )
    assert without_model_keys(made_up, None) == "---\ntitle: Go\non: monday\ntags: [a]\n---\n# Go\n"
    summary = "---\ntitle: Go\ntype: summary\n---\n# Go\n"
    assert without_model_keys(summary, summary) == summary  # (a person's summary stays one)
