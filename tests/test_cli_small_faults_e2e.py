"""Small faults of both CLIs and the agent client that acceptance passes listed, each
against a real ``indexer serve`` (or the real settings objects): hashtags typed in one
``--tag``, a ``--title`` that starts with ``-``, ``delete`` of a text file, an action on
a closed writer, a model's bidi override in the log, how ``history`` names a file, a
mistyped workspace for ``config-snippet``/``open``, LLM settings given without a model."""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
from datetime import UTC
from pathlib import Path
from typing import Any

import pytest
from helpers.indexer_process import RunningIndexer, vault_dir, wait_for
from helpers.llm_stub import final, running_llm_stub, tool_call

from agent_client.cli import build_parser
from agent_client.cli import main as agent_main
from agent_client.hooks import run_memory_writer_action
from agent_client.settings import ClientSettings, LLMSettings
from agent_client.writer import MemoryWriter
from indexer.cli import main as indexer_main
from indexer.settings import Settings
from shared.errors import ConfigError
from shared.frontmatter import parse_frontmatter
from shared.models import MemoryEntry

_langs = itertools.count()


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("VAULT_LLM_MODEL", "AGENT_CLIENT_WORKSPACE", "AGENT_CLIENT_LANG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AGENT_CLIENT_TZ", "UTC")


