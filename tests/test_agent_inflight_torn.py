"""A record rewritten with its entry's outcome (``Claim.release``, for a writer waiting on
its lock) is never read half written by a sweep: the outcome was written over the record
in place, while other writers read it under the folder's lock held shared only, so a
record of many pages read mid-write was half old and half new, "not an entry", and the
orphan sweep passed over a record of its own batch's entry (then found it gone: merged a
second time). It is now written under the folder's lock held exclusively, as the record
is removed. Real files, two threads (their reads and writes release the GIL)."""

from __future__ import annotations

import os
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

from agent_client.inflight import INFLIGHT_DIR, Held, InFlight, _record
from shared.models import MemoryEntry

T0 = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)


def test_a_record_told_as_a_sweep_reads_it_is_read_whole(tmp_path: Path) -> None:
    # ~600 KB of JSON: many pages, so that a write in place takes a while
    content = "घर जाना ไปบ้าน 回家 🚆 " * 12_000
    entry = MemoryEntry("en", "knowledge", "Ночной поезд", content[:250_000], timestamp=T0)
    told = {"entry_id": entry.id, "ok": True, "update_summary": "Noted. " * 2_000}
    writing, reading = InFlight(tmp_path), InFlight(tmp_path)  # (two writers' views)
    stop = threading.Event()
    rounds = [0]

    def write() -> None:
        while not stop.is_set():
            claim = writing.hold(entry, queued=True)
            assert claim is not None
            claim.begin()
            claim.release(told=told)
            rounds[0] += 1

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    torn, read, orphans = 0, 0, 0
    deadline = time.monotonic() + 3.0
    try:
        while time.monotonic() < deadline and torn == 0:
            for path, fd in reading._look_at_each():  # (as the orphan sweep reads them)
                try:
                    if path.name.endswith(".json"):
                        read += 1
                        torn += _record(fd) is None
                finally:
                    os.close(fd)
            seen: list[Held] = []
            orphans += len(list(reading.orphans([entry], seen)))  # (each held: none)
            for held in seen:
                held.close()
    finally:
        stop.set()
        thread.join(10)
    assert not thread.is_alive() and rounds[0] > 0 and read > 0
    assert torn == 0, f"{torn} of {read} records read half written ({rounds[0]} rounds)"
    assert orphans == 0
    assert not list((tmp_path / INFLIGHT_DIR).glob("*.json"))


def test_a_garbage_record_is_said_once_and_passed(tmp_path: Path, caplog: object) -> None:
    """A record that was never one (another program's file, a disk fault): the sweep says
    so once and removes it; one another process holds locked is no entry's to wait on (a
    record is read whole under the folder's lock now): every entry waited its whole
    time for it, then failed as "still being written" elsewhere."""
    import asyncio
    import fcntl
    import logging

    import pytest

    from agent_client.leftovers import wait_for_same

    assert isinstance(caplog, pytest.LogCaptureFixture)
    entry = MemoryEntry("en", "knowledge", "Ночной поезд", "घर जाना", timestamp=T0)
    inflight = InFlight(tmp_path)
    made = MemoryEntry("en", "event", "another", "x", timestamp=T0)
    assert inflight.hold(made) is not None  # (makes the folder; another entry's)
    folder = tmp_path / INFLIGHT_DIR
    (folder / "00000000000000000001garbage.json").write_bytes(b"\x00\xff{not json" * 100)
    held = folder / "00000000000000000002held.json"
    held.write_text('{"id": "x"')
    fd = os.open(held, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)  # (as another process holds it: its own open file)
    try:
        with caplog.at_level(logging.WARNING, logger="agent_client.inflight"):
            for _ in range(3):
                assert list(InFlight(tmp_path).orphans([entry], [])) == []
        said = [r.getMessage() for r in caplog.records]
        assert len(said) == 1 and "garbage.json is not an entry in flight" in said[0], said
        assert not (folder / "00000000000000000001garbage.json").exists()
        started = time.monotonic()
        other = MemoryEntry("en", "knowledge", "Ночной поезд", "घर जाना", timestamp=T0)
        assert asyncio.run(wait_for_same(InFlight(tmp_path), other, 5.0)) is None
        assert time.monotonic() - started < 1.0
        assert held.read_text() == '{"id": "x"'  # (not this writer's: left as it is)
    finally:
        os.close(fd)


def test_a_record_made_as_another_writer_sweeps_is_kept(tmp_path: Path) -> None:
    """A sweep locked every file of the folder to look at it, a record's temporary file
    too, between its writer's create and lock: that writer's lock failed and its entry
    was kept nowhere ("entries in flight are not kept", said once, then silent)."""
    making, sweeping = InFlight(tmp_path), InFlight(tmp_path)
    stop = threading.Event()
    made, lost = [0], [0]

    def make() -> None:
        while not stop.is_set():
            entry = MemoryEntry("en", "event", "Ночной поезд", "घर जाना", timestamp=T0)
            claim = making.hold(entry)
            made[0] += 1
            if claim is None:
                lost[0] += 1
                return
            claim.release()

    thread = threading.Thread(target=make, daemon=True)
    thread.start()
    deadline = time.monotonic() + 2.0
    try:
        while time.monotonic() < deadline and thread.is_alive():
            assert list(sweeping.orphans()) == []
    finally:
        stop.set()
        thread.join(10)
    assert lost[0] == 0, f"one of {made[0]} records not kept"
