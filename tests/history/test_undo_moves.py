"""Undo of a move on real files: each file renamed back (the same file, its own name's
spelling, its folders synced once), and a file moved onto a folder refused as the
conflict it is."""

from __future__ import annotations

import base64
import errno
import os
import resource
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.history import vault_with_history, with_fsyncs
from helpers.snapshots import snapshot

from indexer.vault import renames
from indexer.vault.vault import Vault
from shared.errors import VaultError

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))
NFD = unicodedata.normalize("NFD", "café.md")  # "cafe" + U+0301, as a Mac writes it


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Vault]:
    with vault_with_history(tmp_path, 1 << 20) as made:
        yield made


def root(vault: Vault) -> Path:
    return vault.sandbox.workspace.vault_dir("en")


def files(folder: Path) -> dict[str, tuple[int, int, bytes]]:
    """Each file below ``folder`` as (inode, mtime, bytes), by its name as on disk."""
    return {
        str(path.relative_to(folder)): (
            path.stat().st_ino,
            path.stat().st_mtime_ns,
            path.read_bytes(),
        )
        for path in folder.rglob("*")
        if path.is_file()
    }


def refused(vault: Vault, code: str, *args: Any) -> str:
    """``move`` refused with ``code``, nothing on disk or in history changed."""
    before = snapshot(root(vault))
    store = vault.recorder.store
    assert store is not None
    count = store.stats()["versions"]
    with pytest.raises(VaultError) as info:
        vault.move("en", *args)
    assert info.value.code == code, info.value.message
    assert snapshot(root(vault)) == before
    assert store.stats()["versions"] == count
    return info.value.message


