"""What the deterministic writer keeps of an entry as given, end to end against a real
``indexer serve``: the entry's own time (``remember --at``) in the note it creates, an
event's title with its own spaces, a tag once however it is spelled."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import unicodedata
from datetime import UTC, datetime, timedelta, timezone

import pytest
from helpers.indexer_process import RunningIndexer, vault_dir

from agent_client.connection import mcp_vault_connection
from agent_client.notes import split_note
from agent_client.notices import CollectingNoticeSink, SystemNotice
from agent_client.settings import ClientSettings
from agent_client.writer import MemoryWriter
from shared.errors import ConflictError
from shared.frontmatter import string_list
from shared.models import DeleteAction, EditAction, MemoryEntry

T0 = datetime(2026, 11, 29, 20, 0, 0, tzinfo=UTC)
_langs = itertools.count()


@pytest.fixture
def lang() -> str:
    return f"en-f{next(_langs):03d}"


def remember(writer: MemoryWriter, sink: CollectingNoticeSink, entry: MemoryEntry) -> SystemNotice:
    writer.submit([entry])
    assert writer.flush(60)
    notice = sink.notices[-1]
    assert notice.ok, notice
    return notice


def test_the_entry_that_creates_a_note_keeps_its_date(
    server: RunningIndexer, writer: MemoryWriter, sink: CollectingNoticeSink, lang: str
) -> None:
    """``remember --at 2020-01-01...`` left the date nowhere when it created the note; the
    next entry of the topic got its ``## 2020-01-02: ...`` section."""
    tokyo = timezone(timedelta(hours=9))
    at = [datetime(2020, 1, day, 9, tzinfo=tokyo) for day in (1, 2)]  # 00:00 in UTC
    first = MemoryEntry(lang, "knowledge", "東京の天気", "晴れ", timestamp=at[0])
    second = MemoryEntry(lang, "knowledge", "東京の天気", "雨", timestamp=at[1])
    assert remember(writer, sink, first).updated_files == ["items/東京の天気.md"]
    remember(writer, sink, second)
    meta, body = split_note((vault_dir(server, lang) / "items/東京の天気.md").read_text())
    assert body == (
        "# 東京の天気\n\n## 2020-01-01: 東京の天気\n\n晴れ\n\n## 2020-01-02: 東京の天気\n\n雨\n"
    )
    assert meta["title"] == "東京の天気"
    again = remember(writer, sink, first)  # the same entry once more: already there
    assert again.update_summary.endswith("already holds this entry; nothing added.")


def test_another_entry_of_the_same_text_has_a_section_of_its_own(
    server: RunningIndexer, writer: MemoryWriter, sink: CollectingNoticeSink, lang: str
) -> None:
    """A second entry (another id) whose content a section already was got "already
    holds this entry" and wrote nothing: the undo of the first then deleted the note, and
    with it the fact the second one's notice said was saved."""
    first = MemoryEntry(lang, "knowledge", "Deploy", "run make deploy", timestamp=T0)
    second = MemoryEntry(lang, "knowledge", "Deploy", "run make deploy", timestamp=T0)
    (path,) = remember(writer, sink, first).updated_files
    saved = remember(writer, sink, second)
    note = vault_dir(server, lang) / path

    async def undo(entry: MemoryEntry) -> None:
        settings = ClientSettings(workspace=server.workspace, tz=UTC)
        async with mcp_vault_connection(lang, settings) as vault:
            with contextlib.suppress(ConflictError):  # a later entry changed the note
                await vault.undo(entry.id)

    asyncio.run(undo(first))
    assert note.exists(), f"the second entry's fact is gone; its notice: {saved.update_summary}"
    assert saved.update_summary.startswith(f"Added a section to {path}")
    assert split_note(note.read_text())[1].count("run make deploy") == 2
    asyncio.run(undo(second))  # the first entry's section stays
    assert split_note(note.read_text())[1].count("run make deploy") == 1
    asyncio.run(undo(first))
    assert not note.exists()


