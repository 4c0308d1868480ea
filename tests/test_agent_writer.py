"""The Memory Writer end to end against a real ``indexer serve``: validation, events,
fallback merges, images, actions, isolation of failures, and the offline rules."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import signal
import socket
import struct
import time
import zlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from helpers.indexer_process import RunningIndexer, start_indexer, vault_dir, wait_for

from agent_client import writer as writer_module
from agent_client.actions import ActionResult
from agent_client.connection import mcp_vault_connection, open_session
from agent_client.events import append_event, appended_already
from agent_client.notes import split_note
from agent_client.notices import CollectingNoticeSink, SystemNotice
from agent_client.settings import ClientSettings
from agent_client.writer import MemoryWriter
from shared.errors import IndexerOfflineError, InvalidArgumentError, NotFoundError, TooLargeError
from shared.models import DeleteAction, EditAction, MemoryEntry
from shared.workspace import OVERVIEW_FILE

T0 = datetime(2026, 11, 29, 20, 0, 0, tzinfo=UTC)
_langs = itertools.count()


@pytest.fixture
def lang() -> str:
    return f"en-w{next(_langs):03d}"


def knowledge(lang: str, title: str, content: str, **kw: object) -> MemoryEntry:
    return MemoryEntry(lang, "knowledge", title, content, timestamp=T0, **kw)  # type: ignore[arg-type]


def event(lang: str, title: str, at: datetime = T0, **kw: object) -> MemoryEntry:
    return MemoryEntry(lang, "event", title, f"content of {title}", timestamp=at, **kw)  # type: ignore[arg-type]


def png_bytes() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


def dead_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# -- submit ----------------------------------------------------------------------------


def test_submit_refuses_a_bad_entry_before_queueing_anything(
    writer: MemoryWriter, sink: CollectingNoticeSink, lang: str
) -> None:
    good = event(lang, "fine")
    bad = event(lang, "x")
    bad.timestamp = datetime(2026, 1, 1)  # naive
    with pytest.raises(ValueError, match="timezone-aware"):
        writer.submit([good, bad])
    with pytest.raises(ValueError, match="not a MemoryEntry"):
        writer.submit([good, "text"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="lang"):
        writer.submit([knowledge("EN", "t", "c")])
    assert writer.flush(10)
    assert sink.notices == []


# -- events ----------------------------------------------------------------------------


def test_events_append_in_order_with_one_preamble(
    server: RunningIndexer, writer: MemoryWriter, sink: CollectingNoticeSink, lang: str
) -> None:
    entries = [event(lang, f"e{i}", T0 + timedelta(minutes=i), tags=["t"]) for i in range(5)]
    writer.submit(entries[:2])
    writer.submit(entries[2:])
    assert writer.flush(30)
    assert [n.ok for n in sink.notices] == [True] * 5
    text = (vault_dir(server, lang) / "events/2026/11/29.md").read_text()
    meta, body = split_note(text)
    assert meta["type"] == "events" and meta["id"]
    # what a folder summary says of the day (its first paragraph is every day file's)
    assert meta["description"] == "Events 2026-11-29"
    assert body.count("# Events 2026-11-29") == 1
    assert body.count("\n## Event\n") == 5
    positions = [text.index(f"- entry: {e.id}") for e in entries]
    assert positions == sorted(positions)
    assert "- time: 2026-11-29T20:03:00+00:00" in text


def test_event_day_follows_the_configured_time_zone(server: RunningIndexer, lang: str) -> None:
    sink = CollectingNoticeSink()
    tokyo = MemoryWriter(
        ClientSettings(workspace=server.workspace, tz=ZoneInfo("Asia/Tokyo")), sink
    )
    try:
        tokyo.submit([event(lang, "late", datetime(2026, 11, 29, 23, 30, tzinfo=UTC))])
        assert tokyo.flush(30)
    finally:
        tokyo.close()
    assert sink.notices[0].updated_files == ["events/2026/11/30.md"]
    assert (
        "- time: 2026-11-30T08:30:00+09:00"
        in (vault_dir(server, lang) / "events/2026/11/30.md").read_text()
    )


def writers_at_once(
    server: RunningIndexer, batches: list[list[MemoryEntry]]
) -> list[CollectingNoticeSink]:
    """One writer per batch (as agents in other processes), all submitted at once and
    flushed; their sinks."""
    settings = ClientSettings(workspace=server.workspace, tz=UTC)
    sinks = [CollectingNoticeSink() for _ in batches]
    writers = [MemoryWriter(settings, s) for s in sinks]
    try:
        for w, batch in zip(writers, batches, strict=True):
            w.submit(batch)
        assert all(w.flush(120) for w in writers)
    finally:
        for w in writers:
            w.close()
    return sinks


def test_two_writers_racing_create_one_preamble(server: RunningIndexer, lang: str) -> None:
    batches = [[event(lang, f"w{w}-{i}") for i in range(6)] for w in range(2)]
    sinks = writers_at_once(server, batches)
    assert all(n.ok for s in sinks for n in s.notices)
    text = (vault_dir(server, lang) / "events/2026/11/29.md").read_text()
    assert text.count("---\n") == 2 and text.count("# Events 2026-11-29") == 1
    assert text.count("\n## Event\n") == 12
    for batch in batches:  # each writer's events in its own order
        positions = [text.index(f"- entry: {e.id}\n") for e in batch]
        assert positions == sorted(positions)


def test_three_writers_merging_into_one_note_lose_no_entry(
    server: RunningIndexer, lang: str
) -> None:
    """Three agents' writers merging one topic at once keep winning in turn: with three
    tries back to back, 5 to 8 of 45 entries failed as conflicts (their text lost)."""
    batches = [
        [knowledge(lang, "日本語の勉強", f"fact-{w}-{i}") for i in range(15)] for w in range(3)
    ]
    sinks = writers_at_once(server, batches)
    assert [n.error for s in sinks for n in s.notices if not n.ok] == []
    text = (vault_dir(server, lang) / "items/日本語の勉強.md").read_text()
    lost = [e.content for batch in batches for e in batch if f"\n{e.content}\n" not in text]
    assert lost == []


async def test_racing_day_file_creation_writes_one_preamble(
    server: RunningIndexer, lang: str
) -> None:
    settings = ClientSettings(workspace=server.workspace, tz=UTC)
    days = [T0 + timedelta(days=d) for d in range(8)]
    async with open_session(settings) as one, open_session(settings) as two:
        await asyncio.gather(
            *(
                append_event(session.vault(lang), event(lang, f"{n}", at), UTC)
                for at in days
                for n, session in enumerate((one, two))
            )
        )
    for at in days:
        text = (vault_dir(server, lang) / f"events/{at:%Y/%m/%d}.md").read_text()
        assert text.count("# Events ") == 1 and text.count("\n## Event\n") == 2


# -- knowledge, deterministic fallback ---------------------------------------------------


def test_fallback_creates_then_merges_by_slug_and_by_title(
    server: RunningIndexer, writer: MemoryWriter, sink: CollectingNoticeSink, lang: str
) -> None:
    writer.submit([knowledge(lang, 'Past tense of "go"', "went", tags=["grammar"])])
    writer.submit([knowledge(lang, "past tense of go!", "gone (participle)", tags=["verbs"])])
    assert writer.flush(30)
    note = vault_dir(server, lang) / "items/past-tense-of-go.md"
    meta, body = split_note(note.read_text())
    assert meta["title"] == 'Past tense of "go"' and meta["type"] == "item"
    assert meta["tags"] == ["grammar", "verbs"] and meta["id"] and meta["created"]
    assert body.startswith('# Past tense of "go"\n\n## 2026-11-29: Past tense of "go"\n\nwent\n')
    assert "## 2026-11-29: past tense of go!\n\ngone (participle)\n" in body
    assert [n.method for n in sink.notices] == ["fallback", "fallback"]
    assert sink.notices[0].update_summary.startswith("Created items/past-tense-of-go.md")

    # a note whose file name differs but whose title matches
    (vault_dir(server, lang) / "items/verbs").mkdir()
    (vault_dir(server, lang) / "items/verbs/irregular.md").write_text(
        "---\ntitle: Irregular verbs\n---\n# Irregular verbs\n\nsee list\n"
    )
    verbs = knowledge(lang, "irregular VERBS", "be, have, do")
    writer.submit([verbs])
    writer.submit([verbs])  # the same entry again: no duplicate
    assert writer.flush(30)
    text = (vault_dir(server, lang) / "items/verbs/irregular.md").read_text()
    assert text.count("be, have, do") == 1
    assert sink.notices[-1].updated_files == ["items/verbs/irregular.md"]
    assert "already holds" in sink.notices[-1].update_summary


def test_fallback_leaves_a_note_whose_block_cannot_be_read_and_makes_its_own(
    server: RunningIndexer, writer: MemoryWriter, sink: CollectingNoticeSink, lang: str
) -> None:
    """A section added to a note whose block repeats a key stacked a second block on it
    (the old block, tags and all, became body text)."""
    items = vault_dir(server, lang) / "items"
    items.mkdir(parents=True)
    broken = "---\ntitle: Plan\ntags: [a]\ntags: [b]\n---\n# Plan\n\nday one\n"
    (items / "plan.md").write_text(broken)
    writer.submit([knowledge(lang, "Plan", "day two")])
    assert writer.flush(30)
    assert (items / "plan.md").read_text() == broken
    (notice,) = sink.notices
    assert notice.ok and notice.updated_files == ["items/plan-2.md"]
    meta, body = split_note((items / "plan-2.md").read_text())
    assert meta["title"] == "Plan" and "day two" in body and body.count("---") == 0


def test_short_entries_are_compared_whole_not_as_substrings(
    server: RunningIndexer, writer: MemoryWriter, sink: CollectingNoticeSink, lang: str
) -> None:
    title = "Past tense of go"
    went = knowledge(lang, title, "went", tags=["grammar"])
    writer.submit([went])
    # each word is in the note already, in its title, heading, frontmatter or tags
    words = ["go", "item", "grammar", "Past tense", "past-tense-of-go"]
    entries = [knowledge(lang, title, word) for word in words]
    writer.submit(entries)
    assert writer.flush(30)
    assert [n.update_summary.split()[0] for n in sink.notices] == ["Created"] + ["Added"] * 5

    # the same entries again (one spaced otherwise): each is held by its own section
    writer.submit([knowledge(lang, title, "  go\n\n", id=entries[0].id), went])
    assert writer.flush(30)
    assert all("already holds" in n.update_summary for n in sink.notices[-2:])
    body = split_note((vault_dir(server, lang) / "items/past-tense-of-go.md").read_text())[1]
    for word in words:
        assert body.count(f"## 2026-11-29: {title}\n\n{word}\n") == 1
    assert body.count("went") == 1


def test_fallback_with_cjk_title(server: RunningIndexer, writer: MemoryWriter, lang: str) -> None:
    writer.submit([knowledge(lang, "東京の天気", "晴れ")])
    assert writer.flush(30)
    assert "晴れ" in (vault_dir(server, lang) / "items/東京の天気.md").read_text()


# -- images ----------------------------------------------------------------------------


def test_images_are_copied_and_linked(
    server: RunningIndexer,
    writer: MemoryWriter,
    sink: CollectingNoticeSink,
    lang: str,
    tmp_path: Path,
) -> None:
    image = tmp_path / "board photo.png"
    image.write_bytes(png_bytes())
    writer.submit([knowledge(lang, "Whiteboard", "the plan", images=[str(image)])])
    assert writer.flush(30)
    notice = sink.notices[-1]
    assert notice.ok, notice.error
    assets = [p for p in notice.updated_files if ".assets/" in p]
    assert len(assets) == 1 and assets[0].startswith("items/whiteboard.md.assets/board-photo-")
    copied = vault_dir(server, lang) / assets[0]
    assert copied.read_bytes() == image.read_bytes()
    link = assets[0].removeprefix("items/")
    assert (
        f"![board photo]({link})" in (vault_dir(server, lang) / "items/whiteboard.md").read_text()
    )


def test_bad_images_fail_the_entry_and_the_next_one_still_runs(
    server: RunningIndexer,
    writer: MemoryWriter,
    sink: CollectingNoticeSink,
    lang: str,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    text_file = tmp_path / "notes.png"
    text_file.write_text("not an image")
    missing = knowledge(lang, "Missing", "x", images=[str(tmp_path / "nope.png")])
    not_image = knowledge(lang, "Not image", "x", images=[str(text_file)])
    after = knowledge(lang, "After", "still written")
    with caplog.at_level(logging.ERROR, logger="agent_client.writer"):
        writer.submit([missing, not_image, after])
        assert writer.flush(30)
    notices = sink.notices
    assert [n.ok for n in notices] == [False, False, True]
    assert "does not exist" in (notices[0].error or "")
    assert "not a PNG" in (notices[1].error or "")
    assert missing.id in caplog.text and not_image.id in caplog.text
    items = vault_dir(server, lang) / "items"
    assert sorted(p.name for p in items.iterdir() if not p.name.startswith(".")) == ["after.md"]


# -- actions ---------------------------------------------------------------------------


async def test_edit_keeps_protected_fields_and_delete_removes_assets(
    server: RunningIndexer, writer: MemoryWriter, lang: str, tmp_path: Path
) -> None:
    image = tmp_path / "pic.png"
    image.write_bytes(png_bytes())
    writer.submit([knowledge(lang, "Edited", "old body", tags=["a"], images=[str(image)])])
    assert writer.flush(30)
    path = vault_dir(server, lang) / "items/edited.md"
    before, _ = split_note(path.read_text())

    result = await writer.execute_action_async(
        EditAction(
            lang,
            "items/edited.md",
            body="# Edited\n\nnew body\n",
            frontmatter={"id": "FORGED", "created": "2000-01-01T00:00:00Z", "tags": ["b"]},
        )
    )
    assert result.path == "items/edited.md" and result.etag
    after, body = split_note(path.read_text())
    assert after["id"] == before["id"] and after["created"] == before["created"]
    assert after["tags"] == ["b"] and body == "# Edited\n\nnew body\n"

    assert (await writer.execute_action_async(DeleteAction(lang, "items/edited.md"))).deleted
    assert not path.exists() and not Path(f"{path}.assets").exists()
    with pytest.raises(NotFoundError):
        await writer.execute_action_async(DeleteAction(lang, "items/edited.md"))
    with pytest.raises(ValueError, match="body"):
        await writer.execute_action_async(EditAction(lang, "items/x.md"))


async def test_module_singleton(server: RunningIndexer, lang: str) -> None:
    sink = CollectingNoticeSink()
    writer_module.configure_writer(ClientSettings(workspace=server.workspace, tz=UTC), sink)
    try:
        writer_module.submit([event(lang, "via singleton")])
        assert writer_module.flush(30)
        assert sink.notices[0].ok
        async with mcp_vault_connection(lang, writer_module.get_writer().settings) as vault:
            await vault.write("items/s.md", "# S\n")
        await writer_module.execute_action_async(DeleteAction(lang, "items/s.md"))
    finally:
        writer_module.close()


# -- logging ---------------------------------------------------------------------------

TRANSPORT_LOGGERS = ("httpx2", "httpcore2", "mcp", "fastmcp", "openai")


def test_a_batch_logs_no_transport_lines_at_info(
    server: RunningIndexer, lang: str, caplog: pytest.LogCaptureFixture
) -> None:
    root = logging.getLogger()
    handlers = list(root.handlers)
    with caplog.at_level(logging.INFO):
        w = MemoryWriter(ClientSettings(workspace=server.workspace, tz=UTC))
        try:
            w.submit([knowledge(lang, "Quiet", "no noise"), event(lang, "quiet")])
            assert w.flush(30)
        finally:
            w.close()
        assert root.level == logging.INFO and root.handlers == handlers  # root untouched
    names = [r.name for r in caplog.records]
    assert not [n for n in names if n.split(".")[0] in TRANSPORT_LOGGERS], names
    assert names.count("agent_client.notices") == 2  # the writer's own lines still come


# -- offline ---------------------------------------------------------------------------


def test_offline_batches_are_dropped_with_errors_fast(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    sink = CollectingNoticeSink()
    settings = ClientSettings(workspace=tmp_path, tz=UTC, connect_timeout=1.0)
    w = MemoryWriter(settings, sink)
    entries = [event("en", "e1"), knowledge("en", "k1", "c"), event("en", "e2")]
    try:
        with caplog.at_level(logging.ERROR, logger="agent_client.writer"):
            started = time.perf_counter()
            w.submit(entries)  # no URL file at all
            assert time.perf_counter() - started < 0.5  # submit never waits (a connect: 1 s)
            assert w.flush(5)
            (tmp_path / "indexer.mcp.url").write_text(f"http://127.0.0.1:{dead_port()}/mcp\n")
            w.submit(entries)  # a URL file pointing at a dead port
            assert w.flush(5)
            elapsed = time.perf_counter() - started
    finally:
        w.close()
    assert elapsed < 3.0
    assert [n.ok for n in sink.notices] == [False] * 6
    dropped = [r for r in caplog.records if "dropped: indexer offline" in r.getMessage()]
    assert len(dropped) == 6 and all(r.levelno == logging.ERROR for r in dropped)
    for entry in entries:
        assert sum(entry.id in r.getMessage() for r in dropped) == 2


async def test_actions_offline_raise_to_the_caller(tmp_path: Path) -> None:
    w = MemoryWriter(ClientSettings(workspace=tmp_path, connect_timeout=1.0))
    try:
        with pytest.raises(IndexerOfflineError):
            await w.execute_action_async(DeleteAction("en", "items/a.md"))
        (tmp_path / "indexer.mcp.url").write_text(f"http://127.0.0.1:{dead_port()}/mcp\n")
        started = time.monotonic()
        with pytest.raises(IndexerOfflineError):
            await w.execute_action_async(EditAction("en", "items/a.md", body="x"))
        assert time.monotonic() - started < 2.0
    finally:
        w.close()


def test_killed_mid_batch_then_found_again_on_a_new_port(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    running = start_indexer(tmp_path / "ws")
    sink = CollectingNoticeSink()
    w = MemoryWriter(ClientSettings(workspace=running.workspace, tz=UTC, connect_timeout=1.0), sink)
    events_dir = running.workspace / "memory/languages/en/vault/events"
    # one day each, so that every event is its own append (no coalescing)
    batch = [event("en", f"k{i}", T0 + timedelta(days=i)) for i in range(400)]

    def logged() -> int:
        return sum(p.read_text().count("\n## Event\n") for p in events_dir.rglob("*.md"))

    try:
        with caplog.at_level(logging.ERROR, logger="agent_client.writer"):
            w.submit(batch)
            wait_for(lambda: events_dir.exists() and logged() >= 5, 30)
            running.stop(signal.SIGKILL)
            killed = time.monotonic()
            assert w.flush(30)
            assert time.monotonic() - killed < 5.0
        written = logged()
        failed = [n for n in sink.notices if not n.ok]
        assert 5 <= written < 400
        # the entry in flight at the kill may be on disk although its reply was lost
        assert 400 <= written + len(failed) <= 401
        said = [r.getMessage() for r in caplog.records if "indexer offline" in r.getMessage()]
        assert len(said) == len(failed)
        assert all(n.entry_id in msg for n, msg in zip(failed, said, strict=True))
        # the one the indexer went away under is kept, to be looked for in its day file
        kept = [n for n in failed if "is kept in" in (n.error or "")]
        assert len(kept) <= 1 and sum("dropped:" in msg for msg in said) == len(failed) - len(kept)
        records = list((running.workspace / ".agent-client/inflight").glob("*.json"))
        assert len(records) == len(kept)

        old_url = running.url
        running = start_indexer(running.workspace)
        assert running.url != old_url
        w.submit([event("en", "after restart")])
        assert w.flush(30)
        assert sink.notices[-1].ok
        assert "after restart" in (events_dir / "2026/11/29.md").read_text()
        for notice in kept:  # logged once, whether or not its append had landed
            assert [n.ok for n in sink.notices if n.entry_id == notice.entry_id][-1]
            assert sum(p.read_text().count(notice.entry_id) for p in events_dir.rglob("*.md")) == 1
        assert not list((running.workspace / ".agent-client/inflight").glob("*.json"))
    finally:
        w.close()
        running.stop()


def test_an_indexer_restarted_mid_batch_gets_the_rest_of_it(tmp_path: Path) -> None:
    """The entry right after a restart failed on the old connection and was dropped as
    "offline", although the URL file already named the new indexer."""
    servers = [start_indexer(tmp_path / "ws")]

    class Restarting(CollectingNoticeSink):
        def notify(self, notice: SystemNotice) -> None:
            super().notify(notice)
            if len(self.notices) == 1:  # after the first entry, elsewhere
                servers[-1].stop(signal.SIGTERM)
                servers.append(start_indexer(tmp_path / "ws"))

    sink = Restarting()
    w = MemoryWriter(ClientSettings(workspace=tmp_path / "ws", tz=UTC), sink)
    try:
        w.submit([event("en", f"ev{i}") for i in range(3)] + [knowledge("en", "Kb", "kb text")])
        assert w.flush(60)
        assert [n.ok for n in sink.notices] == [True] * 4, [n.error for n in sink.notices]
        day = (servers[-1].workspace / "memory/languages/en/vault/events/2026/11/29.md").read_text()
        assert [day.count(f"- title: ev{i}\n") for i in range(3)] == [1, 1, 1]
    finally:
        w.close()
        servers[-1].stop()


async def test_an_event_tried_again_is_not_logged_twice(server: RunningIndexer, lang: str) -> None:
    """A retry after a dropped connection first looks for the entry's section."""
    settings = ClientSettings(workspace=server.workspace, tz=UTC)
    logged, other = event(lang, "once", id="ev-10"), event(lang, "never", id="ev-1")
    # an id quoted in an event's text is not that event's section
    quoting = MemoryEntry(lang, "event", "q", "see\n- entry: ev-3\n", timestamp=T0)
    async with mcp_vault_connection(lang, settings) as vault:
        assert await appended_already(vault, logged, UTC) is None
        done = await append_event(vault, logged, UTC)
        await append_event(vault, quoting, UTC)
        found = await appended_already(vault, logged, UTC)
        assert found is not None and found["path"] == done["path"] == "events/2026/11/29.md"
        assert await appended_already(vault, other, UTC) is None  # a prefix of ev-10
        assert await appended_already(vault, event(lang, "x", id="ev-3"), UTC) is None


