"""``indexer serve`` under a ``TZ`` that names no zone says so in its log, once."""

from __future__ import annotations

from pathlib import Path

from helpers.indexer_process import start_indexer


def test_serve_says_a_tz_that_names_no_zone(tmp_path: Path) -> None:
    server = start_indexer(tmp_path / "ws", env={"TZ": "Not/AZone"})
    try:
        log = server.log()
    finally:
        server.stop()
    assert log.count("TZ='Not/AZone' names no time zone") == 1
    assert "+0000 " in log  # (its times: UTC's, and say so)
