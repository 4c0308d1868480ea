"""A note the summaries cannot read (over the size limit, not UTF-8) is warned of once
per file and size, not at every pass and every start: the summaries' pass at each start
said "cannot be read: skipped" again for a note of 9 MiB nobody had changed."""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

import pytest
from test_summaries import cores, make_core, note, settle, summaries_of, vault

from indexer.core import Core
from indexer.jobs.summary_files import SummaryFiles
from indexer.jobs.summary_skips import SKIPS_FILE
from indexer.vault.sandbox import Sandbox
from shared.workspace import Workspace

__all__ = ["cores"]  # (the fixture, shared)
SKIPPED = "cannot be read: skipped"
BIG = 9 << 20  # over the 8 MiB a note may hold


def said(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


async def test_a_note_too_large_is_warned_of_once_per_size_across_starts(
    tmp_path: Path, cores: list[Core], caplog: pytest.LogCaptureFixture
) -> None:
    note(tmp_path, "big/good.md", "# Good\n\nreadable\n")
    note(tmp_path, "big/большой 大.md", "# Big\n\n" + "x" * BIG)
    (vault(tmp_path) / "big" / "bad.md").write_bytes(b"# Bad\n\n\xff\xfe not text\n")
    caplog.set_level(logging.DEBUG, logger="indexer.jobs.summaries")
    for start in range(2):  # (a start, then another: the state folder remembers)
        core = make_core(tmp_path)
        cores.append(core)
        settle(core)
        caplog.clear()
        stats = await summaries_of(core).run_pass(force=True)
        assert stats.unreadable == 2
        again = await summaries_of(core).run_pass(force=True)
        assert again.unreadable == 2
        warned = [m for m in said(caplog) if SKIPPED in m]
        if start == 0:
            assert sorted(warned) == [
                f"summaries: en/big/bad.md {SKIPPED}",
                f"summaries: en/big/большой 大.md {SKIPPED}",
            ]
        else:
            assert warned == []
        assert any(SKIPPED in r.getMessage() for r in caplog.records)  # (DEBUG still says)
    with (vault(tmp_path) / "big" / "большой 大.md").open("a") as grown:
        grown.write("more\n")
    caplog.clear()
    await summaries_of(core).run_pass(force=True)
    assert [m for m in said(caplog) if SKIPPED in m] == [
        f"summaries: en/big/большой 大.md {SKIPPED}"
    ]


def test_notes_deleted_while_their_folder_is_read_are_no_skipped_children(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """``rm -rf`` (or a checkout) while a pass reads the folder: a note listed, then gone
    before its read was said to be unreadable ("cannot be read: skipped", a warning and
    a line in the state file for each) and counted as an unreadable child. It is no
    child at all now."""
    workspace = Workspace(tmp_path / "ws")
    folder = workspace.vault_dir("en") / "gone"
    folder.mkdir(parents=True)
    names = [f"note {n} 笔记.md" for n in range(1000)]
    for name in names:
        (folder / name).write_text(f"# {name}\n\nabout to go\n", encoding="utf-8")
    files = SummaryFiles(Sandbox(workspace))  # (no index: every note is read from disk)
    caplog.set_level(logging.WARNING, logger="indexer.jobs.summaries")
    remover = threading.Thread(target=lambda: [os.unlink(folder / n) for n in names])
    unreadable: list[str] = []
    remover.start()
    try:
        while remover.is_alive():
            found = files.read("en", "gone")
            unreadable += found.unreadable if found is not None else []
    finally:
        remover.join()
    assert (unreadable, said(caplog)) == ([], [])
    assert not (workspace.state_dir / SKIPS_FILE).exists()
