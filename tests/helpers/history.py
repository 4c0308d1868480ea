"""History seen from a test: read the store of a (running or stopped) indexer, wait
for the watcher to record an edit, and check that history and files agree.

For the agent client's tests of ``agent-client history`` / ``undo`` too: they run a
real ``indexer serve`` (``helpers.indexer_process``), make the writer's changes through
MCP, and use these to look behind the tools.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TypeVar

import pytest

from helpers.indexer_process import wait_for
from indexer.index.service import NoteIndex
from indexer.vault.fsops import etag_of
from indexer.vault.history.store import HistoryStore, Version
from indexer.vault.sandbox import Sandbox
from indexer.vault.vault import Vault
from shared.workspace import Workspace

T = TypeVar("T")


def with_fsyncs(monkeypatch: pytest.MonkeyPatch, call: Callable[[], T]) -> tuple[T, list[int]]:
    """What ``call`` returns, and the descriptors of the fsyncs it made (each really
    made): how often a change makes its files and folders durable."""
    syncs: list[int] = []
    fsync = os.fsync

    def counted(fd: int) -> None:
        syncs.append(fd)
        fsync(fd)

    monkeypatch.setattr(os, "fsync", counted)
    try:
        return call(), syncs
    finally:
        monkeypatch.undo()


def run_child(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``code`` run in a fresh interpreter that imports the tests' helpers and our
    packages (a crash simulated by its ``os._exit`` midway leaves what a kill leaves)."""
    tests = Path(__file__).parents[1]
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        env={"PYTHONPATH": f"{tests.parent}:{tests}", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )


def entry_reason(entry_id: str, title: str) -> str:
    """The reason the Memory Writer passes on every write for an entry (SPEC)."""
    return f"entry:{entry_id} {title}"


class SecondsClock:
    """A clock one second later at each reading, from 2026-11-29 20:00 UTC: each version
    its own time, in order, whatever the machine's speed."""

    def __init__(self) -> None:
        self.now = datetime(2026, 11, 29, 20, 0, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


@contextmanager
def vault_with_history(
    root: Path, max_file_bytes: int, clock: Callable[[], datetime] | None = None
) -> Iterator[Vault]:
    """An in-process vault on a new workspace under ``root``, its history open."""
    ws = Workspace(root / "ws")
    store = HistoryStore(ws.history_dir, etag_of)
    store.open()
    try:
        yield Vault(Sandbox(ws), max_file_bytes=max_file_bytes, clock=clock, history=store)
    finally:
        store.close()


def index_without_history(workspace: Path) -> None:
    """The index takes in the files and history is not told, as after a kill between a
    watcher's commit and its history record, or a start's reconcile killed part way
    (``indexer reindex`` tells history first)."""
    index = NoteIndex(Workspace(workspace))
    try:
        index.open()
        index.reconcile()
    finally:
        index.close()


def vault_file(workspace: Path, lang: str, path: str) -> Path:
    return Workspace(workspace).vault_dir(lang) / path


@contextmanager
def history_store(workspace: Path) -> Iterator[HistoryStore]:
    """The workspace's history, opened read-only (a running server may keep writing)."""
    store = HistoryStore(Workspace(workspace).history_dir, etag_of, readonly=True)
    store.open()
    try:
        yield store
    finally:
        store.close()


def history_versions(workspace: Path, lang: str, path: str, limit: int = 1000) -> list[dict]:
    """What the ``history`` tool would answer (newest first), read from the store."""
    with history_store(workspace) as store:
        return [v.public() for v in store.versions(lang, path, limit)]


def wait_for_version(
    workspace: Path,
    lang: str,
    path: str,
    predicate: Callable[[dict], bool],
    timeout: float = 15,
) -> dict:
    """Wait until the newest version of ``path`` satisfies ``predicate`` (e.g. the
    watcher recorded an external edit); returns it."""

    def newest() -> dict | None:
        rows = history_versions(workspace, lang, path, 1)
        return rows[0] if rows and predicate(rows[0]) else None

    return wait_for(newest, timeout, interval=0.05, what=f"a new version of {lang}/{path}")  # type: ignore[no-any-return]


def edit_outside(workspace: Path, lang: str, path: str, text: str, *, wait: bool = True) -> dict:
    """Save ``text`` the way an editor does (temp file, rename); with ``wait``, return
    once the watcher's external version of it is recorded."""
    target = vault_file(workspace, lang, path)
    target.parent.mkdir(parents=True, exist_ok=True)
    temp = target.with_name(f".{target.name}.editor-tmp")
    temp.write_text(text, encoding="utf-8")
    os.replace(temp, target)
    if not wait:
        return {}
    etag = etag_of(text.encode("utf-8"))
    return wait_for_version(
        workspace, lang, path, lambda v: v["etag"] == etag and v["actor"] == "external"
    )


def check_history_consistent(workspace: Path) -> int:
    """Assert what must hold after any crash and restart, once changes have stopped:
    every version's text is there (rebuilt and checked by sha256), the newest version
    of every file is what the file holds, and a version still marked pending (its
    mark is cleared by the next write) is one that happened. Returns the count."""
    ws = Workspace(workspace)
    count = 0
    with history_store(workspace) as store:
        for lang, path in store.paths():
            rows: list[Version] = store.versions(lang, path, 1_000_000)
            for row in rows:
                assert not row.pending or row is rows[0], f"{lang}/{path} v{row.version} pending"
                if row.blob is not None:
                    assert etag_of(store.content(row)) == row.etag, (lang, path, row.version)
                count += 1
            on_disk = ws.vault_dir(lang) / path
            served = on_disk.is_file() and not on_disk.is_symlink()  # (links: no note)
            current = etag_of(on_disk.read_bytes()) if served else None
            assert rows[0].etag == current, f"{lang}/{path}: history's newest is not the file"
    return count
