"""The embedding API: ``agent_client``'s public names, the README's example run against a
real ``indexer serve``, and the two host hooks (end of turn; the chat agent's tool, called
through the real openai SDK)."""

from __future__ import annotations

import itertools
import json
import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.indexer_process import RunningIndexer, vault_dir
from helpers.llm_stub import LLMStub, running_llm_stub, tool_call
from openai import OpenAI

import agent_client
from agent_client import (
    ClientSettings,
    CollectingNoticeSink,
    MemoryEntry,
    MemoryWriter,
    memory_writer_action_tool,
    remember_turn,
    run_memory_writer_action,
)
from shared.frontmatter import parse_frontmatter

README = Path(__file__).resolve().parent.parent / "README.md"
PUBLIC = {
    "MEMORY_WRITER_ACTION",
    "ActionResult",
    "AsyncVaultMemoryTool",
    "ClientSettings",
    "CollectingNoticeSink",
    "ConflictError",
    "DeleteAction",
    "EditAction",
    "ForbiddenPathError",
    "IndexerOfflineError",
    "InvalidArgumentError",
    "InvalidFrontmatterError",
    "InvalidLangError",
    "LLMSettings",
    "MemoryEntry",
    "MemoryWriter",
    "NotFoundError",
    "NoticeSink",
    "SystemNotice",
    "TooLargeError",
    "TurnReceipt",
    "Vault",
    "VaultError",
    "VaultMemoryTool",
    "configure_writer",
    "get_writer",
    "mcp_vault_connection",
    "memory_writer_action_tool",
    "remember_turn",
    "run_memory_writer_action",
}
_langs = itertools.count()


@pytest.fixture
def lang() -> str:
    return f"en-e{next(_langs):03d}"


def test_the_public_names_are_exactly_all() -> None:
    assert set(agent_client.__all__) == PUBLIC and len(agent_client.__all__) == len(PUBLIC)
    namespace: dict[str, object] = {}
    exec("from agent_client import *", namespace)
    assert set(namespace) >= PUBLIC
    exec(
        "from agent_client import MemoryWriter, ClientSettings, MemoryEntry, EditAction, "
        "DeleteAction, SystemNotice, NoticeSink, IndexerOfflineError, mcp_vault_connection",
        {},
    )


def readme_example() -> str:
    section = README.read_text(encoding="utf-8").split("## Embedding the Memory Writer\n")[1]
    match = re.search(r"```python\n(.*?)```", section.split("\n## ")[0], re.S)
    assert match, "no python example in the README's embedding section"
    return match.group(1)


