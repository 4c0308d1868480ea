"""kill -9 in the middle of writes: after a restart, history and files agree.

Four threads write and append to a few notes through the REST API as fast as they
can; the server is killed with SIGKILL mid-stream, then started again. Every write
the server acknowledged must have its version, no version may point at a missing
text, nothing may stay pending, and each file's newest version must be the file.
"""

from __future__ import annotations

import signal
import threading
from pathlib import Path

import httpx2
import pytest
from helpers.history import check_history_consistent, history_versions
from helpers.indexer_process import start_indexer, wait_for

# Folder summaries are versions too; these tests count the notes' versions only.
NO_SUMMARIES = {"INDEXER_SUMMARIES": "0"}

pytestmark = pytest.mark.e2e

THREADS = 4
PATHS = [f"items/n{i}.md" for i in range(5)]


def test_kill_9_during_writes_leaves_history_and_files_consistent(workspace: Path) -> None:
    server = start_indexer(workspace, env=NO_SUMMARIES)
    api = server.url.removesuffix("/mcp") + "/api/v1"
    acked: list[tuple[str, str]] = []
    stop = threading.Event()

    def writer(k: int) -> None:
        with httpx2.Client(base_url=api, timeout=10) as http:
            i = 0
            while not stop.is_set():
                path = PATHS[(k + i) % len(PATHS)]
                try:
                    if i % 3 == 2:
                        body = {"path": path, "content": f"\n- appended by {k}, {i}\n"}
                        reply = http.post("/en/append", json=body, params={"reason": "x"})
                    else:
                        text = f"# note {path}\n\nwritten by {k}, {i}\n" + "filler text " * 200
                        reply = http.put(
                            f"/en/notes/{path}",
                            content=text.encode(),
                            headers={"Content-Type": "text/markdown"},
                            params={"reason": f"entry:w{k}-{i} crash test"},
                        )
                except httpx2.HTTPError:
                    return  # the server is gone
                if reply.is_success:
                    acked.append((path, reply.json()["etag"]))
                i += 1

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(THREADS)]
    for thread in threads:
        thread.start()
    try:
        wait_for(lambda: len(acked) > 150, 60, what="some acknowledged writes")
        server.process.send_signal(signal.SIGKILL)
        server.process.wait()
    finally:
        stop.set()
        for thread in threads:
            thread.join(30)
    restarted = start_indexer(workspace, env=NO_SUMMARIES)
    try:
        with httpx2.Client(base_url=restarted.url.removesuffix("/mcp") + "/api/v1") as http:
            wait_for(lambda: http.get("/status").json()["index_ready"], 30, what="the reconcile")
        assert check_history_consistent(workspace) >= len(acked)
        for path in PATHS:
            recorded = {v["etag"] for v in history_versions(workspace, "en", path, 100_000)}
            missing = [etag for p, etag in acked if p == path and etag not in recorded]
            assert not missing, f"acknowledged writes of {path} without a version: {missing}"
    finally:
        restarted.stop()