def test_an_event_title_keeps_its_spaces(
    server: RunningIndexer, writer: MemoryWriter, sink: CollectingNoticeSink, lang: str
) -> None:
    """The ``- title:`` line rewrote every Unicode space to an ASCII one (the ideographic
    space of a Japanese title, the no-break space of "10 km"), where a knowledge note
    keeps its title exactly."""
    titles = ["東京\u3000出張", "10\u00a0km run", "A\u2009–\u2009B", "two  spaces"]
    for title in titles:
        entry = MemoryEntry(lang, "event", title, "body", timestamp=T0)
        (path,) = remember(writer, sink, entry).updated_files
    day = (vault_dir(server, lang) / path).read_text()
    lines = [line for line in day.splitlines() if line.startswith("- title: ")]
    assert lines == [f"- title: {title}" for title in titles]


def test_tags_are_kept_once_as_the_tags_filter_compares_them(
    server: RunningIndexer, writer: MemoryWriter, sink: CollectingNoticeSink, lang: str
) -> None:
    """``café`` typed composed then decomposed (as macOS input gives it), ``ＡＢＣ`` then
    ``ABC``: a merge kept both spellings of each, one tag to search."""
    cafe = "café"
    tags = [[cafe, "ＡＢＣ"], [unicodedata.normalize("NFD", cafe), "ABC", "abc", "new"]]
    for n, entry_tags in enumerate(tags):
        entry = MemoryEntry(lang, "knowledge", "Tag test", f"fact {n}", entry_tags, T0)
        remember(writer, sink, entry)
    meta, _ = split_note((vault_dir(server, lang) / "items/tag-test.md").read_text())
    assert meta["tags"] == [cafe, "ＡＢＣ", "new"]  # each in its first spelling

    async def tagged(tag: str) -> list[str]:
        settings = ClientSettings(workspace=server.workspace, tz=UTC)
        async with mcp_vault_connection(lang, settings) as vault:
            found = await vault.search("fact", tags=[tag])
        return [hit["path"] for hit in found["results"]]

    for tag in (unicodedata.normalize("NFD", cafe), "abc"):
        assert asyncio.run(tagged(tag)) == ["items/tag-test.md"]


def test_the_shared_tag_rule_keeps_a_tag_once_by_its_key() -> None:
    """The server's normalization and the index read tags by this rule too."""
    nfd = unicodedata.normalize("NFD", "Ärger")
    assert string_list("tags", ["Ärger", nfd, "ärger", "#ÄRGER", "ＡＩ", "ai", "İ", "i"]) == [
        "Ärger",
        "ＡＩ",
        "İ",
    ]
    assert string_list("tags", "Python, python, PYTHON") == ["Python"]
    assert string_list("aliases", ["NYC", "nyc"]) == ["NYC", "nyc"]  # names as written


def test_an_actions_result_names_the_note_as_the_vault_spells_it(
    server: RunningIndexer, writer: MemoryWriter, lang: str
) -> None:
    """``agent-client delete ./items//x.md`` said "deleted ./items//x.md" (and ``--json``
    gave that path): the request's spelling, where every other result carries the path
    the vault normalized (NFC, no ``./`` nor ``//``)."""
    cafe = unicodedata.normalize("NFD", "café")
    for name in ("x", "y", "z"):
        (vault_dir(server, lang) / "items").mkdir(parents=True, exist_ok=True)
        (vault_dir(server, lang) / f"items/{name}-café.md").write_text(f"# {name}\n\nfact\n")
    edit = EditAction(lang, f"./items//x-{cafe}.md", frontmatter={"status": "done"})
    asyncio.run(writer.execute_action_async(EditAction(lang, "items/y-café.md", body="# y\n")))
    same = EditAction(lang, f"items/./y-{cafe}.md", frontmatter={"id": "kept"})  # (unchanged)
    delete = DeleteAction(lang, f"items//z-{cafe}.md")
    results = [asyncio.run(writer.execute_action_async(a)) for a in (edit, same, delete)]
    assert [r.path for r in results] == [f"items/{n}-café.md" for n in ("x", "y", "z")]
    assert not results[1].changed and results[2].deleted
