"""A model's merge that goes its own way: a note made by someone else while it merged,
notes beside the entry's, a note reworded rather than merged into.

Real SDK, scripted local model, real ``indexer serve`` (as ``test_agent_llm``)."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from helpers.history import history_versions
from helpers.indexer_process import RunningIndexer
from helpers.llm_stub import LLMStub, final, last_tool_result, tool_call
from test_agent_llm import entry, lang, read_content, run_entry, seed, stub, vault_dir

from agent_client.merge.coverage import MIN_ADDED, MIN_KEPT, entry_share, kept_share
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


FACTS = "".join(f"- fact {n}: the build server {n} runs on port {8000 + n}\n" for n in range(40))
PROJECT = f"---\ntitle: Project facts\ntype: item\n---\n# Project facts\n\n{FACTS}"
# Every line reworded, half the note's words kept: the note's own words are in every
# added line, the entry's (a staging server on port 9000 behind the proxy) nowhere.
REWORDED = PROJECT.replace(
    FACTS, "".join(f"- server {n} runs on port {9100 + n}\n" for n in range(40))
)
STAGING = "The staging server now runs on port 9000 behind the proxy."
# the same in Chinese and Russian: the words a note held are no entry's words added
FACTS_ZH = "".join(f"- 第{n}条：构建服务器{n}号运行在端口{8000 + n}上\n" for n in range(40))
REWORDED_ZH = "".join(f"- 服务器{n}号运行在端口{9100 + n}上\n" for n in range(40))
FACTS_RU = "".join(f"- сервер сборки {n} работает на порту {8000 + n}\n" for n in range(40))
REWORDED_RU = "".join(f"- сервер {n} работает на порту {9100 + n}\n" for n in range(40))


@pytest.mark.parametrize(
    ("read", "written", "entry_text"),
    [
        (PROJECT, REWORDED, STAGING),
        (
            f"# 服务器\n\n{FACTS_ZH}",
            f"# 服务器\n\n{REWORDED_ZH}",
            "预发布服务器现在运行在端口9000上。",
        ),
        (
            f"# Серверы\n\n{FACTS_RU}",
            f"# Серверы\n\n{REWORDED_RU}",
            "Промежуточный сервер работает на порту 9000.",
        ),
    ],
)
def test_a_note_reworded_holds_none_of_the_entry_it_did_not_hold(
    read: str, written: str, entry_text: str
) -> None:
    """Every reworded line is an added line, and the note's own words in them (server,
    runs, port) were taken for the entry's: a quarter or more, 'merged'."""
    kept = kept_share(read, written)
    assert kept is not None and MIN_KEPT <= kept < 0.75, kept  # (about half: a rewrite)
    share = entry_share(entry_text, written, read)
    assert share is not None and share < MIN_ADDED, share
    merged = written + "- staging: port 9000 behind the proxy / 预发布 9000 / промежуточный\n"
    share = entry_share(entry_text, merged, read)
    assert share is not None and share >= MIN_ADDED, share


def test_a_model_that_rewords_a_note_instead_of_merging_falls_back(
    server: RunningIndexer, stub: LLMStub, lang: str
) -> None:
    path = seed(server, lang, "items/project-facts.md", PROJECT)
    stub.run(
        [
            tool_call("read", path="items/project-facts.md"),
            tool_call("write", path="items/project-facts.md", content=REWORDED),
            final(["items/project-facts.md"], "Merged the staging server."),
        ]
    )
    notice = run_entry(server, stub, entry(lang, "Staging", STAGING), fallback=True)
    assert notice.ok and notice.method == "fallback", notice
    assert FACTS in path.read_text() and "port 9103" not in path.read_text()
    assert vault_text(server, lang).count(STAGING) == 1


