"""Credentials in notes are redacted from folder summaries, as from USER.md: a folder's
abstract is quoted in every recall block, to the agent's model; the fallback copied a
note's first paragraph into its overview, and the model was shown it and could copy it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from helpers.llm_stub import LLMStub, say
from test_summaries import cores, make_core, note, quiet_stub, settle, stub, summaries_of, vault

from indexer.core import Core
from indexer.jobs.secrets import REDACTED

__all__ = ["cores", "quiet_stub", "stub"]  # (the fixtures, shared with the summaries tests)

KEY = "sk-proj-abcdefghijklmnopqrstuvwxyz012345"
PASSWORD = "hunter22x"


def secret_notes(tmp_path: Path) -> None:
    """Notes whose abstracts (first paragraph, or frontmatter ``summary``) hold credentials
    within the first 50 characters the fallback quotes."""
    note(tmp_path, "setup/openai.md", f"# OpenAI\n\nOPENAI_API_KEY={KEY} in .env\n")
    note(tmp_path, "setup/db.md", f"---\nsummary: 'db password: {PASSWORD}'\n---\n# DB\n")
    note(tmp_path, "setup/tea.md", "# Tea\n\nPrefers green tea.\n")


def summary_texts(tmp_path: Path) -> str:
    """Every summary file of the vault, one text."""
    files = sorted(vault(tmp_path).rglob(".overview.md"))
    assert files
    return "\n".join(path.read_text(encoding="utf-8") for path in files)


async def test_the_fallback_quotes_no_credential(tmp_path: Path, cores: list[Core]) -> None:
    secret_notes(tmp_path)
    core = make_core(tmp_path)
    cores.append(core)
    settle(core)
    stats = await summaries_of(core).run_pass()
    assert stats.fallback == 2
    text = summary_texts(tmp_path)
    assert KEY not in text and PASSWORD not in text and "sk-proj" not in text
    shown = REDACTED.replace("[", "\\[").replace("]", "\\]")  # (as Markdown shows it)
    assert f"OPENAI\\_API\\_KEY={shown}" in text and f"db password: {shown}" in text
    assert "Prefers green tea." in text


async def test_the_model_is_shown_none_and_its_answer_is_redacted(
    tmp_path: Path, quiet_stub: LLMStub, cores: list[Core]
) -> None:
    """The model is not shown the notes' credentials; one its answer holds anyway (from
    wherever) is redacted in the abstract and the overview written."""
    secret_notes(tmp_path)

    def leaking(request: dict[str, Any], turn: int) -> dict[str, Any]:
        answer = {
            "abstract": f"Setup notes; the key is {KEY}",
            "overview": f"# Setup\n\n- openai.md: OPENAI_API_KEY={KEY}\n- password: {PASSWORD}\n",
        }
        return say(json.dumps(answer))

    quiet_stub.run(leaking)
    core = make_core(tmp_path, quiet_stub)
    cores.append(core)
    settle(core)
    stats = await summaries_of(core).run_pass()
    assert stats.llm == 2 and stats.fallback == 0
    shown = json.dumps([request["messages"] for request in quiet_stub.requests])
    assert len(quiet_stub.requests) == 2 and "Prefers green tea." in shown
    assert KEY not in shown and PASSWORD not in shown and REDACTED in shown
    text = summary_texts(tmp_path)
    assert KEY not in text and PASSWORD not in text
    assert f"the key is {REDACTED}" in text and f"OPENAI_API_KEY={REDACTED}" in text
    assert f"password: {REDACTED}" in text
