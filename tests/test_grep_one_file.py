"""grep with a ``path`` naming a file searches that file alone, whatever the glob, as
``rg PATTERN FILE`` does: an agent greps the note it is editing for a line number. It
was refused (``invalid_argument: items/a.md is a file, not a folder``), so the agent
had to grep the whole vault and pick the note's lines out, or read it whole."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastmcp import Client

from indexer.core import Core
from indexer.settings import Settings
from indexer.vault.sandbox import Sandbox
from indexer.vault.vault import Vault
from indexer.web.mcp import create_server
from shared.errors import ForbiddenPathError, NotFoundError
from shared.workspace import Workspace

NOTE = "---\ntitle: 東京\n---\n# 東京\n\n今日は東京で雨。\nTokyo rain\n"


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    ws = Workspace(tmp_path / "ws")
    root = ws.vault_dir("ja")
    (root / "items").mkdir(parents=True)
    (root / "items/東京.md").write_text(NOTE, encoding="utf-8")
    (root / "items/大阪.md").write_text("# 大阪\n\n大阪で雨。\n", encoding="utf-8")
    (root / "items/log.txt").write_text("雨 log\n", encoding="utf-8")
    (root / "items/latin1.md").write_bytes(b"# Caf\xe9\n\nrain here\n")
    (root / "items/東京.md.assets").mkdir()
    (root / "items/東京.md.assets/p.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe")
    (root / "outside.md").symlink_to(tmp_path / "secret.md")
    (tmp_path / "secret.md").write_text("雨 secret\n", encoding="utf-8")
    return Vault(Sandbox(ws), max_file_bytes=1 << 20)


def lines(answer: dict) -> list[tuple[str, int, str]]:
    return [(m["path"], m["line"], m["text"]) for m in answer["matches"]]


def test_a_file_named_by_path_is_searched_alone(vault: Vault) -> None:
    answer = vault.grep("ja", "雨", path="items/東京.md")
    assert lines(answer) == [("items/東京.md", 6, "今日は東京で雨。")]
    assert answer["truncated"] is False


def test_the_glob_does_not_leave_a_named_file_out(vault: Vault) -> None:
    assert lines(vault.grep("ja", "雨", path="items/log.txt")) == [("items/log.txt", 1, "雨 log")]
    assert lines(vault.grep("ja", "rain", path="items/東京.md", glob="**/*.txt")) == [
        ("items/東京.md", 7, "Tokyo rain")
    ]


def test_a_named_file_is_read_as_a_walk_reads_it(vault: Vault) -> None:
    """A note that is not UTF-8 is searched as the index has it; an image never; the
    limit cuts the answer (truncated), as in a folder."""
    assert lines(vault.grep("ja", "rain", path="items/latin1.md")) == [
        ("items/latin1.md", 3, "rain here")
    ]
    assert vault.grep("ja", "PNG", path="items/東京.md.assets/p.png")["matches"] == []
    cut = vault.grep("ja", "東京", path="items/東京.md", limit=1)
    assert len(cut["matches"]) == 1 and cut["truncated"] is True


def test_refusals_stay(vault: Vault) -> None:
    with pytest.raises(NotFoundError):
        vault.grep("ja", "雨", path="items/nope.md")
    with pytest.raises(ForbiddenPathError):
        vault.grep("ja", "雨", path="outside.md")
    with pytest.raises(ForbiddenPathError):
        vault.grep("ja", "雨", path="../secret.md")


def test_a_folder_is_searched_as_before(vault: Vault) -> None:
    assert [m["path"] for m in vault.grep("ja", "雨", path="items")["matches"]] == [
        "items/大阪.md",
        "items/東京.md",
    ]


async def test_the_tool_takes_a_file(vault: Vault, tmp_path: Path) -> None:
    server = create_server(Core(Settings(workspace=tmp_path / "ws"), vault))
    async with Client(server) as client:
        args = {"lang": "ja", "pattern": "雨", "path": "items/東京.md"}
        got = await client.call_tool("grep", args)
        listed = {tool.name: tool for tool in await client.list_tools()}
    assert isinstance(got.structured_content, dict)
    assert lines(got.structured_content) == [("items/東京.md", 6, "今日は東京で雨。")]
    path_doc = listed["grep"].input_schema["properties"]["path"]["description"]
    assert "one file" in path_doc