@pytest.mark.parametrize(
    ("read", "written", "entry_text"),
    [
        (
            "# Project\n\n- owner: Dana\n- deadline: 2027-01-15\n- budget: 40k\n",
            "# Project\n\n- owner: Dana\n- deadline: 2027-02-01\n- budget: 40k\n",
            "The deadline moved to 2027-02-01.",
        ),
        (
            f"# 服务器\n\n{FACTS_ZH}",
            f"# 服务器\n\n{FACTS_ZH.replace('8003', '9000')}",
            "服务器3号现在运行在端口9000上。",
        ),
        (
            PROJECT,
            PROJECT.replace("port 8003", "port 9443 (moved)"),
            "Build server 3 moved to port 9443.",
        ),
    ],
)
def test_a_fact_edited_in_place_is_a_merge(read: str, written: str, entry_text: str) -> None:
    """A line changed where the fact was keeps the words it had (``deadline``): they are
    the entry's when the lines changed hold no more words than twice the entry's."""
    share = entry_share(entry_text, written, read)
    assert share is not None and share >= MIN_ADDED, share


def test_a_reply_over_the_token_budget_runs_none_of_its_calls(
    server: RunningIndexer, stub: LLMStub, lang: str
) -> None:
    """A write of 200 KB in a merge of 20,000 tokens: the budget was checked after the
    call ran, so the note was written, then undone (two versions in its history)."""
    huge = f"# Big\n\n- {ALLERGY}\n" + "".join(f"- line {n} of filler text\n" for n in range(8000))
    stub.run([tool_call("write", path="items/big.md", content=huge), final(["items/big.md"], "ok")])
    notice = run_entry(server, stub, entry(lang, "Allergy", ALLERGY))
    assert not notice.ok and "more than 20000 tokens" in (notice.error or ""), notice
    assert len(stub.requests) == 1
    assert not (vault_dir(server, lang) / "items/big.md").exists()
    assert history_versions(server.workspace, lang, "items/big.md") == []


@pytest.mark.parametrize(
    ("bad_call", "told"),
    [
        (tool_call("write", path=12, content=MINE), "path of write must be a string, not a number"),
        (
            tool_call("write", path="items/tea.md", content=["# Tea", ENTRY]),
            "content of write must be a string, not an array",
        ),
        (tool_call("read", path="items/tea.md", limit="ten"), "limit of read must be an integer"),
        (tool_call("search", query="tea", tags=[1]), "tags of search must be an array of strings"),
        (tool_call("grep", pattern="tea", fixed="yes"), "fixed of grep must be a boolean"),
    ],
)
def test_arguments_of_a_wrong_type_are_told_to_the_model(
    server: RunningIndexer, stub: LLMStub, lang: str, bad_call: dict[str, Any], told: str
) -> None:
    """A call with ``path`` a number or ``content`` a list ended the merge at once (to the
    fallback, or undone); the model is told what is wrong, as a refused write is, and
    its next call, right, merges the entry. Nothing is written for the wrong call."""
    heard: list[str] = []

    def script(request: dict[str, Any], turn: int) -> dict[str, Any]:
        if turn == 0:
            return bad_call
        if turn == 1:
            heard.append(last_tool_result(request))
            return tool_call("write", path="items/tea.md", content=MINE)
        return final(["items/tea.md"], "Added the morning tea.")

    stub.run(script)
    notice = run_entry(server, stub, entry(lang, "Tea", ENTRY), max_steps=6)
    assert notice.ok and notice.method == "llm", notice
    assert heard[0].startswith(f"invalid_argument: {told}"), heard
    assert sorted(p.name for p in (vault_dir(server, lang) / "items").iterdir()) == ["tea.md"]
    assert (vault_dir(server, lang) / "items/tea.md").read_text().count(ENTRY) == 1


def test_a_call_of_a_wrong_type_sent_again_ends_the_merge(
    server: RunningIndexer, stub: LLMStub, lang: str
) -> None:
    """A model that sends the same wrongly typed call again is not taking in what it is
    told (as a write sent again as it was refused): the merge ends there, not at its
    step limit, and changes nothing."""
    stub.run(lambda request, turn: tool_call("write", path=12, content=MINE))
    notice = run_entry(server, stub, entry(lang, "Tea", ENTRY), max_steps=12)
    assert not notice.ok and "again as it was refused" in (notice.error or ""), notice
    assert len(stub.requests) == 2
    assert not (vault_dir(server, lang) / "items").exists()
