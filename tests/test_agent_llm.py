"""The LLM merge path end to end: the real openai SDK talks to a scripted local
OpenAI-compatible server (``llm_stub``), the tools run against a real ``indexer serve``."""

from __future__ import annotations

import itertools
import json
import logging
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from helpers.indexer_process import RunningIndexer, start_indexer, vault_dir
from helpers.llm_stub import (
    LLMStub,
    RawReply,
    completion,
    final,
    http_error,
    last_tool_result,
    running_llm_stub,
    say,
    tool_call,
)

from agent_client.notes import split_note
from agent_client.notices import CollectingNoticeSink, SystemNotice
from agent_client.settings import ClientSettings, LLMSettings
from agent_client.writer import MemoryWriter
from shared.models import EditAction, MemoryEntry

T0 = datetime(2026, 11, 29, 20, 0, 0, tzinfo=UTC)
_langs = itertools.count()
NOTE = "---\ntitle: Go\ntype: item\ntags: [verbs]\n---\n# Go\n\n- went: past tense\n"


@pytest.fixture(scope="module")
def stub() -> Iterator[LLMStub]:
    with running_llm_stub() as running:
        yield running


@pytest.fixture
def lang() -> str:
    return f"en-l{next(_langs):03d}"


def run_entry(
    server: RunningIndexer,
    stub: LLMStub,
    entry: MemoryEntry,
    *,
    fallback: bool = False,
    max_steps: int = 6,
    timeout: float = 20.0,
    base_url: str | None = None,
    api_key: str = "unused",
) -> SystemNotice:
    llm = LLMSettings(
        model="stub-model",
        base_url=base_url or stub.base_url,
        api_key=api_key,
        max_steps=max_steps,
        max_tokens=20000,
        timeout=timeout,
        request_timeout=timeout,
    )
    settings = ClientSettings(workspace=server.workspace, tz=UTC, llm=llm, llm_fallback=fallback)
    sink = CollectingNoticeSink()
    writer = MemoryWriter(settings, sink)
    try:
        writer.submit([entry])
        assert writer.flush(60)
    finally:
        writer.close()
    (notice,) = sink.notices
    return notice


def entry(
    lang: str, title: str = "Go", content: str = "gone: past participle", **kw: Any
) -> MemoryEntry:
    return MemoryEntry(lang, "knowledge", title, content, ["grammar"], T0, **kw)


MERGED = "- gone: the past participle\n"  # (the entry's words, as a model merges them)


def seed(server: RunningIndexer, lang: str, rel: str = "items/go.md", text: str = NOTE) -> Path:
    path = vault_dir(server, lang) / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def read_content(request: dict[str, Any]) -> str:
    return str(json.loads(last_tool_result(request))["content"])


def function(name: Any, arguments: Any) -> dict[str, Any]:
    """A function call of any shape (``tool_call`` sends only well-formed ones)."""
    return {"id": "odd", "type": "function", "function": {"name": name, "arguments": arguments}}


