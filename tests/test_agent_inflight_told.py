"""A writer waiting on the same entry another client writes (``leftovers.wait_for_same``)
lists the records, then opens each: when that client wrote its outcome and removed its
record in between, the open failed, the record was passed over and the entry merged a
second time. The listing and the opens hold ``.agent-client/inflight.lock`` shared, a
record's removal holds it exclusively: the outcome is told.

The other client is a real process; the listing is made to wait for it (at most 2 s) to
release its record right after ``os.listdir`` returned, the window the race needs."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agent_client.inflight import INFLIGHT_DIR, InFlight
from agent_client.leftovers import wait_for_same
from agent_client.notices import SystemNotice
from shared.models import MemoryEntry

T0 = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)
SAID = ("Ночной поезд 🚆", "घर जाना ไปบ้าน 回家", ["旅行"])
HOLDER = """
import sys
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from agent_client.inflight import InFlight
from agent_client.notices import SystemNotice
from shared.models import MemoryEntry
entry = MemoryEntry("en", "knowledge", "Ночной поезд 🚆", "घर जाना ไปบ้าน 回家", ["旅行"],
                    datetime.fromisoformat(sys.argv[2]), id="c" * 32)
claim = InFlight(Path(sys.argv[1])).hold(entry)
print("held", flush=True)
sys.stdin.readline()
notice = SystemNotice(entry.id, "en", "knowledge", entry.title, ok=True, method="llm",
                      updated_files=["items/train.md"], update_summary="Noted the train.")
claim.release(told=asdict(notice))
print("released", flush=True)
"""


def test_an_outcome_told_between_the_listing_and_the_open_is_told(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    command = [sys.executable, "-c", HOLDER, str(tmp_path), T0.isoformat()]
    holder = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdin is not None and holder.stdout is not None
    lines = holder.stdout
    assert lines.readline() == "held\n"
    released = threading.Event()
    threading.Thread(target=lambda: lines.readline() and released.set(), daemon=True).start()
    listdir, folder = os.listdir, tmp_path / INFLIGHT_DIR

    def listing(path: object) -> list[str]:
        names = listdir(path)  # type: ignore[arg-type]
        if Path(str(path)) == folder and holder.stdin is not None and not holder.stdin.closed:
            holder.stdin.write("\n")  # its outcome told, its record removed, now
            holder.stdin.close()
            released.wait(2)  # (a lock held here makes it wait: then 2 s)
        return names

    monkeypatch.setattr(os, "listdir", listing)
    try:
        entry = MemoryEntry("en", "knowledge", *SAID)
        told = asyncio.run(wait_for_same(InFlight(tmp_path), entry, 20))
    finally:
        monkeypatch.undo()
        holder.kill()
        holder.wait(10)
        for stream in (holder.stdin, holder.stdout):
            stream.close()
    assert isinstance(told, SystemNotice), told  # (None: merged as new, a second time)
    assert (told.ok, told.entry_id, told.updated_files) == (True, "c" * 32, ["items/train.md"])
    assert entry.id == "c" * 32
    assert os.listdir(folder) == []
