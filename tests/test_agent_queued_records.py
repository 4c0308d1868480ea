"""Entries are recorded on disk at submit (``inflight``), held by the submitting process:
another writer's orphan sweep never takes a live process's queued entry, an entry the
writer is stopped before writing has its record removed with its notice, and a submit
refused (a closed writer) leaves none."""

from __future__ import annotations

import threading
from datetime import UTC
from pathlib import Path

import pytest

from agent_client.inflight import INFLIGHT_DIR, InFlight
from agent_client.notices import SystemNotice
from agent_client.settings import ClientSettings
from agent_client.writer import QUEUED_RECORDS, MemoryWriter, WriterClosedError
from shared.models import MemoryEntry


def entries(count: int) -> list[MemoryEntry]:
    return [MemoryEntry("en", "knowledge", f"Заметка {n} 📝", f"факт {n}") for n in range(count)]


def test_queued_entries_are_on_disk_held_and_removed_when_dropped(tmp_path: Path) -> None:
    looked, notices = threading.Event(), []

    class Stopping:  # (the first notice holds the writer until the records were looked at)
        def notify(self, notice: SystemNotice) -> None:
            notices.append(notice)
            if len(notices) == 1:
                looked.wait(30)
                writer.cancel()

    writer = MemoryWriter(ClientSettings(workspace=tmp_path, tz=UTC, call_timeout=0.25), Stopping())
    first, *queued = entries(5)
    writer.submit([first])  # (no indexer: it is dropped as offline)
    writer.submit(queued)
    try:
        folder = tmp_path / INFLIGHT_DIR
        for _ in range(300):
            if notices:
                break
            threading.Event().wait(0.1)
        records = sorted(folder.glob("*.json"))
        assert len(records) == 4  # the queued ones, in the order they were submitted
        assert [InFlight(tmp_path)._take(path) for path in records] == [None] * 4
        assert list(InFlight(tmp_path).orphans()) == []  # held: not another writer's
        assert [r.read_text().count(f"Заметка {n} 📝") for n, r in enumerate(records, 1)] == [1] * 4
    finally:
        looked.set()
        writer.close(30)
    assert [n.ok for n in notices] == [False] * 5, [(n.title, n.error) for n in notices]
    assert all("stopped before it was written" in (n.error or "") for n in notices[1:])
    assert list(folder.iterdir()) == []


def test_a_closed_writers_submit_leaves_no_record(tmp_path: Path) -> None:
    writer = MemoryWriter(ClientSettings(workspace=tmp_path, tz=UTC))
    writer.close()
    with pytest.raises(WriterClosedError):
        writer.submit(entries(2))
    assert not (tmp_path / INFLIGHT_DIR).exists() or not list((tmp_path / INFLIGHT_DIR).iterdir())


def test_a_burst_of_entries_keeps_a_bounded_number_of_records_open(tmp_path: Path) -> None:
    """Each record is an open file: 2,000 entries queued at once took 2,000 descriptors
    (past a 1,024 limit, the writer's own connection fails). The first
    ``QUEUED_RECORDS`` are kept from the submit; the rest are recorded as they start."""
    entered, looked = threading.Event(), threading.Event()

    class Holding:
        def notify(self, notice: SystemNotice) -> None:
            entered.set()
            looked.wait(30)
            writer.cancel()

    writer = MemoryWriter(ClientSettings(workspace=tmp_path, tz=UTC, call_timeout=0.25), Holding())
    try:
        for entry in entries(2000):
            writer.submit([entry])
        assert entered.wait(30)  # (the first entry told: its record gone)
        records = list((tmp_path / INFLIGHT_DIR).glob("*.json"))
        assert QUEUED_RECORDS - 1 <= len(records) <= QUEUED_RECORDS  # (it may have counted)
    finally:
        looked.set()
        writer.close(30)
    assert list((tmp_path / INFLIGHT_DIR).iterdir()) == []
