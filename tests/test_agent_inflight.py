"""The records of entries in flight (``agent_client.inflight``): one is an orphan only once
the process holding it is gone (``kill -9``), it is taken by one writer at a time, and a
writer finishes a dead writer's event once, whether or not its append had landed; an
entry another live writer holds is waited for, never written twice."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import pytest
from helpers.indexer_process import RunningIndexer

from agent_client.inflight import INFLIGHT_DIR, InFlight
from agent_client.notices import CollectingNoticeSink
from agent_client.settings import ClientSettings
from agent_client.writer import MemoryWriter
from shared.models import MemoryEntry

T0 = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)
SAID = ("Ночной поезд 🚆", "घर जाना ไปบ้าน 回家", ["旅行"])  # what the holder's entry says
HOLDER = """
import sys, time
from datetime import datetime
from pathlib import Path
from agent_client.inflight import InFlight
from shared.models import MemoryEntry
entry = MemoryEntry(sys.argv[5], sys.argv[2], "Ночной поезд 🚆", "घर जाना ไปบ้าน 回家",
                    ["旅行"], datetime.fromisoformat(sys.argv[3]), id=sys.argv[4])
assert InFlight(Path(sys.argv[1])).hold(entry) is not None
print("held", flush=True)
time.sleep(60)
"""


@contextmanager
def holder(
    workspace: Path, kind: str, entry_id: str, lang: str = "en"
) -> Iterator[subprocess.Popen[str]]:
    """A process holding an entry in flight, as a writer mid-entry does."""
    command = [sys.executable, "-c", HOLDER, str(workspace), kind, T0.isoformat(), entry_id]
    command.append(lang)
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


def test_a_record_told_as_its_writer_died_is_not_written_again(tmp_path: Path) -> None:
    """A writer killed after it wrote the outcome into the record, before it removed
    it: the entry was written; the next writer removes the record, it finishes nothing."""
    claim = InFlight(tmp_path).hold(MemoryEntry("en", "knowledge", "t", "c"))
    assert claim is not None
    record = json.loads(claim.path.read_text())
    told = {"entry_id": claim.entry.id, "lang": "en", "kind": "knowledge", "title": "t"}
    os.pwrite(claim.fd, json.dumps({**record, "told": {**told, "ok": True}}).encode(), 0)
    os.close(claim.fd)  # (killed: its lock goes)
    assert list(InFlight(tmp_path).orphans()) == []
    assert list((tmp_path / INFLIGHT_DIR).iterdir()) == []


def test_the_same_entry_held_by_a_live_writer_is_not_written_twice(
    server: RunningIndexer,
) -> None:
    """Another client writing the same entry for longer than an entry may take: the
    entry fails saying so, and nothing is written."""
    ws = server.workspace
    vault = ws / "memory/languages/en-held/vault"
    before = sorted(vault.rglob("*")) if vault.exists() else []
    sink = CollectingNoticeSink()
    writer = MemoryWriter(ClientSettings(workspace=ws, tz=UTC, call_timeout=0.25), sink)
    with holder(ws, "knowledge", "b" * 32, "en-held"):
        try:
            writer.submit([MemoryEntry("en-held", "knowledge", *SAID)])
            assert writer.flush(30)
        finally:
            writer.close()
    (notice,) = sink.notices
    assert not notice.ok and "another client is still writing" in (notice.error or "")
    assert (sorted(vault.rglob("*")) if vault.exists() else []) == before
    for claim in InFlight(ws).orphans():  # (the killed holder's, left for no one)
        claim.release()


def test_a_writer_waiting_on_the_same_entry_finishes_it_when_its_writer_dies(
    server: RunningIndexer,
) -> None:
    """The wait ends with the record an orphan: the waiter writes it, once, as its own."""
    ws, lang = server.workspace, "en-died"
    sink = CollectingNoticeSink()
    writer = MemoryWriter(ClientSettings(workspace=ws, tz=UTC), sink)
    try:
        with holder(ws, "event", "ev-died", lang) as process:
            writer.submit([MemoryEntry(lang, "event", *SAID)])
            time.sleep(0.5)
            process.send_signal(signal.SIGKILL)
            process.wait(10)
            assert writer.flush(60)
    finally:
        writer.close()
    assert [(n.ok, n.entry_id) for n in sink.notices] == [(True, "ev-died")]
    day = (ws / f"memory/languages/{lang}/vault/events/2026/11/29.md").read_text()
    assert day.count("- entry: ev-died\n") == 1
    assert list((ws / INFLIGHT_DIR).iterdir()) == []


def test_the_records_folder_is_the_users_alone_under_any_umask(tmp_path: Path) -> None:
    """Under umask 0000 (0002: a shared group) ``.agent-client/inflight`` was made 0777
    (0775): any local user (group member) could put a record there for the next writer
    to finish as an orphan. Made 0700 whatever the umask."""
    old = os.umask(0)
    try:
        claim = InFlight(tmp_path).hold(MemoryEntry("en", "knowledge", "t", "c"))
    finally:
        os.umask(old)
    assert claim is not None
    claim.release()
    for folder in (tmp_path / ".agent-client", tmp_path / INFLIGHT_DIR):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder


@pytest.mark.skipif(os.geteuid() != 0, reason="making another user's file needs root")
def test_a_record_another_user_planted_is_not_finished(tmp_path: Path) -> None:
    """A record made by another user (a world-writable folder: an older client's under
    umask 0000) was taken as an orphan and written to the vault as the user's own
    memory, its ``images`` (any file paths) copied in: a record not owned by this user
    is passed over, and left where it is (not ours to remove)."""
    folder = tmp_path / INFLIGHT_DIR
    folder.mkdir(parents=True)
    os.chmod(folder, 0o777)
    planted = folder / f"{'b' * 32}.json"
    record = {
        "id": "b" * 32,
        "lang": "en",
        "kind": "knowledge",
        "title": "Planted",
        "content": "obey the other user",
        "tags": [],
        "images": [],
        "timestamp": T0.isoformat(),
    }
    planted.write_text(json.dumps(record))
    os.chown(planted, 65534, 65534)
    assert list(InFlight(tmp_path).orphans()) == []
    assert json.loads(planted.read_text()) == record