async def test_a_full_day_file_goes_on_in_continuations(tmp_path: Path) -> None:
    """Once allowed events filled a day file to the vault's size limit, every later event
    of the day was refused ``too_large`` and dropped, however small. The day goes on in
    ``DD-2.md``, ``DD-3.md``...; a retry finds an event there; a section too large alone
    is refused and makes no file."""
    server = start_indexer(tmp_path / "ws", env={"INDEXER_MAX_FILE_BYTES": "4096"})
    lang = "en"
    try:
        settings = ClientSettings(workspace=server.workspace, tz=UTC)
        events = tmp_path / "ws/memory/languages/en/vault/events/2026/11"
        async with mcp_vault_connection(lang, settings) as vault:
            done = []
            for n in range(12):
                entry = MemoryEntry(lang, "event", f"e{n}", "x" * 700, timestamp=T0, id=f"ev{n}")
                done.append((await append_event(vault, entry, UTC))["path"])
            assert done[0] == "events/2026/11/29.md" and done[-1] == "events/2026/11/29-3.md"
            names = sorted(p.name for p in events.iterdir() if p.name != OVERVIEW_FILE)
            assert names == ["29-2.md", "29-3.md", "29.md"]
            assert all(p.stat().st_size <= 4096 for p in events.iterdir())
            text = (events / "29-2.md").read_text()
            assert text.startswith("---\n") and "# Events 2026-11-29 (2)\n" in text
            later = MemoryEntry(lang, "event", "e9", "x", timestamp=T0, id="ev9")
            found = await appended_already(vault, later, UTC)
            assert found is not None and found["path"] == done[9]
            huge = MemoryEntry(lang, "event", "huge", "y" * 5000, timestamp=T0, id="big")
            with pytest.raises(TooLargeError):
                await append_event(vault, huge, UTC)
            names = sorted(p.name for p in events.iterdir() if p.name != OVERVIEW_FILE)
            assert names == ["29-2.md", "29-3.md", "29.md"]
            # Past what one request may carry: said so, not "99 continuations are full"
            # after 99 refused calls.
            giant = MemoryEntry(lang, "event", "giant", "ข" * 30000, timestamp=T0, id="giant")
            with pytest.raises(TooLargeError, match="this event alone"):
                await append_event(vault, giant, UTC)
            names = sorted(p.name for p in events.iterdir() if p.name != OVERVIEW_FILE)
            assert names == ["29-2.md", "29-3.md", "29.md"]
    finally:
        server.stop()


