"""Shared fixtures: a real indexer subprocess, and an in-memory server for tool tests.

Tests that start real processes (an ``indexer serve``, the CLI, a browser, npm clients)
are marked ``e2e`` here, by what their module uses, so that ``make test-fast`` (``-m
"not e2e"``) runs the unit and in-memory tests only.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from helpers.indexer_process import QUIET_ENV, RunningIndexer, start_indexer

from agent_client.notices import CollectingNoticeSink
from agent_client.settings import ClientSettings
from agent_client.writer import MemoryWriter
from indexer.index.service import NoteIndex
from shared.workspace import Workspace

for _key, _value in QUIET_ENV.items():
    os.environ.setdefault(_key, _value)
# Started in the background of a shell without job control, pytest has SIGINT ignored, and
# every process a test starts inherits that: the Ctrl-C tests' commands then run on and
# fail. A handler of our own is reset to the default in each child.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

FIXED_NOW = datetime(2026, 11, 29, 20, 0, 0, tzinfo=UTC)
# A module mentioning one of these starts real processes: its tests are end to end.
E2E_SIGNS = ("start_indexer", "RunningIndexer", "subprocess", "indexer_server", "chromium")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    verdicts: dict[Path, bool] = {}
    for item in items:
        module = Path(str(item.fspath))
        if module not in verdicts:
            text = module.read_text(encoding="utf-8")
            verdicts[module] = any(sign in text for sign in E2E_SIGNS)
        if verdicts[module] or {"server", "indexer_server"} & set(item.fixturenames):
            item.add_marker(pytest.mark.e2e)


@pytest.fixture
def modes() -> Iterator[dict[Path, int]]:
    """Paths a test takes permissions from (``helpers.permissions.chmod``), given back
    afterwards (path -> mode)."""
    changed: dict[Path, int] = {}
    yield changed
    for path, mode in changed.items():
        if path.exists():
            os.chmod(path, mode)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    """A workspace not made yet (the index or the test makes its folders)."""
    return Workspace(tmp_path / "ws")


@pytest.fixture
def index(ws: Workspace) -> Iterator[NoteIndex]:
    """The index of ``ws``, open for writing, closed afterwards."""
    idx = NoteIndex(ws)
    idx.open()
    yield idx
    idx.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningIndexer]:
    """One ``indexer serve`` shared by a test module (its tests use langs of their own)."""
    running = start_indexer(tmp_path_factory.mktemp("module") / "ws")
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
def sink() -> CollectingNoticeSink:
    """The notices a Memory Writer sends, kept."""
    return CollectingNoticeSink()


@pytest.fixture
def writer(server: RunningIndexer, sink: CollectingNoticeSink) -> Iterator[MemoryWriter]:
    """A Memory Writer on the module's server (UTC day files), closed afterwards."""
    w = MemoryWriter(ClientSettings(workspace=server.workspace, tz=UTC), sink)
    yield w
    w.close()


@pytest.fixture
def indexer_server(workspace: Path) -> Iterator[RunningIndexer]:
    """A running ``indexer serve`` on a fresh workspace, stopped (SIGTERM) afterwards."""
    server = start_indexer(workspace)
    try:
        yield server
    finally:
        server.stop()
