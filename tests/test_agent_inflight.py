"""The records of entries in flight (``agent_client.inflight``): one is an orphan only once
the process holding it is gone (``kill -9``), it is taken by one writer at a time, and a
writer finishes a dead writer's event once, whether or not its append had landed."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from helpers.indexer_process import RunningIndexer

from agent_client.inflight import INFLIGHT_DIR, InFlight
from agent_client.notices import CollectingNoticeSink
from agent_client.settings import ClientSettings
from agent_client.writer import MemoryWriter
from shared.models import MemoryEntry

T0 = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)
HOLDER = """
import sys, time
from datetime import datetime
from pathlib import Path
from agent_client.inflight import InFlight
from shared.models import MemoryEntry
entry = MemoryEntry("en", sys.argv[2], "Ночной поезд 🚆", "घर जाना ไปบ้าน 回家", ["旅行"],
                    datetime.fromisoformat(sys.argv[3]), id=sys.argv[4])
assert InFlight(Path(sys.argv[1])).hold(entry) is not None
print("held", flush=True)
time.sleep(60)
"""


@contextmanager
def holder(workspace: Path, kind: str, entry_id: str) -> Iterator[subprocess.Popen[str]]:
    """A process holding an entry in flight, as a writer mid-entry does."""
    command = [sys.executable, "-c", HOLDER, str(workspace), kind, T0.isoformat(), entry_id]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None and process.stdout.readline() == "held\n"
        yield process
    finally:
        process.kill()
        process.communicate(timeout=10)


def left_by_killed_writer(workspace: Path, kind: str, entry_id: str) -> None:
    with holder(workspace, kind, entry_id) as process:
        process.send_signal(signal.SIGKILL)


def test_an_orphan_is_a_record_whose_writer_is_gone(tmp_path: Path) -> None:
    records = InFlight(tmp_path)
    with holder(tmp_path, "knowledge", "a" * 32) as process:
        assert list(records.orphans()) == []  # its writer runs
        process.send_signal(signal.SIGKILL)
        process.wait(10)
        (claim,) = records.orphans()
    entry = claim.entry
    assert (entry.id, entry.title, entry.tags, entry.timestamp) == (
        "a" * 32,
        "Ночной поезд 🚆",
        ["旅行"],
        T0,
    )
    assert entry.content == "घर जाना ไปบ้าน 回家"
    assert list(InFlight(tmp_path).orphans()) == []  # taken: no other writer gets it
    claim.release(done=False)  # (an orphan cut off: it stays for the next)
    (again,) = records.orphans()
    again.release()
    assert list(records.orphans()) == [] and list((tmp_path / INFLIGHT_DIR).iterdir()) == []


def test_no_workspace_no_folder_made(tmp_path: Path) -> None:
    """A mistyped workspace is said as such (offline), never made by the record."""
    entry = MemoryEntry("en", "knowledge", "t", "c")
    assert InFlight(tmp_path / "typo").hold(entry) is None
    assert list(tmp_path.iterdir()) == []


def test_a_dead_writers_event_is_logged_once(server: RunningIndexer) -> None:
    ws, lang = server.workspace, "en"
    sink = CollectingNoticeSink()
    writer = MemoryWriter(ClientSettings(workspace=ws, tz=UTC), sink)
    landed = MemoryEntry(
        lang, "event", "Ночной поезд 🚆", "घर जाना ไปบ้าน 回家", timestamp=T0, id="ev-landed"
    )
    try:
        writer.submit([landed])  # its append landed, then the writer was killed
        assert writer.flush(30)
        left_by_killed_writer(ws, "event", "ev-landed")
        left_by_killed_writer(ws, "event", "ev-lost")  # killed before its append
        writer.submit([MemoryEntry(lang, "event", "Later", "after the kill", timestamp=T0)])
        assert writer.flush(60)
    finally:
        writer.close()
    assert [(n.ok, n.title) for n in sink.notices] == [(True, "Ночной поезд 🚆")] * 3 + [
        (True, "Later")
    ]
    day = (ws / f"memory/languages/{lang}/vault/events/2026/11/29.md").read_text()
    assert day.count("- entry: ev-landed\n") == 1 and day.count("- entry: ev-lost\n") == 1
    assert list((ws / INFLIGHT_DIR).iterdir()) == []
