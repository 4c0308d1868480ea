"""A move right after ``indexer serve`` wrote its URL file, while its first index or the
start's catch-up has not reached the notes linking to the moved note: their links
follow all the same (found by reading the notes the index does not vouch for yet), and
an answer that could not look at every note says so (``relink_partial``).

A one-letter name's link spellings were looked for one grep each (28 reads of every
note the index had not seen): at 15,000 notes a move took past its 10 s and answered
``relinked: []`` or every linking note as skipped."""

from __future__ import annotations

from pathlib import Path

import httpx2
import pytest
from helpers.indexer_process import start_indexer

from shared.workspace import Workspace

NOTES = 3000
LINK = "see [[a]] and [the a](../a.md)\n"


def fill(vault: Path, numbers: range, linking: set[int]) -> None:
    for n in numbers:
        text = f"# Note {n}\n\nwords {n} about quokkas\n" + (LINK if n in linking else "")
        (vault / "n" / f"n{n:05}.md").write_text(text)


@pytest.mark.parametrize("start", ["first index", "catch-up"])
def test_a_move_as_soon_as_the_url_file_is_there_relinks_every_note(
    tmp_path: Path, start: str
) -> None:
    ws = Workspace(tmp_path / "ws")
    vault = ws.vault_dir("en")
    (vault / "n").mkdir(parents=True)
    (vault / "a.md").write_text("# A\n")
    if start == "first index":  # (no index yet)
        linking = set(range(7, NOTES, NOTES // 10))
        fill(vault, range(NOTES), linking)
    else:  # an index, then notes linking to a.md saved while no indexer ran
        fill(vault, range(NOTES), set())
        start_indexer(ws.root, timeout=120).stop()
        linking = set(range(NOTES - 20, NOTES + 20, 5))
        fill(vault, range(NOTES - 20, NOTES + 20), linking)
    server = start_indexer(ws.root, settled=False, timeout=60)
    try:
        with httpx2.Client(base_url=server.url.removesuffix("/mcp") + "/api/v1/en") as http:
            answer = http.post("/move", json={"path": "a.md", "new_path": "b.md"}, timeout=60)
    finally:
        server.stop()
    assert answer.status_code == 200, answer.text
    moved = answer.json()
    assert "relink_partial" not in moved and "relink_skipped" not in moved, moved
    assert moved["relinked"] == [f"n/n{n:05}.md" for n in sorted(linking)]
    after = "see [[b]] and [the a](../b.md)\n"
    for n in linking:
        assert (vault / "n" / f"n{n:05}.md").read_text().endswith(after)
