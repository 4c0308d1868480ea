"""A read's answer at its worst, and a ``too_large`` refusal's advice there.

A note's text is in a ``read`` answer twice, the second time as a JSON string: a
control character such as U+0001 takes 13 bytes (``\\u0001``, then ``\\\\u0001``), so a
4 MiB note of them makes 54.5 MB, where the README said "up to 12 MB" (25.2 MB measured
for quotes and backslashes). And "read it in parts with offset and limit" cannot help
where one line is past the bound alone, or a file is not UTF-8 text (read whole:
offset and limit are refused for it): that refusal names the REST raw route instead.
"""

from __future__ import annotations

import re
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
README = Path(__file__).resolve().parent.parent / "README.md"


def answer_of(content: str) -> int:
    return reply_bytes({"path": "a.md", "etag": "0" * 16, "size": CAP, "content": content})


def test_the_readme_says_the_worst_case() -> None:
    said = " ".join(README.read_text(encoding="utf-8").split())
    for content in ('"\\' * (CAP // 2), "\u0001" * CAP):
        figure = f"{answer_of(content) / 1e6:.1f} MB"
        assert figure in said, figure
    # no character of a note takes more: the worst is a control character's 13 bytes
    for char in ("\u0001", "\u001f", '"', "\\", "\n", "\u2028", "\U0001f600", "\x7f"):
        per_byte = (answer_of(char * 1000) - answer_of("")) / len(char.encode()) / 1000
        assert per_byte <= 13, (char, per_byte)


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[Client]:
    ws = Workspace(tmp_path / "ws")
    folder = ws.vault_dir("en") / "items"
    folder.mkdir(parents=True)
    (folder / "controls.md").write_text("# c\n" + "\u0001" * (CAP - 8) + "\n", encoding="utf-8")
    (folder / "one line.md").write_text("\u0001" * (1 << 20), encoding="utf-8")
    (folder / "latin1.md").write_bytes(b"# caf\xe9\n" * ((CAP - 64) // 8))
    settings = Settings(workspace=ws, max_file_bytes=CAP)
    vault = Vault(Sandbox(ws), max_file_bytes=CAP)
    async with Client(create_server(Core(settings, vault))) as c:
        yield c


async def refusal(client: Client, **args: object) -> str:
    with pytest.raises(ToolError) as info:
        await client.call_tool("read", {"lang": "en", **args})
    return str(info.value)


async def test_a_note_of_control_characters_reads_in_parts(client: Client) -> None:
    message = await refusal(client, path="items/controls.md")
    assert message.startswith("too_large: the answer would be 54.5 MB"), message
    assert "offset and limit" in message
    part = await client.call_tool("read", {"lang": "en", "path": "items/controls.md", "limit": 1})
    assert part.structured_content is not None
    assert part.structured_content["content"] == "# c\n"


async def test_a_line_past_the_bound_alone_is_sent_to_the_raw_route(client: Client) -> None:
    for args in ({}, {"limit": 1}, {"offset": 0, "limit": 5}):
        message = await refusal(client, path="items/one line.md", **args)
        assert message.startswith("too_large: "), message
        assert "one line" in message and "GET /api/v1/<lang>/raw/items/one line.md" in message
        assert not re.search(r"read it in parts", message)
    assert answer_of("\u0001" * (1 << 20)) > MAX_REPLY_BYTES


async def test_a_file_not_utf8_is_sent_to_the_raw_route(client: Client) -> None:
    message = await refusal(client, path="items/latin1.md")
    assert message.startswith("too_large: "), message
    assert "not UTF-8 text" in message and "GET /api/v1/<lang>/raw/items/latin1.md" in message
    assert "offset" not in message
    with pytest.raises(ToolError, match="offset/limit apply to text files only"):
        await client.call_tool("read", {"lang": "en", "path": "items/latin1.md", "limit": 1})