async def test_a_day_file_that_is_not_utf8_is_never_appended_to(
    server: RunningIndexer, lang: str
) -> None:
    """Another program's Latin-1 day file got the event appended as UTF-8: the file then
    mixed two encodings, readable as neither. The server refuses the append (nothing
    changed); the writer's event goes on in ``DD-2.md``."""
    day = vault_dir(server, lang) / "events/2026/11/29.md"
    day.parent.mkdir(parents=True, exist_ok=True)
    latin = b"# Events\n\ncaf\xe9 cr\xe8me\n"
    day.write_bytes(latin)
    settings = ClientSettings(workspace=server.workspace, tz=UTC)
    async with mcp_vault_connection(lang, settings) as vault:
        with pytest.raises(InvalidArgumentError, match="is not UTF-8 text"):
            await vault.append("events/2026/11/29.md", "\nmore\n", create=False)
        entry = MemoryEntry(lang, "event", "Café", "au lait", timestamp=T0, id="latin1")
        done = await append_event(vault, entry, UTC)
    assert done["path"] == "events/2026/11/29-2.md"
    assert day.read_bytes() == latin
    assert "au lait" in (day.parent / "29-2.md").read_text(encoding="utf-8")


async def test_text_that_is_not_utf8_is_refused_before_it_is_sent(
    server: RunningIndexer, lang: str
) -> None:
    """A lone surrogate sent broke the transport: the call then looked like an offline
    indexer, and the session was lost for the calls after it."""
    settings = ClientSettings(workspace=server.workspace, tz=UTC)
    async with mcp_vault_connection(lang, settings) as vault:
        with pytest.raises(InvalidArgumentError, match="'content' is not valid UTF-8"):
            await vault.write("bad.md", "# x \ud800\n")
        assert (await vault.write("good.md", "# fine\n"))["path"] == "good.md"
    assert not (vault_dir(server, lang) / "bad.md").exists()


