"""Entries dropped against a dead indexer cost no record each: an entry past the queued
records' limit had its record made (create, lock, write, rename) as it started, the
others' listed to wait on the same entry, then its record removed, though the indexer
that just failed (or none at all) was all it could reach: 400 entries took 1.8-8.7 s
at load. Now an entry the session keeper refuses at once (``SessionKeeper.refusal``)
is told dropped straight away; its record made at submit goes as it is told."""

from __future__ import annotations

import logging
import os
import socket
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agent_client.inflight import INFLIGHT_DIR
from agent_client.notices import CollectingNoticeSink
from agent_client.settings import ClientSettings
from agent_client.writer import QUEUED_RECORDS, MemoryWriter
from shared.models import MemoryEntry

T0 = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)


def dead_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("url", ["dead port", "no URL file"])
def test_entries_dropped_offline_make_no_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, url: str
) -> None:
    if url == "dead port":
        (tmp_path / "indexer.mcp.url").write_text(f"http://127.0.0.1:{dead_port()}/mcp\n")
    count = QUEUED_RECORDS + 72
    batch = [
        MemoryEntry("en", "event", f"Ночной поезд {i}", "घर जाना", timestamp=T0 + timedelta(i))
        for i in range(count)
    ]
    sink = CollectingNoticeSink()
    writer = MemoryWriter(ClientSettings(workspace=tmp_path, tz=UTC, connect_timeout=1.0), sink)
    renamed, listed = [0], [0]
    rename, listdir = os.rename, os.listdir

    def counted_rename(source: object, target: object) -> None:
        renamed[0] += 1
        rename(source, target)  # type: ignore[arg-type]

    def counted_listdir(path: object = ".") -> list[str]:
        listed[0] += Path(str(path)).name == "inflight"
        return listdir(path)  # type: ignore[arg-type]

    try:
        with caplog.at_level(logging.ERROR, logger="agent_client.writer"):
            writer.submit(batch)  # (its records: made on this thread, before the counting)
            monkeypatch.setattr(os, "rename", counted_rename)
            monkeypatch.setattr(os, "listdir", counted_listdir)
            assert writer.flush(30)
    finally:
        writer.close()
        monkeypatch.undo()
    assert len(sink.notices) == count and not any(n.ok for n in sink.notices)
    dropped = [
        r.getMessage() for r in caplog.records if "dropped: indexer offline" in r.getMessage()
    ]
    assert len(dropped) == count
    assert all(n.entry_id in said for n, said in zip(sink.notices, dropped, strict=True))
    assert renamed[0] == 0, f"{renamed[0]} records made for entries dropped"
    assert listed[0] <= 2, f"the records listed {listed[0]} times"  # (the batch's sweep)
    assert not list((tmp_path / INFLIGHT_DIR).glob("*.json"))
