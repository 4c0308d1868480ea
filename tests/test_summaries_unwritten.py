"""A summary the file system would not take (a full disk, a folder made immutable): the
folder stays stale and its summary is written again on a timer once it can be, with no
change needed (``chattr +i`` on the folder refuses the write even to root)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from helpers.permissions import immutable, need_immutable

from indexer.core import Core
from indexer.daemon import build_core
from indexer.jobs import summaries as summaries_module
from indexer.jobs.summaries import Summaries
from indexer.settings import Settings
from shared.workspace import Workspace


def vault(tmp_path: Path) -> Path:
    return tmp_path / "ws" / "memory" / "languages" / "en" / "vault"


@pytest.fixture
async def serving(tmp_path: Path) -> AsyncIterator[tuple[Core, Summaries]]:
    """A core without a model whose summaries run in the background (short debounce)
    over ``f/a.md``, yielded once the start-up pass is done."""
    (vault(tmp_path) / "f").mkdir(parents=True)
    (vault(tmp_path) / "f" / "a.md").write_text("# A\n\nalpha first\n")
    settings = Settings(workspace=Workspace(tmp_path / "ws"), summaries_debounce=0.05)
    core = build_core(settings)
    assert core.index is not None and core.summaries is not None
    core.index.reconcile()
    summaries = core.summaries
    loop = asyncio.create_task(summaries.run_forever())
    try:
        while not summaries.ready:
            await asyncio.sleep(0.02)
        yield core, summaries
    finally:
        loop.cancel()
        immutable(vault(tmp_path) / "f", False)
        if core.jobs is not None:
            core.jobs.stop()
        core.index.close()


async def until(done: Callable[[], bool], what: str, seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.05)


async def test_a_summary_that_could_not_be_written_is_stale_and_written_once_it_can(
    tmp_path: Path, serving: tuple[Core, Summaries], monkeypatch: pytest.MonkeyPatch
) -> None:
    """It was served as current (``stale: false``) with the old text, and stayed so
    until the next change in the folder: freeing the disk did not bring it back."""
    monkeypatch.setattr(summaries_module, "FIRST_REWRITE_WAIT", 0.3)  # (30 s in use)
    core, summaries = serving
    folder = vault(tmp_path) / "f"
    assert "alpha first" in summaries.summary("en", "f")["overview"]
    need_immutable(folder)
    (folder / "a.md").write_text("# A\n\nbeta second\n")  # (the file itself may change)
    assert core.index is not None
    core.index.reconcile()
    await until(lambda: summaries.last_pass is not None and bool(summaries.last_pass.unwritten),
                "a pass that could not write")  # fmt: skip
    shown = summaries.summary("en", "f")
    assert shown["stale"] is True and "alpha first" in shown["overview"]
    await asyncio.sleep(0.5)  # a retry while it still cannot: stays stale
    assert summaries.summary("en", "f")["stale"] is True
    immutable(folder, False)

    def current() -> bool:  # (written, then the pass's end marks it current: both)
        shown = summaries.summary("en", "f")
        return "beta second" in shown["overview"] and shown["stale"] is False

    await until(current, "the summary written again without a change, and current", 30)
    assert "beta second" in (folder / ".overview.md").read_text()
