"""A model's merge that goes its own way: a note made by someone else while it merged,
notes beside the entry's, a note reworded rather than merged into.

Real SDK, scripted local model, real ``indexer serve`` (as ``test_agent_llm``)."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from helpers.indexer_process import RunningIndexer
from helpers.llm_stub import LLMStub, final, last_tool_result, tool_call
from test_agent_llm import entry, lang, read_content, run_entry, seed, stub, vault_dir

from shared.workspace import OVERVIEW_FILE

__all__ = ["lang", "stub"]  # (the fixtures, shared with the LLM path's tests)

THEIRS = "---\ntitle: Tea\ntype: item\n---\n# Tea\n\n- Oolong on weekends.\n"
ENTRY = "The user drinks green tea every morning."
MINE = f"---\ntitle: Tea\ntype: item\n---\n# Tea\n\n- {ENTRY}\n"


def vault_text(server: RunningIndexer, lang: str) -> str:
    """Every note of the vault, concatenated (not the folder summaries, which quote them)."""
    notes = sorted(vault_dir(server, lang).rglob("*.md"))
    return "\n".join(p.read_text() for p in notes if p.name != OVERVIEW_FILE)


def _made_meanwhile(server: RunningIndexer, lang: str, keep_writing: bool) -> Any:
    """A model that reads items/tea.md (not there), then, once another process made it,
    writes its own text there; ``keep_writing``: again and again, whatever it is told."""

    def script(request: dict[str, Any], turn: int) -> dict[str, Any]:
        if turn == 0:
            return tool_call("read", path="items/tea.md")
        if turn == 1:
            assert last_tool_result(request).startswith("not_found"), last_tool_result(request)
            seed(server, lang, "items/tea.md", THEIRS)  # another process, meanwhile
            return tool_call("write", path="items/tea.md", content=MINE)
        if keep_writing:
            return tool_call("write", path="items/tea.md", content=MINE)
        if turn == 2:
            told = last_tool_result(request)
            assert "- Oolong on weekends." in told, told  # the note's text, read for it
            return tool_call("write", path="items/tea.md", content=THEIRS + f"- {ENTRY}\n")
        return final(["items/tea.md"], "Added the morning tea.")

    return script


def test_a_note_made_meanwhile_is_shown_to_the_model_which_merges_into_it(
    server: RunningIndexer, stub: LLMStub, lang: str
) -> None:
    """After a read answered not_found, a note another process made answered the
    model's write with "exists; read it whole" only: the note's text now comes with it,
    and the model merges into it without another read."""
    stub.run(_made_meanwhile(server, lang, keep_writing=False))
    notice = run_entry(server, stub, entry(lang, "Tea", ENTRY), max_steps=12)
    assert notice.ok and notice.method == "llm", notice
    text = (vault_dir(server, lang) / "items/tea.md").read_text()
    assert "- Oolong on weekends.\n" in text and text.count(ENTRY) == 1
    assert len(stub.requests) == 4


def test_a_model_that_writes_again_what_was_refused_ends_at_once(
    server: RunningIndexer, stub: LLMStub, lang: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A model that does not take in what it is told wrote the same note again and again
    to its step limit (12 turns); the same write refused twice now ends the loop, and the
    deterministic merge puts the entry in once, the other process's note kept."""
    stub.run(_made_meanwhile(server, lang, keep_writing=True))
    with caplog.at_level(logging.ERROR):
        notice = run_entry(server, stub, entry(lang, "Tea", ENTRY), fallback=True, max_steps=12)
    assert notice.ok and notice.method == "fallback", notice
    assert "again" in (notice.fallback_reason or ""), notice.fallback_reason
    assert len(stub.requests) == 3
    text = vault_text(server, lang)
    assert "- Oolong on weekends.\n" in text and text.count(ENTRY) == 1
    assert any("wrote items/tea.md again" in r.getMessage() for r in caplog.records)


ALLERGY = "The user is allergic to penicillin and carries an epinephrine pen."


def test_notes_the_entry_does_not_explain_are_refused_beside_a_good_merge(
    server: RunningIndexer, stub: LLMStub, lang: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A model that merged the entry into its note and also wrote an unrelated new note
    and a line into another was taken at its word (all three 'the entry's'): each write
    is now judged on its own, and one holding none of the entry is refused to the model."""
    go = seed(server, lang)  # (test_agent_llm's NOTE)
    before = go.read_text()
    told: list[str] = []

    def script(request: dict[str, Any], turn: int) -> dict[str, Any]:
        if turn == 0:
            return tool_call("write", path="items/allergy.md", content=f"# Allergy\n\n{ALLERGY}\n")
        if turn == 1:
            return tool_call(
                "write", path="items/groceries.md", content="# Groceries\n\n- oat milk\n"
            )
        if turn == 2:
            told.append(last_tool_result(request))
            return tool_call("read", path="items/go.md")
        if turn == 3:
            return tool_call(
                "write", path="items/go.md", content=read_content(request) + "- goes\n"
            )
        if turn == 4:
            told.append(last_tool_result(request))
        return final(["items/allergy.md"], "Noted the allergy.")

    stub.run(script)
    with caplog.at_level(logging.WARNING):
        notice = run_entry(server, stub, entry(lang, "Allergy", ALLERGY), max_steps=12)
    assert notice.ok and notice.method == "llm", notice
    assert notice.updated_files == ["items/allergy.md"]
    vault = vault_dir(server, lang)
    assert ALLERGY in (vault / "items/allergy.md").read_text()
    assert not (vault / "items/groceries.md").exists() and go.read_text() == before
    for said, path in zip(told, ["items/groceries.md", "items/go.md"], strict=True):
        assert said.startswith(f"invalid_argument: what you add to {path} holds"), said
    logged = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert sum("not the entry's" in line for line in logged) == 2, logged
