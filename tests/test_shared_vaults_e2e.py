"""End to end, two langs whose vaults are one folder (links): the first in sorted order
is served, the other is named at start and refused, so that no file is written twice
over two langs or changed without a version in history."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from fastmcp import Client
from fastmcp.exceptions import ToolError
from helpers.history import history_versions
from helpers.indexer_process import start_indexer

from shared.workspace import Workspace


def languages(ws: Path) -> Path:
    path = ws / "memory" / "languages"
    path.mkdir(parents=True)
    return path


def index_rows(ws: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(Workspace(ws).index_path) as db:
        return sorted(db.execute("SELECT lang, path FROM notes"))


async def test_a_vault_linked_to_another_vault_is_not_served(tmp_path: Path) -> None:
    """``de/vault`` a link to ``T/vault`` and ``fr`` a link to ``T``: both vaults served
    the same files, and ``fr``'s write was recorded in no history."""
    target = tmp_path / "shared"
    (target / "vault").mkdir(parents=True)
    (target / "vault" / "a.md").write_text("# A\n\nalpha words\n", encoding="utf-8")
    ws = tmp_path / "ws"
    langs = languages(ws)
    (langs / "de").mkdir()
    (langs / "de" / "vault").symlink_to(target / "vault")
    (langs / "fr").symlink_to(target)
    server = start_indexer(ws)
    try:
        async with Client(server.url) as client:
            with pytest.raises(ToolError) as refused:
                await client.call_tool("write", {"lang": "fr", "path": "a.md", "content": "x\n"})
            message = str(refused.value)
            assert message.startswith("forbidden_path:") and "'de'" in message
            with pytest.raises(ToolError, match=r"^forbidden_path:"):
                await client.call_tool("read", {"lang": "fr", "path": "a.md"})
            wrote = await client.call_tool(
                "write", {"lang": "de", "path": "a.md", "content": "# A\n\nbeta words\n"}
            )
            assert wrote.structured_content["path"] == "a.md"
    finally:
        assert server.stop() == 0
    log = server.log()
    assert "the vault of fr is not served" in log and "vault of de" in log
    assert (target / "vault" / "a.md").read_text(encoding="utf-8").endswith("beta words\n")
    rows = index_rows(ws)
    assert ("de", "a.md") in rows and not [row for row in rows if row[0] == "fr"]
    assert len(history_versions(ws, "de", "a.md")) == 2  # (the text before, and after)
    assert history_versions(ws, "fr", "a.md") == []


def test_a_vault_inside_another_vault_is_left_out_of_the_langs(tmp_path: Path) -> None:
    """A vault linked to a folder inside another's (or around it) shares its files too."""
    ws = tmp_path / "ws"
    langs = languages(ws)
    (langs / "en" / "vault" / "inner").mkdir(parents=True)
    (langs / "it").mkdir()
    (langs / "it" / "vault").symlink_to(langs / "en" / "vault" / "inner")
    (langs / "ja" / "vault").mkdir(parents=True)
    (langs / "de").mkdir()
    (langs / "de" / "vault").symlink_to(langs / "en")  # (around it: en/vault is inside)
    workspace = Workspace(ws)
    assert workspace.langs() == ["de", "ja"]
    assert workspace.shared_vaults() == {"en": "de", "it": "de"}
