"""A summary edited by hand is made again whatever the edit's mtime says of the clock: a
real ``indexer serve`` (no model: the fallback) hears the edit as a sync tool or an editor
makes it (a temporary file renamed over the summary, its mtime kept)."""

from __future__ import annotations

import asyncio
import os
from datetime import datetime
from pathlib import Path

import pytest
from helpers.indexer_process import RunningIndexer, start_indexer, wait_for

from shared.frontmatter import parse_frontmatter

pytestmark = pytest.mark.e2e


def _meta(path: Path) -> dict[str, object]:
    try:
        return parse_frontmatter(path.read_text())[0]
    except (FileNotFoundError, ValueError):
        return {}


def _current(server: RunningIndexer, folder: str) -> bool:
    """Whether the server serves the folder's summary as current (its pass is done)."""

    async def ask() -> bool:
        async with server.client() as client:
            result = await client.call_tool("summary", {"lang": "en", "path": folder})
        found = result.structured_content
        return isinstance(found, dict) and found["stale"] is False

    return asyncio.run(ask())


@pytest.mark.parametrize(
    "offset",
    [
        pytest.param(60.0, id="saved-a-minute-after-its-stamp"),
        # The clock stepped back an hour since the job wrote it, or the edit came from a
        # machine whose clock is an hour behind: the edit was kept for good.
        pytest.param(-3600.0, id="saved-an-hour-before-its-stamp"),
    ],
)
def test_a_hand_edited_summary_is_made_again(tmp_path: Path, offset: float) -> None:
    ws = tmp_path / "ws"
    vault = ws / "memory" / "languages" / "en" / "vault"
    (vault / "f").mkdir(parents=True)
    (vault / "f" / "a.md").write_text("# A\n\nalpha notes\n")
    overview = vault / "f" / ".overview.md"
    server = start_indexer(ws, env={"INDEXER_SUMMARIES_DEBOUNCE": "0.1"})
    try:
        made = wait_for(lambda: _meta(overview).get("abstract"), 20, what="the summary")
        wait_for(lambda: _current(server, "f") and _current(server, ""), 20, interval=0.2)
        stamp = datetime.fromisoformat(str(_meta(overview)["updated"]).replace("Z", "+00:00"))
        edited = overview.read_text().replace(str(made), "EDITED BY HAND")
        assert "EDITED BY HAND" in edited
        temp = vault / "f" / ".overview.md.tmp"
        temp.write_text(edited)
        when = stamp.timestamp() + offset
        os.utime(temp, (when, when))
        temp.replace(overview)
        wait_for(
            lambda: _meta(overview).get("abstract") == made,
            20,
            what="the summary made again over the hand edit",
        )
    finally:
        server.stop()
