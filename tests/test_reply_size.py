"""A read-only tool's answer fits in what an MCP client takes in one message.

The content of a ``read`` is in its answer twice (the structured content, and the text
block's JSON, escaped once more): a 4 MiB note of quotes and backslashes (within
``INDEXER_MAX_FILE_BYTES``) made an answer of 11.9 MB, past the 10 MiB a TypeScript
SDK client takes from a stdio bridge (Claude Desktop's ``mcp-remote``), which closed
the connection. Such an answer is refused as ``too_large``, saying how to ask for
less; the same note reads in parts; a plain note of the same size reads whole.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from fastmcp import Client
from fastmcp.exceptions import ToolError

from indexer.core import Core
from indexer.settings import Settings
from indexer.vault.sandbox import Sandbox
from indexer.vault.vault import Vault
from indexer.web.mcp import create_server
from indexer.web.reply_size import MAX_REPLY_BYTES, reply_bytes
from shared.workspace import Workspace

CAP = 4 * 1024 * 1024  # the default INDEXER_MAX_FILE_BYTES
QUOTED = 'He said "hi" \\ and left\n'  # each " and \ takes 6 bytes of the answer


def note_of(line: str, size: int) -> str:
    return ("# Big\n\n" + line * (size // len(line) + 1))[: size - 1] + "\n"


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[Client]:
    ws = Workspace(tmp_path / "ws")
    folder = ws.vault_dir("en") / "items"
    folder.mkdir(parents=True)
    (folder / "quoted.md").write_text(note_of(QUOTED, CAP - 4096), encoding="utf-8")
    (folder / "plain.md").write_text(note_of("plain words in a line\n", CAP - 4096))
    (folder / "small.md").write_text("# Small\n\n" + QUOTED * 10)
    settings = Settings(workspace=ws, max_file_bytes=CAP)
    vault = Vault(Sandbox(ws), max_file_bytes=CAP)
    async with Client(create_server(Core(settings, vault))) as c:
        yield c


def sent_bytes(result: object) -> int:
    """The bytes a tools/call answer's result takes as the server sends it."""
    return len(json.dumps(result, ensure_ascii=False, separators=(",", ":")).encode())


async def test_a_read_whose_answer_is_past_what_a_client_takes_is_refused(
    client: Client, tmp_path: Path
) -> None:
    path = tmp_path / "ws" / "memory" / "languages" / "en" / "vault" / "items" / "quoted.md"
    before = path.read_bytes()
    with pytest.raises(ToolError) as info:
        await client.call_tool("read", {"lang": "en", "path": "items/quoted.md"})
    message = str(info.value)
    assert message.startswith("too_large: "), message
    assert "offset" in message and "limit" in message, message
    assert path.read_bytes() == before

    # in parts, it reads
    part = await client.call_tool("read", {"lang": "en", "path": "items/quoted.md", "limit": 1000})
    assert part.structured_content is not None
    assert part.structured_content["content"].count("\n") == 1000


async def test_a_plain_note_of_the_same_size_reads_whole(client: Client) -> None:
    result = await client.call_tool("read", {"lang": "en", "path": "items/plain.md"})
    assert result.structured_content is not None
    assert len(result.structured_content["content"]) > CAP - 8192


def test_reply_bytes_is_what_the_answer_takes() -> None:
    """Counted as the server sends it: the structured content, and the text block that
    holds the same JSON as a string."""
    for result in (
        {"content": QUOTED * 100, "size": 5},
        {"paths": ["a/é.md", "b\u0001.md"], "truncated": False},
        {"content": "中文" * 50 + "\u2028"},
    ):
        text = json.dumps(result, ensure_ascii=False, separators=(",", ":"))
        answer = {"content": [{"type": "text", "text": text}], "structuredContent": result}
        measured = reply_bytes(result)
        # (the answer's own keys and the text block's type add a few dozen bytes)
        overhead = sent_bytes(answer) - measured
        assert 0 <= overhead < 100, (result, overhead)
    assert MAX_REPLY_BYTES < 10 * 1024 * 1024
