"""A deleted note ``café.md`` (NFC) whose decomposed twin another program made since:
``restore`` and ``undo`` of it, through a real server (``indexer serve``).

The twin is the only spelling on disk, so the tools reach it under ``café.md``; a
restore writes over it, and must not lose its text: history records the twin's text
first (an external version), whatever the watcher has seen yet. An undo of the entry
that deleted the note finds the file changed since and refuses (``conflict``), the
twin left as it was.
"""

from __future__ import annotations

import os
import signal
import unicodedata
from pathlib import Path

import pytest
from fastmcp.exceptions import ToolError
from helpers.indexer_process import start_indexer, vault_dir

NFC = unicodedata.normalize("NFC", "café.md")
NFD = unicodedata.normalize("NFD", "café.md")


async def test_restore_and_undo_over_an_unrecorded_nfd_twin(tmp_path: Path) -> None:
    server = start_indexer(tmp_path / "ws")
    try:
        folder = vault_dir(server, "en")
        async with server.client() as c:

            async def call(tool: str, **args: object) -> dict:
                result = await c.call_tool(tool, {"lang": "en", **args})
                assert isinstance(result.structured_content, dict)
                return result.structured_content

            await call("write", path=NFC, content="composed\n")
            await call("delete", path=NFC, reason="entry:e1 gone")
            (folder / NFD).write_text("decomposed twin\n", encoding="utf-8")
            with pytest.raises(ToolError, match=r"^conflict: entry e1 cannot be undone"):
                await call("undo", entry_id="e1")
            assert os.listdir(folder) == [NFD]
            assert (folder / NFD).read_text(encoding="utf-8") == "decomposed twin\n"
            restored = await call("restore", path=NFC, version=1)
            assert restored["restored_from"] == 1
            names = [n for n in os.listdir(folder) if n.startswith("caf")]
            assert len(names) == 1  # (written in place: no composed twin made beside it)
            versions = (await call("history", path=NFC))["versions"]
            twin = [v for v in versions if v["actor"] == "external"]
            assert len(twin) == 1 and twin[0]["version"] < restored["version"]
            old = await call(
                "diff", path=NFC, from_version=twin[0]["version"], to_version=restored["version"]
            )
            assert "decomposed twin" in str(old)
    finally:
        assert server.stop(signal.SIGTERM) == 0