def test_an_event_with_images_says_they_were_not_kept(
    server: RunningIndexer,
    writer: MemoryWriter,
    sink: CollectingNoticeSink,
    lang: str,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Events hold no images: they were dropped without a word."""
    picture = tmp_path / "p.png"
    picture.write_bytes(png_bytes())
    with caplog.at_level(logging.WARNING, logger="agent_client.writer"):
        writer.submit([event(lang, "with a picture", images=[str(picture)])])
        assert writer.flush(30)
    (notice,) = sink.notices
    assert notice.ok and "1 image(s) were not kept" in notice.update_summary
    assert any("keeps no images" in r.getMessage() for r in caplog.records)


def test_the_writers_loop_ends_a_task_left_running_in_that_task(
    writer: MemoryWriter,
    lang: str,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A task still running when the writer stopped (as an MCP client's own session task
    is, left by a connection cut off while it opened) kept its async generators open: the
    loop's shutdown closed them from another task, and asyncio's error handler printed
    anyio's "Attempted to exit cancel scope in a different task" to the terminal. As
    ``asyncio.run`` does, it is cancelled first, and unwinds in its own task."""
    import anyio

    unwound: list[str] = []

    @contextlib.asynccontextmanager
    async def session() -> AsyncIterator[None]:
        async with anyio.create_task_group() as group:
            group.start_soon(anyio.sleep_forever)
            try:
                yield
            finally:
                unwound.append("in its own task")
                group.cancel_scope.cancel()

    async def runs_on() -> None:  # (as fastmcp's ``Client._session_runner``)
        async with session():
            await asyncio.sleep(60)

    async def leaves_a_task(vault: object, action: object) -> ActionResult:
        asyncio.get_running_loop().create_task(runs_on())
        await asyncio.sleep(0.05)  # (it is in its generator now)
        return ActionResult("x.md", deleted=True)

    monkeypatch.setattr(writer_module, "run_action", leaves_a_task)
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        assert writer.execute_action(DeleteAction(lang, "x.md")).result(30).deleted
        writer.close(10)
    assert not [r for r in caplog.records if r.name == "asyncio"], caplog.text
    assert unwound == ["in its own task"]


def test_a_sink_may_stop_the_writer_and_duplicate_ids_are_each_told(tmp_path: Path) -> None:
    """A notice sink calling ``cancel`` (stop on the first failure) ran on the writer
    thread: 'cannot join current thread', or a deadlock on the writer's lock. Entries of
    one batch sharing an id were told once between them."""
    (tmp_path / "memory/languages/en/vault").mkdir(parents=True)  # no indexer: all fail

    said: list[object] = []

    class StopOnFailure(CollectingNoticeSink):
        writer: MemoryWriter

        def notify(self, notice: SystemNotice) -> None:
            super().notify(notice)
            if not notice.ok:
                try:
                    said.append(self.writer.cancel(1.0))  # False: it cannot wait for itself
                except Exception as err:  # (the writer logs a sink's error and goes on)
                    said.append(err)

    sink = StopOnFailure()
    writer = MemoryWriter(ClientSettings(workspace=tmp_path, tz=UTC), sink)
    sink.writer = writer
    batch = [event("en", "a", id="same"), event("en", "b", id="same"), event("en", "c")]
    writer.submit([*batch, event("en", "d")])  # (one submit: the sink may stop it at once)
    deadline = time.monotonic() + 20
    while len(sink.notices) < 4 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert writer.cancel(5)
    assert len(sink.notices) == 4 and not any(n.ok for n in sink.notices)
    assert sorted(n.entry_id for n in sink.notices).count("same") == 2, sink.notices
    assert said and all(answer is False for answer in said), said


def test_flush_each_on_a_closed_writer_waits_as_flush_does(tmp_path: Path) -> None:
    """``flush`` on a closed writer joined its thread; ``flush_each`` raised
    ``WriterClosedError``. Both wait for what was queued before the close."""
    sink = CollectingNoticeSink()
    w = MemoryWriter(ClientSettings(workspace=tmp_path, tz=UTC, connect_timeout=1.0), sink)
    w.submit([event("en", "e1"), event("en", "e2")])  # no indexer: each dropped, at once
    w.close(0)
    assert w.flush_each(10.0)
    assert [n.ok for n in sink.notices] == [False, False]
    assert w.flush(0) and w.flush_each(0)
    never = MemoryWriter(ClientSettings(workspace=tmp_path, tz=UTC), sink)
    never.close()
    assert never.flush_each(1.0) and never.flush(1.0)
