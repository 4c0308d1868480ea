"""The reads a write makes of its note: the old bytes under the file's lock, its hash
again right before the swap (``atomic``), then the index's read of the new ones. Each
asks for one byte more than the file's ``fstat`` size and stops when exactly that many
come (no read of nothing after it); a file that grew or shrank since its ``fstat`` is
read to its end as before. Counted in system calls (``os.read``, ``os.pread``), never
timed."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.vault_stack import reconciled_index, recording_vault

from indexer.index.service import NoteIndex
from indexer.vault import fsops
from indexer.vault.vault import Vault
from shared.workspace import Workspace

NOTE = "# Note\n\n" + "words in a note " * 120 + "\n"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    workspace = Workspace(tmp_path / "ws")
    workspace.vault_dir("en").mkdir(parents=True)
    return workspace


@pytest.fixture
def index(ws: Workspace) -> Iterator[NoteIndex]:
    yield from reconciled_index(ws)


@pytest.fixture
def vault(ws: Workspace, index: NoteIndex) -> Iterator[Vault]:
    yield from recording_vault(ws, index)


def counted_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes asked of ``os.read`` from now on (the call goes through)."""
    asked: list[int] = []
    real = os.read

    def read(fd: int, size: int) -> bytes:
        asked.append(size)
        return real(fd, size)

    monkeypatch.setattr(os, "read", read)
    return asked


def counted_preads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes asked of ``os.pread`` from now on (the call goes through)."""
    asked: list[int] = []
    real = os.pread

    def pread(fd: int, size: int, offset: int) -> bytes:
        asked.append(size)
        return real(fd, size, offset)

    monkeypatch.setattr(os, "pread", pread)
    return asked


def test_a_write_over_a_note_reads_it_once_and_the_index_reads_it_once(
    vault: Vault, index: NoteIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault.write("en", "a.md", NOTE)
    asked = counted_reads(monkeypatch)
    done = vault.write("en", "a.md", NOTE + "more\n")
    monkeypatch.undo()
    assert len(asked) == 2, asked  # (was 4: each read ended by a read of nothing)
    assert max(asked) < 1 << 12  # (no 1 MiB buffer for a note of 2 KB)
    assert index.search("en", "more")["results"][0]["path"] == "a.md"
    assert vault.read("en", "a.md")["etag"] == done["etag"]


def test_the_hash_before_the_swap_reads_the_note_once(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault.write("en", "a.md", NOTE)
    asked = counted_preads(monkeypatch)
    vault.write("en", "a.md", NOTE + "again\n")
    monkeypatch.undo()
    assert len(asked) == 1 and asked[0] < 1 << 12, asked  # (was [1 MiB, 1 MiB])
    assert vault.read("en", "a.md")["content"].endswith("again\n")


@pytest.mark.parametrize("change", [b"grown past its stat\n" * 100, b""])
def test_a_file_that_changed_size_since_its_stat_is_read_to_its_end(
    tmp_path: Path, change: bytes
) -> None:
    path = tmp_path / "f.md"
    path.write_bytes(b"x" * 100)
    size = path.stat().st_size
    if change:
        with path.open("ab") as f:
            f.write(change)
    else:
        path.write_bytes(b"x" * 40)
    fd = os.open(path, os.O_RDONLY)
    try:
        assert fsops.read_all(fd, 1 << 20, size) == path.read_bytes()
    finally:
        os.close(fd)


def test_a_file_past_the_limit_reads_one_byte_more(tmp_path: Path) -> None:
    path = tmp_path / "big.md"
    path.write_bytes(b"y" * 5000)
    fd = os.open(path, os.O_RDONLY)
    try:
        assert len(fsops.read_all(fd, 1000, 5000)) == 1001
        os.lseek(fd, 0, os.SEEK_SET)
        assert fsops.read_all(fd, 1000, 0) == b"y" * 1001  # (a stat of an empty file)
    finally:
        os.close(fd)
