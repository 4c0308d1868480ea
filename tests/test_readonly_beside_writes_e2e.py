"""Read-only connections to the index and history beside a server that writes both.

The CLI (``indexer status``, ``history``, ``search``, ``maintain --status``) opens the
databases ``mode=ro`` while a server may be writing them. SQLite's WAL lets such a
reader share the server's ``-shm`` (it can write that file), so neither side should ever
see ``SQLITE_PROTOCOL`` or ``SQLITE_BUSY``: a reader that disturbed the writer would
fail a client's write (history refusing the change) or leave an outside change
unrecorded. Held here under load, bounded in time: 8 clients writing and notes copied
in, the CLI's own read-only openers in loops in this process, the CLI commands in loops
as processes.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from helpers.indexer_process import RunningIndexer, start_indexer, vault_dir, wait_for

from indexer.index.service import NoteIndex
from indexer.vault import fsops
from indexer.vault.history.store import HistoryStore
from shared.workspace import Workspace

CLIENTS = 8
LOAD_SECONDS = 6.0
COPIED = 300
CLI_COMMANDS = (
    ["status"],
    ["history", "--lang", "en", "seed.md"],
    ["search", "--lang", "en", "plum"],
    ["maintain", "--status"],
)


async def write_loop(server: RunningIndexer, n: int) -> tuple[int, list[str]]:
    """Notes written over and over for ``LOAD_SECONDS``: how many were answered, the errors."""
    answered, errors = 0, []
    async with server.client(timeout=60) as client:
        until = time.monotonic() + LOAD_SECONDS
        i = 0
        while time.monotonic() < until:
            rel = f"c{n}/note{i % 20}.md"
            text = f"# Client {n} write {i}\n\nplum {n} {i}\n" + "words of a note " * 40
            i += 1
            result = await client.call_tool(
                "write", {"lang": "en", "path": rel, "content": text}, raise_on_error=False
            )
            if result.is_error:
                errors.append(str(result.content)[:300])
            else:
                answered += 1
    return answered, errors


def looped(read: Callable[[], object], stop: threading.Event, out: dict, name: str) -> None:
    """``read`` again and again until ``stop``; its runs and errors in ``out[name]``."""
    runs, errors = 0, []
    while not stop.is_set():
        try:
            read()
        except Exception as err:
            errors.append(repr(err)[:300])
        runs += 1
        time.sleep(0.002)  # (the GIL: the clients in this process go on too)
    out[name] = [runs, errors]


def history_read(workspace: Workspace) -> None:
    """As ``indexer history`` reads it: a read-only store opened, read, closed."""
    store = HistoryStore(workspace.history_dir, fsops.etag_of, readonly=True)
    store.open()
    try:
        store.versions("en", "seed.md", 20)
        store.stats()
    finally:
        store.close()


def index_read(workspace: Workspace) -> None:
    """As ``indexer status`` and ``search`` read it beside a server."""
    index = NoteIndex(workspace)
    index.open(readonly=True)
    try:
        index.counts()
        index.search("en", "plum")
    finally:
        index.close()


def copy_in(folder: Path) -> None:
    """Notes saved by another program during the load (the watcher tells the server)."""
    folder.mkdir()
    for i in range(COPIED):
        (folder / f"copied{i}.md").write_text(f"# Copied {i}\n\nplum copied {i}\n")
        time.sleep(LOAD_SECONDS / COPIED / 2)


def history_versions(workspace: Workspace) -> int:
    store = HistoryStore(workspace.history_dir, fsops.etag_of, readonly=True)
    store.open()
    try:
        return store.stats()["versions"]
    finally:
        store.close()


def cli_read(root: Path, command: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "indexer", *command, "--workspace", str(root)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if done.returncode != 0:
        raise RuntimeError(f"exit {done.returncode}: {done.stderr.strip()[-300:]}")


def test_readers_beside_a_writing_server_fail_nothing(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    vault = root / "memory" / "languages" / "en" / "vault"
    vault.mkdir(parents=True)
    (vault / "seed.md").write_text("# Seed\n\nplum seed\n")
    workspace = Workspace(root)
    server = start_indexer(root)
    try:
        stop = threading.Event()
        reads: dict[str, list] = {}
        readers = [
            ("history", lambda: history_read(workspace)),
            ("index", lambda: index_read(workspace)),
            *((" ".join(c), lambda c=c: cli_read(root, c)) for c in CLI_COMMANDS),
        ]
        threads = [
            threading.Thread(target=looped, args=(read, stop, reads, name))
            for name, read in readers
        ]
        for thread in threads:
            thread.start()
        copying = threading.Thread(target=copy_in, args=(vault_dir(server, "en") / "copied",))
        copying.start()

        async def clients() -> list[tuple[int, list[str]]]:
            return await asyncio.gather(*(write_loop(server, n) for n in range(CLIENTS)))

        try:
            written = asyncio.run(clients())
        finally:
            stop.set()
            for thread in (*threads, copying):
                thread.join()
        answered = sum(count for count, _ in written)
        recorded = lambda: history_versions(workspace) >= answered + COPIED + 1  # noqa: E731
        wait_for(recorded, 60, 0.1, "every write and copied note in history")
    finally:
        server.stop()
    assert [errors for _, errors in written] == [[]] * CLIENTS
    assert all(count for count, _ in written), written
    assert {name: errors for name, (_, errors) in reads.items()} == {n: [] for n, _ in readers}
    assert all(runs for runs, _ in reads.values()), reads
    troubles = [
        line for line in server.log().splitlines() if " WARNING " in line or " ERROR " in line
    ]
    assert troubles == []