def test_undo_of_a_folder_move_renames_each_file_back_and_syncs_each_folder_once(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each file was written anew at its old path (a temp file, two fsyncs) and deleted
    at the new one: 27 s for a folder of 3,000 notes, most of it in fsync. Now the same
    files come back (inode, mtime), with one fsync per folder, not two per file."""
    notes = 120
    for n in range(notes):
        (root(vault) / "topics/deep").mkdir(parents=True, exist_ok=True)
        (root(vault) / f"topics/deep/n{n:03}.md").write_text(f"# N{n}\n\n[next](n{n + 1:03}.md)\n")
    vault.write("en", "topics/out.md", "# Out\n\n[up](../index.md)\n")  # relinked: rewritten
    vault.write("en", "topics/pic.md", "# Pic\n\n![p](pic.md.assets/p.png)\n")
    vault.write("en", "topics/pic.md.assets/p.png", base64.b64encode(PNG).decode(), "base64")
    before = files(root(vault))
    vault.move("en", "topics", "archive/2026/topics", reason="entry:big1 tidy")
    done, syncs = with_fsyncs(monkeypatch, lambda: vault.undo("en", "big1"))
    assert len(done["files"]) == 2 * (notes + 3)
    after = files(root(vault))
    assert after.keys() == before.keys()
    rewritten = {"topics/out.md"}  # (its link was rewritten by the move: written back)
    assert {k: v for k, v in after.items() if k not in rewritten} == {
        k: v for k, v in before.items() if k not in rewritten
    }
    assert after["topics/out.md"][2] == before["topics/out.md"][2]
    assert not (root(vault) / "archive/2026/topics").exists()
    assert len(syncs) <= 16, len(syncs)  # the note written back: 2; each folder once
    rows = vault.history("en", "topics/deep/n007.md", 5)["versions"]
    assert [(r["op"], r["reason"]) for r in rows[:2]] == [
        ("restore", "undo entry:big1"),
        ("move", "entry:big1 tidy"),
    ]
    gone = vault.history("en", "archive/2026/topics/deep/n007.md", 5)["versions"]
    assert [(r["op"], r["reason"]) for r in gone] == [
        ("delete", "undo entry:big1"),
        ("move", "entry:big1 tidy"),
    ]
    assert "already undone" in refused_undo(vault, "big1")


def test_an_undo_across_many_folders_syncs_them_in_batches_within_few_descriptors(
    vault: Vault,
) -> None:
    """The folders to sync are held open until synced: a folder each of 80 notes must
    not hold 160 descriptors (a batch is synced once 32 are waiting)."""
    for n in range(80):
        (root(vault) / f"tree/f{n:02}").mkdir(parents=True)
        (root(vault) / f"tree/f{n:02}/n.md").write_text(f"# N{n}\n")
    before = files(root(vault))
    vault.move("en", "tree", "old/tree", reason="entry:many1 tidy")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    opened = len(os.listdir("/proc/self/fd"))
    resource.setrlimit(resource.RLIMIT_NOFILE, (opened + 60, hard))
    try:
        vault.undo("en", "many1")
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert files(root(vault)) == before
    assert not (root(vault) / "old").exists()


def refused_undo(vault: Vault, entry_id: str) -> str:
    with pytest.raises(VaultError) as info:
        vault.undo("en", entry_id)
    return info.value.message


def test_a_note_spelled_in_nfd_comes_back_spelled_as_it_was(vault: Vault) -> None:
    """History keeps the tools' NFC name: the note came back under it, and a sync tool
    saw a rename. Moved with its folder, it kept its name on disk; undone, it keeps it
    too, and so do its images."""
    folder = root(vault) / "mac"
    (folder / f"{NFD}.assets").mkdir(parents=True)
    (folder / NFD).write_text("# Café\n\n![p](café.md.assets/p.png)\n")
    (folder / f"{NFD}.assets" / NFD.replace(".md", ".png")).write_bytes(PNG)
    before = files(root(vault))
    vault.move("en", "mac", "moved/mac", reason="entry:nfd1 tidy")
    assert NFD in os.listdir(root(vault) / "moved/mac")
    vault.undo("en", "nfd1")
    assert sorted(os.listdir(folder)) == sorted([NFD, f"{NFD}.assets"])
    assert files(root(vault)) == before
    assert vault.read("en", "mac/café.md")["content"].startswith("# Café")


def test_a_note_spelled_in_nfd_moved_alone_keeps_its_spelling_both_ways(vault: Vault) -> None:
    """Moved to another folder under its own name, it was renamed to the NFC spelling
    (its images' folder too), which the undo then kept. A new name is the tools'."""
    (root(vault) / f"{NFD}.assets").mkdir(parents=True)
    (root(vault) / NFD).write_text("# Café\n\n![p](café.md.assets/p.png)\n")
    (root(vault) / f"{NFD}.assets/p.png").write_bytes(PNG)
    before = files(root(vault))
    vault.move("en", "café.md", "archive/café.md", reason="entry:nfd2 tidy")
    assert sorted(os.listdir(root(vault) / "archive")) == sorted([NFD, f"{NFD}.assets"])
    vault.undo("en", "nfd2")
    assert files(root(vault)) == before
    vault.move("en", "café.md", "archive/cafés.md")
    assert sorted(os.listdir(root(vault) / "archive")) == ["cafés.md", "cafés.md.assets"]


def test_an_undo_that_fails_midway_through_its_renames_puts_every_file_back(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A disk error on the third file: the two renamed back return where the entry
    moved them, history says so, and the undo is done whole once the disk is well."""
    for n in range(5):
        vault.write("en", f"box/n{n}.md", f"# N{n}\n")
    vault.move("en", "box", "crate", reason="entry:f1 tidy")
    moved = {k: v[2] for k, v in files(root(vault)).items()}
    original, calls = renames.move_noreplace, []

    def failing_third(*args: Any) -> bool:
        calls.append(args)
        if len(calls) == 3:
            raise OSError(errno.EIO, "Input/output error")
        return original(*args)

    monkeypatch.setattr(renames, "move_noreplace", failing_third)
    with pytest.raises(VaultError) as info:
        vault.undo("en", "f1")
    assert "crate/n2.md: the disk reported an input/output error" in info.value.message
    monkeypatch.undo()
    assert {k: v[2] for k, v in files(root(vault)).items()} == moved
    done = vault.undo("en", "f1")
    assert len(done["files"]) == 10
    assert sorted(os.listdir(root(vault) / "box")) == [f"n{n}.md" for n in range(5)]
    assert not (root(vault) / "crate").exists()


@pytest.mark.parametrize(
    ("path", "new_path"),
    [
        ("a.md", "folder"),
        ("a.md", "folder/"),
        ("a.md", "folder/inner"),
        ("a.md", "café"),  # a folder spelled in NFD on disk
        ("notes.txt", "folder"),
        ("a.md.assets/p.png", "a.md.assets/sub"),
    ],
)
def test_a_file_moved_onto_a_folder_is_a_conflict_and_changes_nothing(
    vault: Vault, path: str, new_path: str
) -> None:
    """It was refused as "only .md notes ... are writable": true of the name, but the
    place was taken, which a note moved onto a note is told (``conflict``)."""
    vault.write("en", "a.md", "# A\n\n![p](a.md.assets/p.png)\n")
    vault.write("en", "a.md.assets/p.png", base64.b64encode(PNG).decode(), "base64")
    (root(vault) / "a.md.assets/sub").mkdir()
    (root(vault) / "a.md.assets/sub/q.png").write_bytes(PNG)
    vault.write("en", "notes.txt", "plain\n")
    vault.write("en", "folder/inner/b.md", "# B\n")
    (root(vault) / unicodedata.normalize("NFD", "café")).mkdir()
    message = refused(vault, "conflict", path, new_path)
    assert "already exists (a folder)" in message and new_path.rstrip("/") in message
