"""A note another program rewrote back to the bytes the index holds (``git checkout``
of one branch then another: A, B, A within a debounce) is still told to history when
history's newest version is a text in between: history read B (a late record of an
earlier change) while the index never synced it, and the index, finding A again, told
no one, so history kept B as the note's text until the next start (seen 1 run in 4 of
200 checkouts racing an agent's writes)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.history import SecondsClock, vault_with_history

from indexer.index.service import NoteIndex
from indexer.vault.fsops import etag_of
from indexer.vault.vault import Vault
from indexer.wiring import record_outside_changes

A = b"# F\n\nbranch A\n"
B = b"# F\n\nbranch B\n"  # (the same size: git's two versions of one line)


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Vault]:
    with vault_with_history(tmp_path, 1 << 20, SecondsClock()) as opened:
        yield opened


def save(path: Path, data: bytes) -> None:
    """Write as git does (unlink, create), with a new mtime each time."""
    path.unlink(missing_ok=True)
    path.write_bytes(data)
    stamp = path.stat().st_mtime_ns + 1_000_000_000
    os.utime(path, ns=(stamp, stamp))


def newest(vault: Vault, rel: str) -> tuple[str, str | None]:
    top = vault.history("en", rel, 1)["versions"][0]
    return top["op"], top["etag"]


def test_a_note_rewritten_to_the_indexed_bytes_is_recorded_after_a_text_in_between(
    vault: Vault,
) -> None:
    folder = vault.sandbox.workspace.vault_dir("en")
    folder.mkdir(parents=True)
    note = folder / "f.md"
    note.write_bytes(A)
    index = NoteIndex(vault.sandbox.workspace)
    index.open()
    try:
        record_outside_changes(index, vault)
        index.reconcile()
        save(note, B)
        index._apply_changes({("en", "f.md")}, set())  # (the watcher's pass: B recorded)
        save(note, A)
        index._apply_changes({("en", "f.md")}, set())
        assert newest(vault, "f.md") == ("edit", etag_of(A))
        save(note, B)  # history reads B late (a record of an earlier change) ...
        vault.observe_external("en", "f.md", unknown=True)
        assert newest(vault, "f.md") == ("edit", etag_of(B))
        save(note, A)  # ... and the file is A again, as the index holds it
        index._apply_changes({("en", "f.md")}, set())
        assert newest(vault, "f.md") == ("edit", etag_of(A))
        assert len(vault.history("en", "f.md", 100)["versions"]) == 5  # (A, B, A, B, A)
        touched = folder / "same.md"  # a note history never met, touched: nothing recorded
        touched.write_bytes(A)
        index._apply_changes({("en", "same.md")}, set())
        count = len(vault.history("en", "same.md", 100)["versions"])
        save(touched, A)
        index._apply_changes({("en", "same.md")}, set())
        assert len(vault.history("en", "same.md", 100)["versions"]) == count
    finally:
        index.close()