def calling(*calls: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": list(calls)}


def test_merge_into_an_existing_note(server: RunningIndexer, stub: LLMStub, lang: str) -> None:
    path = seed(server, lang)

    def script(request: dict[str, Any], turn: int) -> dict[str, Any]:
        if turn == 0:
            return tool_call("find", path="items")
        if turn == 1:
            return tool_call("read", path="items/go.md")
        if turn == 2:
            merged = read_content(request).rstrip("\n") + "\n- gone: past participle\n"
            return tool_call("write", path="items/go.md", content=merged)
        return final(["items/go.md"], "Added the past participle of go.")

    stub.run(script)
    notice = run_entry(server, stub, entry(lang))
    assert notice.ok and notice.method == "llm", notice.error
    assert notice.updated_files == ["items/go.md"]
    assert notice.update_summary == "Added the past participle of go."
    text = path.read_text()
    assert "- went: past tense\n- gone: past participle\n" in text
    assert split_note(text)[0]["id"]

    first = stub.requests[0]
    assert first["model"] == "stub-model"
    system = first["messages"][0]["content"]
    for name in ("mem_entry_spec", "envelope_spec", "vault_spec"):
        heading = Path(f"prompts/{name}.md").read_text().splitlines()[0]
        assert heading in system
    envelope = json.loads(first["messages"][1]["content"])
    assert envelope["entry"]["title"] == "Go" and envelope["suggested_path"] == "items/go.md"
    offered = {tool["function"]["name"] for tool in first["tools"]}
    assert offered - {"search"} == {"read", "find", "grep", "stat", "write"}
    assert ("search" in offered) == envelope["search_available"]
    assert "lang" not in json.dumps(first["tools"])  # bound to the entry's lang


def test_new_note(server: RunningIndexer, stub: LLMStub, lang: str) -> None:
    body = "---\ntitle: Tea\ntags: [drinks]\n---\n# Tea\n\nGreen tea is 綠茶.\n"
    stub.run(
        [
            tool_call("stat", path="items/tea.md"),
            tool_call("write", path="items/tea.md", content=body),
            final(["items/tea.md"], "Created a note on tea."),
        ]
    )
    notice = run_entry(server, stub, entry(lang, "Tea", "green tea"))
    assert notice.ok and notice.method == "llm" and notice.updated_files == ["items/tea.md"]
    meta, text = split_note((vault_dir(server, lang) / "items/tea.md").read_text())
    assert meta["tags"] == ["drinks"] and meta["id"] and "綠茶" in text
    assert '"exists": false' in last_tool_result(stub.requests[1])


def test_a_model_that_never_finishes_is_undone(
    server: RunningIndexer, stub: LLMStub, lang: str
) -> None:
    original = seed(server, lang).read_text()

    def script(request: dict[str, Any], turn: int) -> dict[str, Any]:
        if turn == 0:
            return tool_call("write", path="items/half.md", content="# Half\n")
        if turn == 1:
            return tool_call("read", path="items/go.md")
        if turn == 2:
            return tool_call("write", path="items/go.md", content="# Go\n\nclobbered\n")
        return tool_call("find")

    stub.run(script)
    notice = run_entry(server, stub, entry(lang), max_steps=5)
    assert not notice.ok and "no confirmation after 5" in (notice.error or "")
    assert len(stub.requests) == 5
    vault = vault_dir(server, lang)
    assert not (vault / "items/half.md").exists()
    assert split_note((vault / "items/go.md").read_text())[1] == split_note(original)[1]

    stub.run(script)  # the same model, with the deterministic fallback enabled
    notice = run_entry(server, stub, entry(lang), max_steps=5, fallback=True)
    assert notice.ok and notice.method == "fallback"
    assert not (vault / "items/half.md").exists()
    text = (vault / "items/go.md").read_text()
    assert "clobbered" not in text and "- went: past tense" in text
    assert "## 2026-11-29: Go\n\ngone: past participle\n" in text


def test_arguments_sent_as_a_json_object_are_taken(
    server: RunningIndexer, stub: LLMStub, lang: str
) -> None:
    """Some OpenAI-compatible servers send a call's arguments as a JSON object, not as the
    JSON text OpenAI specifies: they are what the model meant (they raised a TypeError,
    logged with a traceback, and the merge was abandoned)."""
    body = "---\ntitle: Tea\n---\n# Tea\n\nGreen tea.\n"
    stub.run(
        [
            calling(function("stat", {"path": "items/tea.md"})),
            calling(function("write", {"path": "items/tea.md", "content": body})),
            final(["items/tea.md"], "Created a note on tea."),
        ]
    )
    notice = run_entry(server, stub, entry(lang, "Tea", "green tea"))
    assert notice.ok and notice.method == "llm", notice.error
    assert "Green tea." in (vault_dir(server, lang) / "items/tea.md").read_text()
    assert '"exists": false' in last_tool_result(stub.requests[1])
    sent = stub.requests[1]["messages"][-2]["tool_calls"][0]["function"]
    assert sent == {"name": "stat", "arguments": '{"path": "items/tea.md"}'}


@pytest.mark.parametrize(
    ("bad_turn", "error"),
    [
        (say("Done! I merged it."), "malformed confirmation"),
        (say('{"updated_files": ["items/other.md"], "update_summary": "x"}'), "did not write"),
        (tool_call("rm", path="items/go.md"), "unknown tool 'rm'"),
        (tool_call("write", path="items/new.md"), "missing ['content']"),
        (tool_call("write", raw_arguments='{"path": "items/new.md", '), "not JSON"),
        (tool_call("read", path="items/go.md", lang="fr"), "unknown ['lang']"),
        # (told to the model once: the same call again ends the merge)
        (tool_call("read", path=["items/go.md"]), "again as it was refused: path of read"),
        (calling({"id": "x", "type": "function"}), "a tool call without a function name"),
        (calling({"id": "x", "type": "function", "function": None}), "without a function name"),
        (calling(function("read", ["items/go.md"])), "'read' must be a JSON object"),
    ],
)
def test_malformed_model_output_fails_and_leaves_nothing(
    server: RunningIndexer, stub: LLMStub, lang: str, bad_turn: dict[str, Any], error: str
) -> None:
    original = seed(server, lang).read_text()

    def script(request: dict[str, Any], turn: int) -> dict[str, Any]:
        if turn == 0:
            return tool_call("read", path="items/go.md")
        if turn == 1:
            return tool_call("write", path="items/go.md", content=read_content(request) + "x\n")
        if turn == 2:
            return tool_call("write", path="items/extra.md", content="# Extra\n")
        return bad_turn

    stub.run(script)
    notice = run_entry(server, stub, entry(lang))
    assert not notice.ok and error in (notice.error or ""), notice.error
    vault = vault_dir(server, lang)
    assert not (vault / "items/extra.md").exists()
    assert split_note((vault / "items/go.md").read_text())[1] == split_note(original)[1]


def test_a_concurrent_human_edit_is_merged_not_overwritten(
    server: RunningIndexer, stub: LLMStub, lang: str
) -> None:
    path = seed(server, lang)

    def script(request: dict[str, Any], turn: int) -> dict[str, Any]:
        if turn == 0:
            return tool_call("read", path="items/go.md")
        if turn == 1:
            seen = read_content(request)
            path.write_text(path.read_text() + "- human: edited in Obsidian\n")  # the person
            return tool_call("write", path="items/go.md", content=seen + "- gone: participle\n")
        if turn == 2:
            result = last_tool_result(request)
            assert result.startswith("conflict:")
            fresh = result.split("\n\n", 1)[1]
            return tool_call("write", path="items/go.md", content=fresh + "- gone: participle\n")
        return final(["items/go.md"], "Merged after a conflict.")

    stub.run(script)
    notice = run_entry(server, stub, entry(lang))
    assert notice.ok and notice.method == "llm", notice.error
    text = path.read_text()
    assert "- human: edited in Obsidian\n- gone: participle\n" in text


def test_a_second_conflict_abandons_the_merge(
    server: RunningIndexer, stub: LLMStub, lang: str
) -> None:
    path = seed(server, lang)

    def script(request: dict[str, Any], turn: int) -> dict[str, Any]:
        if turn == 0:
            return tool_call("read", path="items/go.md")
        path.write_text(path.read_text() + f"- human edit {turn}\n")
        # (a text of its own each time: the same write again ends the merge by itself)
        model = NOTE + f"- gone (model {turn}): past participle\n"
        return tool_call("write", path="items/go.md", content=model)

    stub.run(script)
    notice = run_entry(server, stub, entry(lang))
    assert not notice.ok and "second conflict" in (notice.error or "")
    text = path.read_text()
    assert "- human edit 1\n- human edit 2\n" in text and "(model" not in text


def test_writing_an_unread_note_is_refused_to_the_model(
    server: RunningIndexer, stub: LLMStub, lang: str
) -> None:
    path = seed(server, lang)

    def script(request: dict[str, Any], turn: int) -> dict[str, Any]:
        if turn == 0:
            return tool_call("write", path="items/go.md", content="# Go\n\nblind\n")
        if turn == 1:
            told = last_tool_result(request)  # (read for it: the model may read again)
            assert "exists and you had not read it whole" in told and NOTE in told, told
            return tool_call("read", path="items/go.md")
        if turn == 2:
            return tool_call("write", path="items/go.md", content=read_content(request) + MERGED)
        return final(["items/go.md"], "ok")

    stub.run(script)
    notice = run_entry(server, stub, entry(lang))
    assert notice.ok, notice.error
    assert "blind" not in path.read_text() and path.read_text().endswith(MERGED)


def test_the_model_writes_notes_under_items_only_however_it_spells_them(
    server: RunningIndexer, stub: LLMStub, lang: str
) -> None:
    """``./events/...`` and ``items/../events/...`` (harmless spellings to the vault)
    replaced the day file that plain code writes; USER.md and other folders were
    writable too. The notice listed the model's spelling."""
    path = seed(server, lang)
    day = seed(server, lang, "events/2026/11/29.md", "# 2026-11-29\n\n## 20:00 Lesson\n")
    user = seed(server, lang, "USER.md", "# User\n\nKeeps it short.\n")
    refused = [
        "./events/2026/11/29.md",
        "items/../events/2026/11/29.md",
        "items//../events/2026/11/29.md",
        "USER.md",
        "Events/2026/11/29.md",
        "notes/go.md",
    ]

    def script(request: dict[str, Any], turn: int) -> dict[str, Any]:
        if turn < len(refused):
            if turn:
                assert last_tool_result(request).startswith("forbidden_path: merge knowledge")
            return tool_call("write", path=refused[turn], content=f"# wiped {turn}\n")
        if turn == len(refused):
            assert last_tool_result(request).startswith("forbidden_path: merge knowledge")
            return tool_call("read", path="./items//go.md")
        if turn == len(refused) + 1:
            merged = read_content(request) + "- gone\n"
            return tool_call("write", path="items/./go.md", content=merged)
        return final(["./items/go.md"], "ok")

    stub.run(script)
    notice = run_entry(server, stub, entry(lang), max_steps=12)
    assert notice.ok and notice.updated_files == ["items/go.md"], notice
    assert path.read_text().endswith("- gone\n")
    assert day.read_text() == "# 2026-11-29\n\n## 20:00 Lesson\n"
    assert user.read_text() == "# User\n\nKeeps it short.\n"
    assert not (vault_dir(server, lang) / "notes").exists()


def test_the_model_keeps_the_frontmatter_keys_a_person_added(
    server: RunningIndexer, stub: LLMStub, lang: str
) -> None:
    """A model that wrote the note back without its frontmatter lost ``mine: keep`` (the
    vault keeps only id and created)."""
    path = seed(server, lang, text=NOTE.replace("tags:", "mine: keep\ntags:"))

    def script(request: dict[str, Any], turn: int) -> dict[str, Any]:
        if turn == 0:
            return tool_call("read", path="items/go.md")
        if turn == 1:
            return tool_call("write", path="items/go.md", content="# Go\n\n- went\n- gone\n")
        if turn == 2:
            said = last_tool_result(request)
            assert said.startswith("invalid_argument: keep the frontmatter keys"), said
            assert said.endswith("missing: title, type, mine, tags"), said
            return tool_call("read", path="items/go.md")
        if turn == 3:
            return tool_call(
                "write", path="items/go.md", content=read_content(request) + "- gone\n"
            )
        return final(["items/go.md"], "ok")

    stub.run(script)
    notice = run_entry(server, stub, entry(lang))
    assert notice.ok, notice.error
    assert "mine: keep" in path.read_text() and path.read_text().endswith("- gone\n")


@pytest.mark.parametrize(
    ("note", "missing"),
    [
        ("---\ntitle: B\non: monday\nmine: keep\n---\n# B\n\nx\n", "title, on, mine"),
        ("---\ntitle: B\n2024: trip\n---\n# B\n\nx\n", "title, 2024"),
    ],
)
def test_keys_yaml_reads_otherwise_are_kept_too(
    server: RunningIndexer, stub: LLMStub, lang: str, note: str, missing: str
) -> None:
    """``on:`` is a boolean key to YAML, ``2024:`` a number: the note's keys read as none,
    and a write that dropped them all was taken."""
    seed(server, lang, text=note)
    said: list[str] = []

    def script(request: dict[str, Any], turn: int) -> dict[str, Any]:
        if turn == 0:
            return tool_call("read", path="items/go.md")
        if turn == 1:
            return tool_call("write", path="items/go.md", content="# B\n\nx\ny\n")
        said.append(last_tool_result(request))
        return final([], "nothing")

    stub.run(script)
    run_entry(server, stub, entry(lang))
    assert said[0].endswith(f"missing: {missing}"), said


def test_a_key_the_model_keeps_in_a_block_yaml_refuses_is_the_vaults_to_say(
    server: RunningIndexer, stub: LLMStub, lang: str
) -> None:
    """The model kept every key but wrote YAML the vault refuses: it was told to add the
    keys it had (and looped), not what was wrong."""
    seed(server, lang, text="---\ntitle: A\nmine: keep\n---\n# A\n\nx\n")
    said: list[str] = []

    def script(request: dict[str, Any], turn: int) -> dict[str, Any]:
        if turn == 0:
            return tool_call("read", path="items/go.md")
        if turn == 1:
            text = "---\ntitle: A: the letter\nmine: keep\n---\n# A\n\nx\ngone: past participle\n"
            return tool_call("write", path="items/go.md", content=text)
        said.append(last_tool_result(request))
        return final([], "nothing")

    stub.run(script)
    run_entry(server, stub, entry(lang))
    assert said[0].startswith("invalid_frontmatter:"), said


def test_time_and_token_budgets(server: RunningIndexer, stub: LLMStub, lang: str) -> None:
    stub.run([tool_call("find")])
    stub.hold = threading.Event()  # the model never answers: only the time limit ends it
    try:
        notice = run_entry(server, stub, entry(lang), timeout=0.5)
    finally:
        stub.hold.set()
        stub.hold = None
    assert not notice.ok and "longer than 0.5 s" in (notice.error or "")

    stub.usage_per_turn = 50_000
    try:
        notice = run_entry(server, stub, entry(lang))
    finally:
        stub.usage_per_turn = 100
    assert not notice.ok and "more than 20000 tokens" in (notice.error or "")


def test_one_reply_runs_at_most_16_tool_calls_and_counts_their_results_at_once(
    server: RunningIndexer, stub: LLMStub, lang: str
) -> None:
    """20,000 reads of a 4 MB note in one reply all ran, every result kept, before the
    token bound was checked at the next turn: GBs of memory, and the indexer serving
    them all. Then the calls past 16 were still kept, each answered "not run", and sent
    again at every turn. Only the 16 run are kept, one note tells of the rest; the
    results count at once."""
    seed(server, lang, "items/big.md", "---\ntitle: Big\n---\n" + "lorem ipsum " * 10_000)
    many = tool_call("read", path="items/go.md")
    many["tool_calls"] = [
        {**many["tool_calls"][0], "id": f"c{number}"} for number in range(40)
    ]  # (the note does not exist: each answer is a short not_found)
    stub.run([many, final([], "nothing")])
    notice = run_entry(server, stub, entry(lang))
    sent = stub.requests[-1]["messages"]
    kept = [c["id"] for m in sent if m["role"] == "assistant" for c in m.get("tool_calls", [])]
    answers = [m for m in sent if m["role"] == "tool"]
    assert kept == [m["tool_call_id"] for m in answers] == [f"c{n}" for n in range(16)]
    assert "[not run: 24 more tool calls of this reply; at most 16" in answers[-1]["content"]
    big = tool_call("read", path="items/big.md")
    big["tool_calls"] = [{**big["tool_calls"][0], "id": f"b{number}"} for number in range(16)]
    stub.run([big, final([], "nothing")])
    before = len(stub.requests)
    notice = run_entry(server, stub, entry(lang))
    assert not notice.ok and "more than 20000 tokens" in (notice.error or "")
    assert len(stub.requests) == before + 1  # refused before the next turn was asked


def test_the_token_bound_holds_whatever_usage_the_model_reports(
    server: RunningIndexer, stub: LLMStub, lang: str
) -> None:
    """The bound on the tool results a turn adds started from the usage the model reports:
    a negative one let 6 turns of 16 reads of a 1 MB note run (92 MB sent again)."""
    seed(server, lang, "items/big.md", "---\ntitle: Big\n---\n" + "lorem ipsum " * 10_000)
    read = tool_call("read", path="items/big.md")
    read["tool_calls"] = [{**read["tool_calls"][0], "id": f"r{n}"} for n in range(4)]
    stub.run([read, read, read, final([], "nothing")])
    for usage in (-(10**12), None):  # (null: a TypeError ended every LLM merge)
        stub.run([read, read, read, final([], "nothing")])
        stub.usage_per_turn = usage
        try:
            notice = run_entry(server, stub, entry(lang))
        finally:
            stub.usage_per_turn = 100
        assert not notice.ok and "more than 20000 tokens" in (notice.error or ""), usage
        assert len(stub.requests) == 1  # 4 x 120 KB read: refused before a second turn


@pytest.mark.parametrize(
    ("case", "reason"),
    [
        ("unreachable", "Connection error"),
        ("bad_base_url", "InvalidURL"),
        ("model_refused", "model 'stub-model' does not exist"),
        ("bug_in_the_loop", "the model's answer holds no message"),  # (was an AttributeError)
        ("cut_json", "the LLM endpoint's reply is not JSON"),  # (was a JSONDecodeError)
        ("deep_json", "nested too deep"),  # (was a RecursionError)
        ("lone_surrogate", "are not valid text (a lone surrogate)"),  # (a UnicodeEncodeError)
        ("not_a_completion", "did not answer a chat completion: '<html>"),  # (AttributeError)
        ("reply_too_large", "reply is larger than 8 MiB"),  # (read whole: GBs of an endless one)
    ],
)
def test_any_llm_failure_falls_back_with_the_reason(
    server: RunningIndexer,
    stub: LLMStub,
    lang: str,
    caplog: pytest.LogCaptureFixture,
    case: str,
    reason: str,
) -> None:
    base_url = {"unreachable": "http://127.0.0.1:9/v1", "bad_base_url": "http://[::1/v1"}
    if case == "model_refused":
        stub.run([http_error(404, "The model 'stub-model' does not exist", "model_not_found")])
    if case == "bug_in_the_loop":  # a completion whose choice holds no message
        stub.run([RawReply(200, completion(None))])
    if case == "cut_json":
        stub.run([RawReply(200, b'{"choices": [')])
    if case == "deep_json":
        stub.run([RawReply(200, b"[" * 5000 + b"]" * 5000)])
    if case == "lone_surrogate":  # sent back at the next turn, it could not be encoded
        call = tool_call("write", raw_arguments='{"path": "items/x.md", "content": "a\ud800b"}')
        stub.run([RawReply(200, json.dumps(completion(call)).encode()), final([], "nothing")])
    if case == "not_a_completion":  # a 200 whose body is no completion object
        stub.run([RawReply(200, "<html>")])
    if case == "reply_too_large":
        stub.run([RawReply(200, "x" * (9 << 20))])
    item = entry(lang, f"Fallback {case}", "went")
    with caplog.at_level(logging.ERROR):
        notice = run_entry(server, stub, item, fallback=True, base_url=base_url.get(case))
    assert notice.ok and notice.method == "fallback", notice.error
    assert reason in (notice.fallback_reason or ""), notice.fallback_reason
    assert (vault_dir(server, lang) / notice.updated_files[0]).read_text().count("went") == 1
    logged = [r.getMessage() for r in caplog.records if item.id in r.getMessage()]
    assert any(reason in line and "deterministic" in line for line in logged), logged


def test_a_refused_write_the_model_claims_is_named_in_the_fallback_reason(
    server: RunningIndexer, stub: LLMStub, lang: str
) -> None:
    """A model that wrote a note without reading it first (refused) and claimed it all
    the same fell back with "updated_files lists files this merge did not write" only:
    why the write was refused was not said."""
    seed(server, lang)
    claim = final(["items/go.md"], "Merged.")
    stub.run([tool_call("write", path="items/go.md", content="# Go\n\nwent\n"), claim, claim])
    notice = run_entry(server, stub, entry(lang), fallback=True)
    assert notice.ok and notice.method == "fallback", notice.error
    reason = notice.fallback_reason or ""
    assert "did not write" in reason and "the vault refused their writes: items/go.md" in reason
    assert "read it whole" in reason, reason


def test_a_failed_merge_that_cannot_be_undone_still_falls_back(
    server: RunningIndexer, stub: LLMStub, lang: str
) -> None:
    path = seed(server, lang)

    def script(request: dict[str, Any], turn: int) -> dict[str, Any]:
        if turn == 0:
            return tool_call("read", path="items/go.md")
        if turn == 1:
            merged = read_content(request) + "- m: gone, the past participle\n"
            return tool_call("write", path="items/go.md", content=merged)
        if turn == 2:
            path.write_text(path.read_text() + "- human edit\n")  # over the model's write
        return say("Done!")

    stub.run(script)
    notice = run_entry(server, stub, entry(lang), fallback=True)
    assert notice.ok and notice.method == "fallback", notice.error
    assert "not undone, changed since: items/go.md" in (notice.fallback_reason or "")
    text = path.read_text()
    assert "- m: gone, the past participle\n- human edit\n" in text  # (never undone)
    assert "## 2026-11-29: Go\n\ngone: past participle\n" in text  # nor the entry lost


def test_prompts_the_server_does_not_serve_fall_back(
    stub: LLMStub, lang: str, tmp_path: Path
) -> None:
    empty = tmp_path / "no-prompts"
    empty.mkdir()
    running = start_indexer(tmp_path / "ws", env={"INDEXER_PROMPTS_DIR": str(empty)})
    stub.run([say("never asked")])
    try:
        notice = run_entry(running, stub, entry(lang, "No prompts"), fallback=True)
        assert notice.ok and notice.method == "fallback", notice.error
        assert "serves no prompt 'mem_entry_spec'" in (notice.fallback_reason or "")
        assert (vault_dir(running, lang) / "items/no-prompts.md").exists()
        assert stub.requests == []  # the model was never asked

        notice = run_entry(running, stub, entry(lang, "No prompts, no fallback"))
        assert not notice.ok and "serves no prompt" in (notice.error or "")
    finally:
        running.stop()


def test_a_merge_by_the_model_has_no_fallback_reason(
    server: RunningIndexer, stub: LLMStub, lang: str
) -> None:
    stub.run(
        [
            tool_call("write", path="items/fine.md", content="# Fine\n\nwent\n"),
            final(["items/fine.md"], "Created."),
        ]
    )
    notice = run_entry(server, stub, entry(lang, "Fine", "went"), fallback=True)
    assert notice.ok and notice.method == "llm" and notice.fallback_reason is None


def test_images_attach_to_the_first_updated_note(
    server: RunningIndexer, stub: LLMStub, lang: str, tmp_path: Path
) -> None:
    image = tmp_path / "chart.gif"
    image.write_bytes(b"GIF89a" + b"\x01\x00\x01\x00\x00\x00\x00;")
    stub.run(
        [
            tool_call("write", path="items/chart.md", content="# Chart\n\nsales up\n"),
            final(["items/chart.md"], "Created the chart note."),
        ]
    )
    notice = run_entry(server, stub, entry(lang, "Chart", "sales", images=[str(image)]))
    assert notice.ok, notice.error
    assert notice.updated_files[0] == "items/chart.md"
    (asset,) = notice.updated_files[1:]
    assert asset.startswith("items/chart.md.assets/chart-") and asset.endswith(".gif")
    text = (vault_dir(server, lang) / "items/chart.md").read_text()
    assert f"![chart]({asset.removeprefix('items/')})" in text
    envelope = json.loads(stub.requests[0]["messages"][1]["content"])
    assert envelope["entry"]["images"] == [Path(asset).name]


GIF = b"GIF89a" + b"\x01\x00\x01\x00\x00\x00\x00;"


def test_images_are_copied_first_and_placed_by_the_model(
    server: RunningIndexer, stub: LLMStub, lang: str, tmp_path: Path
) -> None:
    image = tmp_path / "chart.gif"
    image.write_bytes(GIF)
    vault = vault_dir(server, lang)
    seen: dict[str, Any] = {}

    def script(request: dict[str, Any], turn: int) -> dict[str, Any]:
        if turn == 0:
            envelope = json.loads(request["messages"][1]["content"])
            ((name, link),) = envelope["image_links"].items()
            copied = vault / "items/chart.md.assets" / name
            seen.update(name=name, link=link, copied_first=copied.is_file())
            body = f"# Chart\n\nQ3:\n\n{link}\n\nsales up\n"
            return tool_call("write", path="items/chart.md", content=body)
        return final(["items/chart.md"], "Created the chart note.")

    stub.run(script)
    notice = run_entry(server, stub, entry(lang, "Chart", "sales", images=[str(image)]))
    assert notice.ok and notice.method == "llm", notice.error
    assert seen["copied_first"], "the image was not in the vault when the model started"
    assert seen["link"] == f"![chart](chart.md.assets/{seen['name']})"
    text = (vault / "items/chart.md").read_text()
    assert text.count(seen["name"]) == 1 and text.endswith(f"{seen['link']}\n\nsales up\n")
    assert notice.updated_files == ["items/chart.md", f"items/chart.md.assets/{seen['name']}"]


def test_images_follow_the_entry_into_the_note_the_model_chose(
    server: RunningIndexer, stub: LLMStub, lang: str, tmp_path: Path
) -> None:
    image = tmp_path / "chart.gif"
    image.write_bytes(GIF)
    seed(server, lang, "items/reports/sales.md", "# Sales\n\n- Q2: flat\n")
    vault = vault_dir(server, lang)
    names: list[str] = []

    def script(request: dict[str, Any], turn: int) -> dict[str, Any]:
        if turn == 0:
            return tool_call("read", path="items/reports/sales.md")
        if turn == 1:
            envelope = json.loads(request["messages"][1]["content"])
            ((name, link),) = envelope["image_links"].items()  # the link next to items/chart.md
            names.append(name)
            merged = read_content(request) + f"- Q3: up\n\n{link}\n"
            return tool_call("write", path="items/reports/sales.md", content=merged)
        return final(["items/reports/sales.md"], "Added Q3 to the sales note.")

    stub.run(script)
    notice = run_entry(server, stub, entry(lang, "Chart", "sales", images=[str(image)]))
    assert notice.ok and notice.method == "llm", notice.error
    (name,) = names
    asset = f"items/reports/sales.md.assets/{name}"
    assert notice.updated_files == ["items/reports/sales.md", asset]
    assert (vault / asset).read_bytes() == GIF
    text = (vault / "items/reports/sales.md").read_text()
    assert text.endswith(f"- Q3: up\n\n![chart](sales.md.assets/{name})\n")
    assert not (vault / "items/chart.md.assets").exists()  # the staged copy is gone


def test_staged_images_are_undone_before_the_fallback(
    server: RunningIndexer, stub: LLMStub, lang: str, tmp_path: Path
) -> None:
    image = tmp_path / "chart.gif"
    image.write_bytes(GIF)
    seed(server, lang, "items/sales.md", "---\ntitle: Chart\n---\n# Sales\n\n- Q2: flat\n")
    stub.run([http_error(503, "overloaded")])
    notice = run_entry(server, stub, entry(lang, "Chart", "up", images=[str(image)]), fallback=True)
    assert notice.ok and notice.method == "fallback", notice.error
    assert "overloaded" in (notice.fallback_reason or "")
    vault = vault_dir(server, lang)
    (asset,) = [p for p in notice.updated_files if ".assets/" in p]
    assert asset.startswith("items/sales.md.assets/") and (vault / asset).read_bytes() == GIF
    assert not (vault / "items/chart.md.assets").exists()  # staged for the model, undone


def test_the_key_an_endpoint_quotes_reaches_no_notice_and_no_log(
    server: RunningIndexer, stub: LLMStub, lang: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A proxy that quotes the key it refused: the fallback's reason and the log say
    ``[redacted]`` where the key was (the SDK's error keeps no Authorization header)."""
    key = "sk-proj-7f3a9c2e5b1d4f6a"
    stub.run([http_error(401, f"upstream refused the key {key} (Bearer {key})")])
    with caplog.at_level(logging.INFO):
        notice = run_entry(server, stub, entry(lang, "Key"), fallback=True, api_key=key)
    assert notice.ok and notice.method == "fallback", notice.error
    assert "refused the key [redacted]" in (notice.fallback_reason or ""), notice.fallback_reason
    assert not [r for r in caplog.records if key in r.getMessage()]


def test_an_llm_merge_logs_no_request_lines_at_info(
    server: RunningIndexer, stub: LLMStub, lang: str, caplog: pytest.LogCaptureFixture
) -> None:
    stub.run(
        [
            tool_call("write", path="items/quiet.md", content="# Quiet\n\n" + MERGED),
            final(["items/quiet.md"], "Created."),
        ]
    )
    with caplog.at_level(logging.INFO):
        notice = run_entry(server, stub, entry(lang, "Quiet"))
    assert notice.ok and notice.method == "llm", notice.error
    assert len(stub.requests) == 2
    assert not [r.getMessage() for r in caplog.records if "HTTP Request" in r.getMessage()]


def test_a_partial_read_is_not_enough_to_write_a_note(
    server: RunningIndexer, stub: LLMStub, lang: str
) -> None:
    """A model that read 8 lines of a 50-line note and wrote them back, plus its line,
    cut the note to its 8 lines (the merge said ok)."""
    lines = "".join(f"- line {n}\n" for n in range(50))
    path = seed(server, lang, text=NOTE + lines)

    def script(request: dict[str, Any], turn: int) -> dict[str, Any]:
        if turn == 0:
            return tool_call("read", path="items/go.md", limit=8)
        if turn == 1:
            return tool_call("write", path="items/go.md", content=read_content(request) + "x\n")
        if turn == 2:
            assert "read it whole" in last_tool_result(request)
            return tool_call("read", path="items/go.md")
        if turn == 3:
            return tool_call("write", path="items/go.md", content=read_content(request) + MERGED)
        return final(["items/go.md"], "ok")

    stub.run(script)
    notice = run_entry(server, stub, entry(lang))
    assert notice.ok, notice.error
    text = path.read_text()
    assert "- line 49\n" in text and text.endswith(MERGED) and "x\n" not in text


def test_a_failed_merge_never_takes_back_an_earlier_entry_with_the_same_id(
    server: RunningIndexer, stub: LLMStub, lang: str
) -> None:
    """A host id given twice (an entry submitted again, or model-numbered ids): the
    failed model merge of the second was rolled back by undo of the id, which also took
    back the first's merge (and an event's day file), both acknowledged ok. Its own
    writes are now taken back file by file."""
    path = seed(server, lang)
    first = entry(lang, content="gone: past participle", id="msg-42")

    def good(request: dict[str, Any], turn: int) -> dict[str, Any]:
        if turn == 0:
            return tool_call("read", path="items/go.md")
        if turn == 1:
            return tool_call(
                "write", path="items/go.md", content=read_content(request) + "- gone\n"
            )
        return final(["items/go.md"], "merged")

    stub.run(good)
    assert run_entry(server, stub, first).method == "llm"
    merged = path.read_text()

    def bad(request: dict[str, Any], turn: int) -> dict[str, Any]:
        if turn == 0:
            return tool_call("read", path="items/go.md")
        if turn == 1:  # the first entry's note, changed by this one, then a failure
            return tool_call("write", path="items/go.md", content=read_content(request) + "- x\n")
        if turn == 2:
            return tool_call("write", path="items/eat.md", content="# Eat\n\nby the model\n")
        return say("garbage")

    stub.run(bad)
    again = entry(lang, title="Eat", content="ate: past tense", id="msg-42")
    notice = run_entry(server, stub, again, fallback=True)
    assert notice.ok and notice.method == "fallback", notice.error
    assert "(not undone" not in (notice.fallback_reason or "")
    assert path.read_text() == merged  # the first entry's merge stays, this one's went
    eat = (vault_dir(server, lang) / "items/eat.md").read_text()
    assert "ate: past tense" in eat and "by the model" not in eat


def test_a_note_that_is_not_utf8_is_never_merged_into(
    server: RunningIndexer, stub: LLMStub, lang: str
) -> None:
    """Its text was read as base64 and written back as the note's body (the fallback),
    or shown to the model as base64."""
    latin = seed(server, lang, rel="items/bin.md", text="")
    latin.write_bytes(b"---\ntitle: Bin\n---\ncaf\xe9 au lait\n")
    stub.run([tool_call("read", path="items/bin.md"), say("garbage")])
    notice = run_entry(server, stub, entry(lang, title="Bin", content="new fact"), fallback=True)
    assert notice.ok and notice.method == "fallback", notice.error
    assert "not UTF-8" in last_tool_result(stub.requests[1])
    assert latin.read_bytes() == b"---\ntitle: Bin\n---\ncaf\xe9 au lait\n"
    assert notice.updated_files == ["items/bin-2.md"]


def test_a_merge_cut_short_by_a_restart_is_undone_then_merged_once(
    tmp_path: Path, stub: LLMStub
) -> None:
    """The model's write landed, then the indexer restarted: the entry was tried again
    on the new indexer on top of its first write, and the fact was in the note twice."""
    servers = [start_indexer(tmp_path / "ws")]
    path = seed(servers[0], "en")
    restarted: list[bool] = []

    def script(request: dict[str, Any], turn: int) -> dict[str, Any]:
        tools = sum(1 for m in request["messages"] if m["role"] == "tool")
        if tools == 0:
            return tool_call("read", path="items/go.md")
        if tools == 1:
            content = read_content(request) + "- gone: past participle\n"
            return tool_call("write", path="items/go.md", content=content)
        if tools == 2 and not restarted:
            restarted.append(True)
            servers[-1].stop()
            servers.append(start_indexer(tmp_path / "ws"))
            return tool_call("stat", path="items/go.md")
        return final(["items/go.md"], "added gone")

    stub.run(script)
    try:
        notice = run_entry(servers[-1], stub, entry("en", id="e-restart"))
        assert notice.ok and notice.method == "llm", notice.error
        assert path.read_text().count("gone: past participle") == 1
    finally:
        servers[-1].stop()


BETA = "# Beta\n\nUNRELATED: gone, the past participle\n"


def unrelated_write_then_garbage(stub: LLMStub, gone: Any) -> None:
    """Script ``stub`` to write a note of its own (the entry's words, and UNRELATED),
    then (after ``gone()``, the first time: the indexer stops or restarts) to answer
    with no confirmation."""
    went: list[bool] = []

    def script(request: dict[str, Any], turn: int) -> dict[str, Any]:
        tools = sum(1 for m in request["messages"] if m["role"] == "tool")
        if tools == 0:
            return tool_call("write", path="items/beta.md", content=BETA)
        if not went:
            went.append(True)
            gone()
        return say("garbage")

    stub.run(script)


def test_a_failed_merge_is_taken_back_on_the_indexer_that_restarted_meanwhile(
    tmp_path: Path, stub: LLMStub
) -> None:
    """The model wrote, the indexer restarted while it thought, then it gave no
    confirmation: the undo went to the old connection and failed, the journal had
    forgotten the write already, and the fallback merged on top of the model's unrelated
    note ("undone" in the log, nothing undone)."""
    servers = [start_indexer(tmp_path / "ws")]
    seed(servers[0], "en")

    def restart() -> None:
        servers[-1].stop()
        servers.append(start_indexer(tmp_path / "ws"))

    unrelated_write_then_garbage(stub, restart)
    try:
        notice = run_entry(servers[-1], stub, entry("en", id="e-gone"), fallback=True)
        assert notice.ok and notice.method == "fallback", notice.error
        notes = (vault_dir(servers[-1], "en") / "items").glob("[!.]*.md")  # (no summary)
        texts = [note.read_text() for note in notes]
        assert not any("UNRELATED" in text for text in texts), texts
        assert any("gone: past participle" in text for text in texts)
    finally:
        servers[-1].stop()


def test_a_failed_merge_the_indexer_left_says_what_may_have_landed(
    tmp_path: Path, stub: LLMStub
) -> None:
    """The same with the indexer stopped for good: the notice said the merge's failure
    in the words of the offline error ("tool 'undo' ... failed: 0"), and not that the
    model's write may have landed."""
    server = start_indexer(tmp_path / "ws")
    seed(server, "en")
    unrelated_write_then_garbage(stub, server.stop)
    try:
        notice = run_entry(server, stub, entry("en", id="e-left"), fallback=True)
    finally:
        server.stop()
    error = notice.error or ""
    assert not notice.ok
    assert "failed: Connection closed" in error or "connection refused" in error, error
    assert "confirmation" not in error  # (the merge's failure is not why the call failed)
    assert "agent-client undo e-left" in error, error


def think_after_writing(stub: LLMStub) -> threading.Event:
    """Script ``stub`` to read items/go.md, write it with a line added, then hold its
    next answer until the event returned is set (the model "thinks" after its write)."""
    hold = threading.Event()
    hold.set()

    def script(request: dict[str, Any], turn: int) -> dict[str, Any]:
        if turn == 0:
            return tool_call("read", path="items/go.md")
        if turn == 1:
            hold.clear()
            merged = read_content(request).rstrip("\n") + "\n- rewritten, gone: past participle\n"
            return tool_call("write", path="items/go.md", content=merged)
        return final(["items/go.md"], "rewritten")

    stub.run(script)
    stub.hold = hold
    return hold


def test_flush_after_a_close_that_timed_out_waits_for_the_writer(
    server: RunningIndexer, stub: LLMStub, lang: str
) -> None:
    """``close`` gave up waiting while a merge ran; a ``flush`` after it raised "the
    memory writer is closed" where it waits, False on its timeout."""
    seed(server, lang)
    hold = think_after_writing(stub)
    llm = LLMSettings(model="stub-model", base_url=stub.base_url, max_tokens=20000)
    writer = MemoryWriter(ClientSettings(workspace=server.workspace, tz=UTC, llm=llm))
    writer.submit([entry(lang)])
    deadline = time.monotonic() + 20
    while len(stub.requests) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    writer.close(0.1)
    assert writer.flush(0.1) is False
    hold.set()
    assert writer.flush(20) is True
    assert "gone: past participle" in (vault_dir(server, lang) / "items/go.md").read_text()


def test_cancel_takes_back_the_entry_being_merged_and_drops_the_queue(
    server: RunningIndexer, stub: LLMStub, lang: str
) -> None:
    """``MemoryWriter.cancel`` (the CLI calls it on Ctrl-C or SIGTERM): the merge under
    way is cut off and its writes taken back, the queued entries are not written, each
    notice says so, and a flush waiting on them returns."""
    seed(server, lang)
    note = vault_dir(server, lang) / "items/go.md"
    before = note.read_text()
    hold = think_after_writing(stub)
    llm = LLMSettings(model="stub-model", base_url=stub.base_url, max_tokens=20000)
    sink = CollectingNoticeSink()
    writer = MemoryWriter(ClientSettings(workspace=server.workspace, tz=UTC, llm=llm), sink)
    try:
        writer.submit([entry(lang), entry(lang, "Second"), entry(lang, "Third")])
        deadline = time.monotonic() + 20
        while len(stub.requests) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert "rewritten" in note.read_text()
        assert writer.cancel(20)
    finally:
        hold.set()
        stub.hold = None
    assert writer.flush(1)
    assert [n.ok for n in sink.notices] == [False, False, False]
    assert "interrupted while it was written; its writes were taken back" in str(
        sink.notices[0].error
    )
    assert all("stopped before it was written" in str(n.error) for n in sink.notices[1:])
    assert note.read_text() == before


def test_cancel_tells_every_entry_and_action_and_a_second_cancel_waits(
    server: RunningIndexer, stub: LLMStub, lang: str
) -> None:
    """Items the writer took as ``cancel`` emptied the queue were cut off before they
    began: no notice for their entries, an action's future pending for good. A second
    ``cancel`` cut off the first one's undo: the model's write stayed."""
    seed(server, lang)
    note = vault_dir(server, lang) / "items/go.md"
    before = note.read_text()
    hold = think_after_writing(stub)
    llm = LLMSettings(model="stub-model", base_url=stub.base_url, max_tokens=20000)

    class SlowSink(CollectingNoticeSink):  # (a host's sink takes its time)
        def notify(self, notice: SystemNotice) -> None:
            time.sleep(0.005)
            super().notify(notice)

    sink = SlowSink()
    writer = MemoryWriter(ClientSettings(workspace=server.workspace, tz=UTC, llm=llm), sink)
    try:
        writer.submit([entry(lang)])
        for n in range(40):
            writer.submit([entry(lang, f"Queued {n}")])
        action = writer.execute_action(EditAction(lang, "items/go.md", frontmatter={"k": 1}))
        deadline = time.monotonic() + 20
        while len(stub.requests) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert "rewritten" in note.read_text()
        stopper = threading.Thread(target=writer.cancel, args=(20,))
        stopper.start()
        assert writer.cancel(20)  # at once, beside the first
        stopper.join()
    finally:
        hold.set()
        stub.hold = None
    assert len(sink.notices) == 41 and not any(n.ok for n in sink.notices)
    assert len({n.entry_id for n in sink.notices}) == 41
    with pytest.raises(RuntimeError, match="stopped"):
        action.result(5)
    assert note.read_text() == before
