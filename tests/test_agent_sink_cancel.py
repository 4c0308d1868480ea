"""A notice sink that stops the writer (``cancel``) on the first failure while the
indexer is offline: the rest of that batch ran on (each failed fast, never yielding to
the loop, so the task's cancel came after it had ended: they were written, not
stopped), and a ``flush`` waiting behind the batch was released at the cancel, before
the batch's later entries were told."""

from __future__ import annotations

import socket
import threading
import time
from datetime import UTC
from pathlib import Path

import pytest

from agent_client.inflight import INFLIGHT_DIR
from agent_client.notices import SystemNotice
from agent_client.settings import ClientSettings
from agent_client.writer import MemoryWriter
from shared.models import MemoryEntry


def closed_port() -> int:
    """A local port nothing listens on (connection refused: offline, at once)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize("url_file", [False, True], ids=["no-url-file", "refused"])
def test_a_sink_stopping_the_writer_mid_batch_stops_the_batch(
    tmp_path: Path, url_file: bool
) -> None:
    if url_file:
        (tmp_path / "indexer.mcp.url").write_text(f"http://127.0.0.1:{closed_port()}/mcp\n")
    told: list[tuple[SystemNotice, bool]] = []
    flushed = threading.Event()

    class StopOnFirst:
        def notify(self, notice: SystemNotice) -> None:
            told.append((notice, flushed.is_set()))
            if len(told) == 1:
                writer.cancel()

    writer = MemoryWriter(
        ClientSettings(workspace=tmp_path, tz=UTC, call_timeout=1.0), StopOnFirst()
    )
    titles = ["Первая", "第二", "שלישית", "Fourth 📝"]
    writer.submit([MemoryEntry("en", "knowledge", t, f"fact {t}") for t in titles])
    try:
        assert writer.flush(30)
        flushed.set()
        time.sleep(0.3)  # (a notice told after the flush returned would be seen)
    finally:
        writer.close(10)
    assert [n.title for n, _ in told] == titles
    assert [after for _, after in told] == [False] * 4  # each told before flush returned
    assert "indexer_offline" in (told[0][0].error or "")
    for notice, _ in told[1:]:
        assert not notice.ok and "stopped before it was written" in (notice.error or ""), notice
    assert list((tmp_path / INFLIGHT_DIR).glob("*")) == []
