"""A writer given the same entry another process has queued (recorded at its submit,
not yet begun) waited behind that process's whole queue, up to its entry's time, and
then said "another client is still writing". It says at once that the entry is queued
at that client, which writes it; once that client begins it, it is waited for."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

from agent_client.inflight import InFlight
from agent_client.leftovers import wait_for_same
from agent_client.notices import SystemNotice
from shared.models import MemoryEntry

HOLDER = """
import sys, time
from pathlib import Path
from agent_client.inflight import InFlight
from shared.models import MemoryEntry
entry = MemoryEntry("en", "knowledge", "Запись 📝", "факт")
claim = InFlight(Path(sys.argv[1])).hold(entry, queued=True)
print("queued", flush=True)
sys.stdin.readline()
claim.begin()
print("begun", flush=True)
time.sleep(60)
"""


def test_an_entry_queued_elsewhere_is_said_at_once_and_waited_for_once_begun(
    tmp_path: Path,
) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "queued\n"
        entry = MemoryEntry("en", "knowledge", "Запись 📝", "факт")
        started = time.monotonic()
        said = asyncio.run(wait_for_same(InFlight(tmp_path), entry, 5.0))
        assert isinstance(said, SystemNotice) and not said.ok
        assert "queued" in (said.error or "") and time.monotonic() - started < 2.0, said
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert holder.stdout.readline() == "begun\n"
        started = time.monotonic()
        said = asyncio.run(wait_for_same(InFlight(tmp_path), entry, 1.0))
        assert isinstance(said, SystemNotice) and "still writing" in (said.error or "")
        assert time.monotonic() - started >= 1.0
    finally:
        holder.kill()
        holder.communicate(timeout=10)
