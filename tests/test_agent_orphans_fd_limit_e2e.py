"""Many orphan records (dead writers' entries in flight) and the usual limit of open
files: the sweep looks at the records under ``inflight.lock`` but keeps open only those
it must (another writer's record of the batch's entry, an orphan of the batch's entry),
so the writer still has files to finish each orphan with, then its own entry."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime

from helpers.indexer_process import RunningIndexer

from agent_client.inflight import INFLIGHT_DIR, InFlight
from shared.models import MemoryEntry

T0 = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
ORPHANS = 160
FILES = 128  # the soft limit of open files the writer runs under (Linux's is 1024)
WRITER = """
import resource, sys
from datetime import UTC, datetime
from pathlib import Path
from agent_client.notices import CollectingNoticeSink
from agent_client.settings import ClientSettings
from agent_client.writer import MemoryWriter
from shared.models import MemoryEntry
hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
resource.setrlimit(resource.RLIMIT_NOFILE, (int(sys.argv[2]), hard))
sink = CollectingNoticeSink()
writer = MemoryWriter(ClientSettings(workspace=Path(sys.argv[1]), tz=UTC), sink)
entry = MemoryEntry(sys.argv[3], "event", "ליל מסע", "the writer's own",
                    timestamp=datetime.fromisoformat(sys.argv[4]), id="ev-own")
try:
    writer.submit([entry])
    assert writer.flush(240)
finally:
    writer.close()
for notice in sink.notices:
    print(notice.ok, notice.entry_id, notice.error, flush=True)
"""


def test_many_orphans_are_finished_under_a_low_open_file_limit(server: RunningIndexer) -> None:
    ws, lang = server.workspace, "fa"
    records = InFlight(ws)
    for number in range(ORPHANS):
        entry = MemoryEntry(lang, "event", f"سفر {number}", "قطار شب", timestamp=T0)
        claim = records.hold(entry, queued=True)
        assert claim is not None
        os.close(claim.fd)  # (its writer killed: the lock goes with it)
    command = [sys.executable, "-c", WRITER, str(ws), str(FILES), lang, T0.isoformat()]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    told = done.stdout.splitlines()
    failed = [line for line in told if not line.startswith("True ")]
    assert failed == [] and len(told) == ORPHANS + 1, (failed[:3], len(told))
    day = (ws / f"memory/languages/{lang}/vault/events/2026/11/30.md").read_text()
    assert day.count("- entry: ") == ORPHANS + 1
    assert list((ws / INFLIGHT_DIR).iterdir()) == []
