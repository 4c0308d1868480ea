"""A note a person saved with a BOM and no frontmatter (Notepad, some Windows editors),
then merged into or edited by the agent client, on a real ``indexer serve``."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime

from helpers.indexer_process import RunningIndexer, vault_dir

from agent_client.notes import split_note
from agent_client.notices import CollectingNoticeSink
from agent_client.writer import MemoryWriter
from shared.models import EditAction, MemoryEntry

T0 = datetime(2026, 11, 29, 20, 0, 0, tzinfo=UTC)
PERSON = "\ufeff# Bike repair\r\n\r\nPERSON: tyre pressure 4 bar\r\n"
_langs = itertools.count()


def person_note(server: RunningIndexer, lang: str) -> str:
    items = vault_dir(server, lang) / "items"
    items.mkdir(parents=True)
    (items / "bike-repair.md").write_bytes(PERSON.encode())
    return "items/bike-repair.md"


def test_a_merge_into_a_note_saved_with_a_bom_keeps_no_bom_in_the_middle(
    server: RunningIndexer, writer: MemoryWriter, sink: CollectingNoticeSink
) -> None:
    """The BOM went from the file's start to the body's, after the block the merge
    added: an invisible character before the heading, so the note's title became its
    file name (``bike-repair``) and the heading was no heading to the index and page."""
    lang = f"en-b{next(_langs):03d}"
    path = person_note(server, lang)
    writer.submit([MemoryEntry(lang, "knowledge", "Bike repair", "Oil the chain.", timestamp=T0)])
    assert writer.flush(30)
    assert sink.notices[-1].ok and sink.notices[-1].updated_files == [path]
    text = (vault_dir(server, lang) / path).read_text()
    assert "\ufeff" not in text
    meta, body = split_note(text)
    assert meta["title"] == "Bike repair"
    assert body.startswith("# Bike repair\n\nPERSON: tyre pressure 4 bar\n\n## 2026-11-29:")


async def test_an_edit_of_the_frontmatter_of_a_note_saved_with_a_bom_keeps_it_out(
    server: RunningIndexer, writer: MemoryWriter
) -> None:
    lang = f"en-b{next(_langs):03d}"
    path = person_note(server, lang)
    await writer.execute_action_async(EditAction(lang, path, frontmatter={"tags": ["bike"]}))
    text = (vault_dir(server, lang) / path).read_text()
    assert "\ufeff" not in text
    meta, body = split_note(text)
    assert meta["title"] == "Bike repair" and meta["tags"] == ["bike"]
    assert body == "# Bike repair\n\nPERSON: tyre pressure 4 bar\n"


async def test_a_write_that_put_a_block_before_a_bom_keeps_the_bom_out(
    server: RunningIndexer,
) -> None:
    """What a merging model (or any client) does with the text it read: a block put
    first, the BOM after it. The server's normalization drops it (a BOM is never text)."""
    lang = f"en-b{next(_langs):03d}"
    async with server.client() as client:
        result = await client.call_tool(
            "write",
            {"lang": lang, "path": "items/bike.md", "content": "---\ntags: [b]\n---\n" + PERSON},
        )
    assert result.structured_content["created"]
    text = (vault_dir(server, lang) / "items/bike.md").read_text()
    meta, body = split_note(text)
    assert "\ufeff" not in text and meta["title"] == "Bike repair"
    assert body == "# Bike repair\n\nPERSON: tyre pressure 4 bar\n"