@pytest.fixture
def lang() -> str:
    return f"en-f{next(_langs):03d}"


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` but the server's own state (``.indexer/``: its SQLite
    files change while it serves, a tidy or a read's shared memory)."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and ".indexer" not in p.relative_to(root).parts
    }


def agent(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = agent_main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_hashtags_in_one_tag_are_several_tags(
    server: RunningIndexer, lang: str, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = str(server.workspace)
    code, out, err = agent(
        capsys,
        *("remember", "--workspace", ws, "--lang", lang, "--title", "Tagged note"),
        *("--tag", "#alpha #beta", "--tag", "past tense", "--tag", "#gamma"),
        "tagged text",
    )
    assert code == 0, err
    path = out.split()[1]
    meta, _ = parse_frontmatter((vault_dir(server, lang) / path).read_text())
    assert meta["tags"] == ["alpha", "beta", "past tense", "gamma"]


def test_a_title_starting_with_a_dash_says_how_to_pass_it(
    server: RunningIndexer, lang: str, capsys: pytest.CaptureFixture[str]
) -> None:
    ws, root = str(server.workspace), vault_dir(server, lang)
    before = snapshot(server.workspace)
    with pytest.raises(SystemExit) as stopped:
        agent_main(["remember", "--workspace", ws, "--lang", lang, "--title", "---", "x"])
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and "--title=VALUE" in err, err
    assert snapshot(server.workspace) == before and not root.exists()
    with pytest.raises(SystemExit):
        indexer_main(["history", "--workspace", ws, "--lang", "-x", "a.md"])
    assert "--lang=VALUE" in capsys.readouterr().err
    args = build_parser().parse_args(["remember", "--title=---", "x"])
    assert args.title == "---"
    with pytest.raises(SystemExit):  # last, with no value: no value to move after '='
        build_parser().parse_args(["remember", "x", "--title"])
    err = capsys.readouterr().err
    assert "--title: expected one argument" in err and "VALUE" not in err, err
    with pytest.raises(SystemExit):  # (an abbreviation argparse takes)
        build_parser().parse_args(["remember", "--tit", "-x", "y"])
    assert "--title=VALUE" in capsys.readouterr().err


def test_delete_takes_the_text_files_read_reads(
    server: RunningIndexer, lang: str, capsys: pytest.CaptureFixture[str]
) -> None:
    ws, root = str(server.workspace), vault_dir(server, lang)
    (root / "memories").mkdir(parents=True)
    (root / "memories" / "todo.txt").write_text("buy milk\n")
    (root / "memories" / "tool.exe").write_text("not ours\n")
    code, out, err = agent(capsys, "read", "--workspace", ws, "--lang", lang, "memories/todo.txt")
    assert code == 0 and "buy milk" in out, err
    code, out, err = agent(capsys, "delete", "--workspace", ws, "--lang", lang, "memories/todo.txt")
    assert code == 0 and out == "deleted memories/todo.txt\n", err
    assert not (root / "memories" / "todo.txt").exists()
    before = snapshot(root)
    code, _, err = agent(capsys, "delete", "--workspace", ws, "--lang", lang, "memories/tool.exe")
    assert code == 2 and ".txt" in err and "*.assets/" in err
    assert snapshot(root) == before


def test_an_action_on_a_closed_writer_is_a_refusal(server: RunningIndexer, lang: str) -> None:
    note = vault_dir(server, lang) / "items" / "keep.md"
    note.parent.mkdir(parents=True)
    note.write_text("# Keep\n")
    writer = MemoryWriter(ClientSettings(workspace=server.workspace, tz=UTC))
    writer.close()
    call = {"action": "delete", "path": "items/keep.md"}
    said = asyncio.run(run_memory_writer_action(call, writer=writer, lang=lang))
    assert isinstance(said, str) and said.startswith("writer_closed: "), said
    assert note.read_text() == "# Keep\n"


def test_a_models_bidi_override_is_escaped_in_the_log(
    server: RunningIndexer, lang: str, caplog: pytest.LogCaptureFixture
) -> None:
    bad = "items/\u202egpj.md"

    def script(request: dict[str, Any], turn: int) -> dict[str, Any]:
        if turn == 0:  # refused by the server (a bidi control in a name)
            return tool_call("write", path=bad, content="# x\n\nx\n")
        return final([bad], "Merged \u202eit")

    caplog.set_level(logging.INFO, logger="agent_client")
    with running_llm_stub() as stub:
        stub.run(script)
        llm = LLMSettings(model="stub", base_url=stub.base_url, max_steps=4, timeout=20.0)
        writer = MemoryWriter(ClientSettings(workspace=server.workspace, tz=UTC, llm=llm))
        try:
            writer.submit([MemoryEntry(lang, "knowledge", "Bidi", "some knowledge")])
            assert writer.flush(60)
        finally:
            writer.close()
    lines = [record.getMessage() for record in caplog.records]
    assert any("\\u202e" in line for line in lines), lines
    assert not any("\u202e" in line for line in lines), lines


def test_both_history_commands_name_a_file_alike(
    server: RunningIndexer, lang: str, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = str(server.workspace)
    code, _, err = agent(
        capsys, "remember", "--workspace", ws, "--lang", lang, "--title", "Hist", "one"
    )
    assert code == 0, err
    code, out, err = agent(capsys, "history", "--workspace", ws, "--lang", lang, "items/hist.md")
    assert code == 0, err
    head = out.splitlines()[0]
    assert head.startswith(f"items/hist.md (vault {lang}): "), head
    assert indexer_main(["history", "--workspace", ws, "--lang", lang, "items/hist.md"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == head


def test_history_show_with_json_prints_the_read_of_that_version(
    server: RunningIndexer, lang: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``indexer history --show N --json`` printed the version's text, its --json left
    unsaid, where ``agent-client history --show N --json`` prints the read tool's JSON:
    a script asking for JSON got a note's text. A text that is not UTF-8 comes as the
    read tool gives it (base64)."""
    ws = str(server.workspace)
    path, latin = "ملاحظات/שלום 東京.md", "ملاحظات/latin.txt"

    async def tool(name: str, **args: Any) -> dict[str, Any]:
        async with server.client() as client:
            return (await client.call_tool(name, {"lang": lang, **args})).structured_content

    asyncio.run(tool("write", path=path, content="# א\n\nنص\n"))
    asyncio.run(tool("append", path=path, content="more\n"))
    expected = asyncio.run(tool("read", path=path, version=1))
    show = ["history", "--workspace", ws, "--lang", lang, "--show", "1", "--json"]
    code, out, err = agent(capsys, *show, path)
    assert code == 0, err
    assert json.loads(out) == expected
    assert indexer_main([*show, path]) == 0
    assert json.loads(capsys.readouterr().out) == expected
    (vault_dir(server, lang) / latin).write_bytes(b"caf\xe9\n")
    wait_for(lambda: asyncio.run(tool("history", path=latin))["versions"], 30, what="a version")
    assert indexer_main([*show, latin]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert (shown["content"], shown["encoding"], shown["version"]) == ("Y2Fm6Qo=", "base64", 1)


@pytest.mark.parametrize("command", [["config-snippet"], ["open", "--print"]])
def test_a_mistyped_workspace_is_said_as_such(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    missing = tmp_path / "no-such-ws"
    assert indexer_main([*command, "--workspace", str(missing)]) == 2
    err = capsys.readouterr().err
    assert f"no workspace at {missing}" in err and "start the indexer" not in err
    assert not missing.exists()


def test_llm_settings_are_checked_without_a_model(tmp_path: Path) -> None:
    env = {"INDEXER_WORKSPACE": str(tmp_path)}
    assert Settings.resolve({}, env).model is None
    for name in ("INDEXER_LLM_MAX_CONCURRENCY", "INDEXER_LLM_TIMEOUT", "INDEXER_LLM_MAX_TOKENS"):
        with pytest.raises(ConfigError, match=name):
            Settings.resolve({}, {**env, name: "ten"})
    client_env = {"AGENT_CLIENT_WORKSPACE": str(tmp_path)}
    assert ClientSettings.resolve({}, client_env).llm is None
    for name in ("AGENT_CLIENT_LLM_MAX_STEPS", "AGENT_CLIENT_LLM_TIMEOUT"):
        with pytest.raises(ConfigError, match=name):
            ClientSettings.resolve({}, {**client_env, name: "ten"})
    # the model's URL as the indexer checks its own (every merge failed later, a fallback)
    for url in ("ftp://x", "http://[::1", "http://h:99999", "localhost:8000"):
        with pytest.raises(ConfigError, match="OPENAI_BASE_URL"):
            ClientSettings.resolve({}, {**client_env, "OPENAI_BASE_URL": url})
        with pytest.raises(ConfigError, match="OPENAI_BASE_URL"):
            ClientSettings.resolve(
                {}, {**client_env, "VAULT_LLM_MODEL": "m", "OPENAI_BASE_URL": url}
            )
    good = {**client_env, "VAULT_LLM_MODEL": "m", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    llm = ClientSettings.resolve({}, good).llm
    assert llm is not None and llm.base_url == "http://127.0.0.1:9/v1"