def test_the_readme_example_runs_against_a_real_indexer(
    server: RunningIndexer, tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VAULT_LLM", "AGENT_"))}
    env.update(AGENT_CLIENT_WORKSPACE=str(server.workspace), AGENT_CLIENT_TZ="UTC")
    proc = subprocess.run(
        [sys.executable, "-c", readme_example()],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=90,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("queued: 2 refused: ['entry 3: ")
    assert "title must be a non-empty string" in lines[0]
    assert lines[1] == "knowledge True fallback ['items/past-tense-of-go.md']"
    assert re.fullmatch(r"event True event \['events/\d{4}/\d\d/\d\d\.md'\]", lines[2])
    assert json.loads(lines[3]) == {
        "ok": True,
        "action": "edited",
        "lang": "en",
        "path": "items/past-tense-of-go.md",
    }
    assert lines[4].startswith("not_found: ")
    assert lines[5] == "search: ['items/past-tense-of-go.md']"
    note = (vault_dir(server, "en") / "items/past-tense-of-go.md").read_text()
    assert parse_frontmatter(note)[0]["level"] == 1 and '"went"' in note


def test_remember_turn_queues_the_good_entries_and_reports_the_bad(
    server: RunningIndexer, writer: MemoryWriter, sink: CollectingNoticeSink, lang: str
) -> None:
    good = MemoryEntry(lang, "knowledge", "Tea", "green tea")
    receipt = remember_turn(
        [
            good,
            {"kind": "event", "title": "Tea time", "content": "had tea", "tags": ["tea"]},
            {"kind": "knowledge", "title": "x", "content": "y", "colour": "red"},
            {"kind": "knowledge", "title": "x", "content": "y", "lang": "EN"},
            {"kind": "event", "title": "t", "content": "c", "timestamp": "yesterday"},
            "just text",
        ],
        writer=writer,
        lang=lang,
    )
    assert receipt.queued[0] == good.id and len(receipt.queued) == 2
    assert [r.split(":")[0] for r in receipt.refused] == [
        "entry 3",
        "entry 4",
        "entry 5",
        "entry 6",
    ]
    assert "unknown fields ['colour']" in receipt.refused[0]
    assert "not a vault id" in receipt.refused[1]
    assert "'yesterday' is not an ISO 8601 time with a zone" in receipt.refused[2]
    assert writer.flush(30)
    assert [(n.ok, n.kind) for n in sink.notices] == [(True, "knowledge"), (True, "event")]
    assert (vault_dir(server, lang) / "items/tea.md").exists()

    assert remember_turn([{"kind": "event", "title": "t", "content": "c"}], writer=writer).refused
    # One entry given alone: a text was refused a character at a time, a mapping too.
    text = remember_turn("remember this", writer=writer, lang=lang)  # type: ignore[arg-type]
    assert text.queued == [] and text.refused == [
        "entry 1: an entry must be a MemoryEntry or an object, not str"
    ]
    for nothing in (None, 42, True):  # a model's JSON null or number: refused, not raised
        receipt = remember_turn(nothing, writer=writer, lang=lang)  # type: ignore[arg-type]
        kind = type(nothing).__name__
        assert receipt.queued == [] and receipt.refused == [
            f"entry 1: an entry must be a MemoryEntry or an object, not {kind}"
        ]
    alone = {"kind": "knowledge", "title": "Coffee", "content": "black"}
    assert len(remember_turn(alone, writer=writer, lang=lang).queued) == 1  # type: ignore[arg-type]
    writer.close()
    closed = remember_turn([good], writer=writer)  # never raises into the host's turn
    assert closed.queued == [] and "closed" in closed.refused[0]


@pytest.fixture(scope="module")
def stub() -> Iterator[LLMStub]:
    with running_llm_stub() as running:
        yield running


async def test_the_chat_agents_tool_through_a_real_chat_model(
    server: RunningIndexer, writer: MemoryWriter, stub: LLMStub, lang: str
) -> None:
    path = vault_dir(server, lang) / "items/go.md"
    path.parent.mkdir(parents=True)
    path.write_text("---\nid: KEEP\ntitle: Go\n---\n# Go\n\nwent\n")
    stub.run(
        [
            tool_call(
                "memory_writer_action",
                action="edit",
                path="items/go.md",
                body="# Go\n\nwent, gone\n",
                frontmatter={"id": "FORGED", "level": 2},
            )
        ]
    )
    model = OpenAI(base_url=stub.base_url, api_key="unused", max_retries=0)
    try:
        reply = model.chat.completions.create(
            model="chat",
            messages=[{"role": "user", "content": "add 'gone' to my note on go"}],
            tools=[memory_writer_action_tool()],  # type: ignore[list-item]
        )
    finally:
        model.close()
    offered = stub.requests[0]["tools"]
    assert offered == [memory_writer_action_tool()]
    assert offered[0]["function"]["name"] == agent_client.MEMORY_WRITER_ACTION
    call = reply.choices[0].message.tool_calls[0]  # type: ignore[index]
    result = await run_memory_writer_action(call.function.arguments, writer=writer, lang=lang)  # type: ignore[union-attr]
    assert result == {
        "ok": True,
        "action": "edited",
        "lang": lang,
        "path": "items/go.md",
        "ignored": ["id is kept as it is"],  # (the model was told "edited" alone)
    }
    meta, body = parse_frontmatter(path.read_text())
    assert meta["id"] == "KEEP" and meta["level"] == 2 and body == "# Go\n\nwent, gone\n"
    before = path.read_bytes()
    for asked in ({"id": "FORGED"}, {"level": 2}):  # nothing to change: not "edited"
        again = {"action": "edit", "path": "items/go.md", "frontmatter": asked}
        unchanged = await run_memory_writer_action(again, writer=writer, lang=lang)
        assert isinstance(unchanged, dict) and unchanged["action"] == "unchanged"
        assert unchanged.get("ignored", []) == (["id is kept as it is"] if "id" in asked else [])
    assert path.read_bytes() == before

    deleted = await run_memory_writer_action(
        {"action": "delete", "path": "items/go.md", "lang": lang}, writer=writer
    )
    assert deleted == {"ok": True, "action": "deleted", "lang": lang, "path": "items/go.md"}
    assert not path.exists()


@pytest.mark.parametrize(
    ("arguments", "error"),
    [
        ("{not json", "invalid_argument: the arguments are not JSON"),
        ("[1]", "invalid_argument: the arguments must be a JSON object"),
        ("[" * 100_000 + "]" * 100_000, "invalid_argument: the arguments are JSON nested too"),
        ('{"action": "rename", "path": "items/a.md"}', 'action must be "delete" or "edit"'),
        ('{"action": "delete"}', "path must be"),
        ('{"action": "delete", "path": "items/a.md", "force": true}', "unknown arguments"),
        ('{"action": "delete", "path": "items/a.md", "body": "x"}', "delete takes no body"),
        ('{"action": "edit", "path": "items/a.md"}', "give a new body, frontmatter"),
        ('{"action": "edit", "path": "items/a.md", "body": 3}', "body must be a string"),
        ('{"action": "delete", "path": "items/a.md", "lang": "EN"}', "invalid_lang"),
        ('{"action": "delete", "path": "items/none.md"}', "not_found: "),
        ('{"action": "delete", "path": "../x.md"}', "forbidden_path: "),
    ],
)
async def test_the_tool_answers_the_model_with_one_error_line(
    writer: MemoryWriter, lang: str, arguments: str, error: str
) -> None:
    result = await run_memory_writer_action(arguments, writer=writer, lang=lang)
    assert isinstance(result, str) and error in result and "\n" not in result, result


async def test_an_action_raises_an_error_the_package_names(writer: MemoryWriter, lang: str) -> None:
    """The README: ``execute_action_async`` "raises the error"; a host catches it by the
    name the README gives, from ``agent_client`` (``NotFoundError`` was only in
    ``shared.errors``)."""
    with pytest.raises(agent_client.NotFoundError) as raised:
        await writer.execute_action_async(agent_client.DeleteAction(lang, "items/none.md"))
    assert raised.value.code == "not_found"
    with pytest.raises(agent_client.ForbiddenPathError):
        await writer.execute_action_async(agent_client.DeleteAction(lang, "items/../../x.md"))


async def test_the_tool_says_when_the_memory_is_offline(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    (tmp_path / "indexer.mcp.url").write_text(f"http://127.0.0.1:{port}/mcp\n")
    offline = MemoryWriter(ClientSettings(workspace=tmp_path, connect_timeout=1.0))
    try:
        result = await run_memory_writer_action(
            '{"action": "delete", "path": "items/a.md"}', writer=offline, lang="en"
        )
    finally:
        offline.close()
    assert isinstance(result, str) and result.startswith("indexer_offline: ")
    assert "tell the user" in result
