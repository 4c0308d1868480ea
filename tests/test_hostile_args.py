"""Arguments that used to break the error contract: lone UTF-16 surrogates, 10,000 tags.

Every refusal is a coded tool error (never an uncoded one or ``internal``), changes
nothing, and the DEBUG line of the call is still written.
"""

from __future__ import annotations

import io
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from fastmcp import Client
from fastmcp.exceptions import ToolError
from helpers.snapshots import snapshot

from indexer.core import Core
from indexer.index.service import NoteIndex
from indexer.settings import Settings
from indexer.vault.sandbox import Sandbox
from indexer.vault.vault import Vault
from indexer.web.mcp import create_server
from shared.workspace import Workspace

LONE = "\ud800"
# Each tool with its string arguments (a lone surrogate goes into each one in turn).
CALLS: list[tuple[str, dict[str, object]]] = [
    ("read", {"lang": "en", "path": "a.md"}),
    ("write", {"lang": "en", "path": "a.md", "content": "# a\n", "if_match": "x"}),
    ("stat", {"lang": "en", "path": "a.md"}),
    ("append", {"lang": "en", "path": "a.md", "content": "more\n"}),
    ("find", {"lang": "en", "pattern": "**/*.md", "path": ""}),
    ("grep", {"lang": "en", "pattern": "alpha", "path": "", "glob": "**/*.md"}),
    ("delete", {"lang": "en", "path": "a.md"}),
    ("search", {"lang": "en", "query": "alpha", "type": "note", "path": ""}),
]
CASES = [
    (tool, key)
    for tool, args in CALLS
    for key, value in args.items()
    if isinstance(value, str) and key != "lang"
] + [("search", "tags")]


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[tuple[Client, Path]]:
    ws = Workspace(tmp_path / "ws")
    settings = Settings(workspace=ws, max_file_bytes=1 << 20)
    vault = Vault(Sandbox(ws), max_file_bytes=settings.max_file_bytes)
    vault.write("en", "a.md", "# a\nalpha\n")
    index = NoteIndex(ws)
    index.open()
    index.reconcile()
    vault.listeners.append(index.note_changed)
    try:
        async with Client(create_server(Core(settings, vault, index))) as client:
            yield client, tmp_path
    finally:
        index.close()


class StrictStream(logging.StreamHandler):  # type: ignore[type-arg]
    """A handler writing UTF-8 strictly, as a log file or a journal does; remembers errors."""

    def __init__(self) -> None:
        super().__init__(io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict"))
        self.failed = 0

    def handleError(self, record: logging.LogRecord) -> None:
        self.failed += 1


@pytest.mark.parametrize(("tool", "key"), CASES)
async def test_a_lone_surrogate_is_an_invalid_argument(
    rig: tuple[Client, Path], tool: str, key: str
) -> None:
    client, root = rig
    args = dict(next(args for name, args in CALLS if name == tool))
    args[key] = [f"tag{LONE}"] if key == "tags" else f"x{LONE}y"
    handler = StrictStream()
    logger = logging.getLogger("indexer.tools")
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.DEBUG)
    before = snapshot(root)
    try:
        with pytest.raises(ToolError) as info:
            await client.call_tool(tool, args)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    text = str(info.value)
    assert text.startswith(("invalid_argument: ", "forbidden_path: ")), text
    assert snapshot(root) == before
    assert handler.failed == 0, "the DEBUG line of the call could not be written"


async def test_ten_thousand_tags_are_an_invalid_argument(rig: tuple[Client, Path]) -> None:
    client, _ = rig
    tags = [f"t{n}" for n in range(10_000)]
    with pytest.raises(ToolError) as info:
        await client.call_tool("search", {"lang": "en", "query": "alpha", "tags": tags})
    assert str(info.value).startswith("invalid_argument: "), str(info.value)
    found = await client.call_tool("search", {"lang": "en", "query": "alpha", "tags": ["x"] * 50})
    assert found.structured_content is not None


async def test_a_blank_tag_is_an_invalid_argument(rig: tuple[Client, Path]) -> None:
    """It matched no note, silently (as a blank type did before it was refused)."""
    client, _ = rig
    with pytest.raises(ToolError) as info:
        await client.call_tool("search", {"lang": "en", "query": "alpha", "tags": [""]})
    assert str(info.value).startswith("invalid_argument: "), str(info.value)


async def test_a_search_folder_outside_the_vault_is_refused(rig: tuple[Client, Path]) -> None:
    """Every other tool refused ``../``; search ran and found nothing."""
    client, _ = rig
    for path in ("../", "x/../../y", "/etc", "~"):
        with pytest.raises(ToolError) as info:
            await client.call_tool("search", {"lang": "en", "query": "alpha", "path": path})
        assert str(info.value).startswith("forbidden_path: "), path


HUGE = 2**63  # one past SQLite's largest INTEGER
# Each tool with a whole-number argument; the huge number goes into each one in turn.
NUMBERS: list[tuple[str, dict[str, object], str]] = [
    ("read", {"lang": "en", "path": "a.md"}, "version"),
    ("read", {"lang": "en", "path": "a.md"}, "offset"),
    ("read", {"lang": "en", "path": "a.md"}, "limit"),
    ("diff", {"lang": "en", "path": "a.md", "from_version": 1}, "from_version"),
    ("diff", {"lang": "en", "path": "a.md", "from_version": 1}, "to_version"),
    ("restore", {"lang": "en", "path": "a.md"}, "version"),
    ("history", {"lang": "en", "path": "a.md"}, "limit"),
    ("search", {"lang": "en", "query": "alpha"}, "offset"),
    ("search", {"lang": "en", "query": "alpha"}, "limit"),
    ("find", {"lang": "en", "pattern": "**/*.md"}, "limit"),
    ("grep", {"lang": "en", "pattern": "alpha"}, "limit"),
]


@pytest.mark.parametrize(("tool", "args", "key"), NUMBERS)
@pytest.mark.parametrize("number", [HUGE, -HUGE - 1, 10**22])
async def test_a_number_sqlite_cannot_hold_is_an_invalid_argument(
    rig: tuple[Client, Path], tool: str, args: dict[str, object], key: str, number: int
) -> None:
    """It used to overflow in SQLite (``internal``); now it is refused before the tool."""
    client, root = rig
    assert tool in {t.name for t in await client.list_tools()}
    before = snapshot(root)
    with pytest.raises(ToolError) as info:
        await client.call_tool(tool, {**args, key: number})
    assert str(info.value).startswith("invalid_argument: "), str(info.value)
    assert f"'{key}'" in str(info.value) and "out of range" in str(info.value)
    assert snapshot(root) == before
    largest = {**args, key: 2**63 - 1}  # the largest that fits is the tool's to judge
    judged = await client.call_tool(tool, largest, raise_on_error=False)
    if judged.is_error:  # a refusal with its code (too big a limit, no such version)
        text = judged.content[0].text  # type: ignore[union-attr]
        assert text.split(":")[0] in {"invalid_argument", "not_found"}, text
