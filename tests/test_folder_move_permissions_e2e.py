"""A folder move over a subfolder the server may not list (its ``r`` or ``x`` taken
away), on a server that meets file permissions as any user's does (as root here,
without the capabilities that pass over them)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastmcp.exceptions import ToolError
from helpers.indexer_process import start_indexer
from helpers.permissions import as_plain_user, chmod
from helpers.snapshots import contents

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("mode", [0o300, 0o600])
async def test_a_folder_move_over_a_folder_it_may_not_list_moves_nothing(
    tmp_path: Path, modes: dict[Path, int], mode: int
) -> None:
    """The folder was renamed with the unlisted notes inside: moved without a version in
    history, their links not rewritten, while the answer counted only the notes listed
    (``files: 1``). Now it is refused as a folder holding an unreadable note is."""
    ws = tmp_path / "ws"
    server = start_indexer(ws, prefix=as_plain_user())
    root = ws / "memory" / "languages" / "en" / "vault"
    try:
        async with server.client() as c:
            for path in ("f/a.md", "f/sub/b.md", "other.md"):
                text = f"# {path}\n\nsee [o](/other.md)\n"
                await c.call_tool("write", {"lang": "en", "path": path, "content": text})
            chmod(modes, root / "f" / "sub", mode)
            before = contents(ws / "memory")
            with pytest.raises(ToolError) as info:
                await c.call_tool("move", {"lang": "en", "path": "f", "new_path": "g"})
            said = str(info.value)
            assert said.startswith("forbidden_path: ") and "f/sub" in said, said
            assert "permission denied" in said and "nothing was moved" in said, said
            assert contents(ws / "memory") == before
            chmod(modes, root / "f" / "sub", 0o755)
            moved = await c.call_tool("move", {"lang": "en", "path": "f", "new_path": "g"})
            assert moved.structured_content["files"] == 2
            done = await c.call_tool("history", {"lang": "en", "path": "g/sub/b.md"})
            assert done.structured_content["versions"][0]["moved_from"] == "f/sub/b.md"
    finally:
        assert server.stop() == 0
