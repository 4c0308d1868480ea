"""Changes the system refuses halfway (a read-only folder, a hard link): the refusal
says nothing changed, and files and history are as they were.

``chattr +i`` makes a folder refuse changes even to root (the tests run as root here);
where it is not available the tests are skipped."""

from __future__ import annotations

import base64
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.permissions import immutable, need_immutable
from helpers.snapshots import contents

from indexer.vault.fsops import etag_of
from indexer.vault.history.store import HistoryStore
from indexer.vault.oserrors import describe
from indexer.vault.sandbox import Sandbox
from indexer.vault.vault import Vault
from shared.errors import VaultError
from shared.workspace import Workspace

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Vault]:
    ws = Workspace(tmp_path / "ws")
    store = HistoryStore(ws.history_dir, etag_of)
    store.open()
    yield Vault(Sandbox(ws), max_file_bytes=1 << 20, history=store)
    store.close()


@pytest.fixture
def frozen() -> Iterator[list[Path]]:
    """Folders a test made immutable, made changeable again afterwards (else pytest
    could not remove them)."""
    made: list[Path] = []
    yield made
    for path in made:
        immutable(path, False)


def freeze(frozen: list[Path], path: Path) -> None:
    need_immutable(path)
    frozen.append(path)


def root(vault: Vault) -> Path:
    return vault.sandbox.workspace.vault_dir("en")


def image(vault: Vault, path: str) -> None:
    vault.write("en", path, base64.b64encode(PNG).decode(), "base64")


def refused(vault: Vault, code: str, call, *args, **kwargs) -> str:
    """The call is refused with ``code`` and changes nothing: files and history alike
    (what was changed and put back has new mtimes)."""
    files = contents(vault.sandbox.workspace.root / "memory")
    store = vault.recorder.store
    assert store is not None
    count = store.stats()["versions"]
    with pytest.raises((VaultError, OSError)) as info:
        call(*args, **kwargs)
    # a system error reaches the MCP and REST answers in plain words (``describe``)
    error = describe(info.value) if isinstance(info.value, OSError) else info.value
    assert isinstance(error, VaultError) and error.code == code, str(info.value)
    assert contents(vault.sandbox.workspace.root / "memory") == files
    assert store.stats()["versions"] == count
    return error.message


def test_a_folder_move_whose_links_cannot_be_rewritten_is_taken_back(
    vault: Vault, frozen: list[Path]
) -> None:
    """The folder was renamed, then a note in a read-only folder below it could not get
    its links rewritten: "nothing was changed", and the folder stood moved with the
    note's image link broken."""
    image(vault, "top.md.assets/p.png")
    vault.write("en", "top.md", "# top\n")
    vault.write("en", "f/a.md", "# a\n\n![pic](../top.md.assets/p.png)\n")  # rewritten first
    vault.write("en", "f/sub/n.md", "# n\n\n![pic](../../top.md.assets/p.png)\n")
    freeze(frozen, root(vault) / "f/sub")
    message = refused(vault, "forbidden_path", vault.move, "en", "f", "g/deeper")
    assert "permission denied" in message and "nothing was changed" in message
    assert not (root(vault) / "g").exists()
    immutable(root(vault) / "f/sub", False)
    assert vault.move("en", "f", "g/deeper")["files"] == 2  # and it moves once allowed
    moved = (root(vault) / "g/deeper/sub/n.md").read_text()
    assert "](../../../top.md.assets/p.png)" in moved


def test_a_folder_move_never_splits_a_hard_link(vault: Vault) -> None:
    """Every tool refuses to write a hard-linked note; a folder move rewrote its links by
    a new file, and the other name kept the old text."""
    image(vault, "top.md.assets/p.png")
    vault.write("en", "top.md", "# top\n")
    vault.write("en", "f/n.md", "# n\n\n![pic](../top.md.assets/p.png)\n")
    os.link(root(vault) / "f/n.md", root(vault) / "elsewhere.txt")
    message = refused(vault, "forbidden_path", vault.move, "en", "f", "g/deeper")
    assert "hard link" in message and "nothing was moved" in message
    vault.write("en", "g/plain.md", "# plain, no links\n")
    os.link(root(vault) / "g/plain.md", root(vault) / "other.txt")
    assert vault.move("en", "g", "h/g")["files"] == 1  # a link kept as it is moves along
    assert os.path.samefile(root(vault) / "h/g/plain.md", root(vault) / "other.txt")


def test_a_delete_whose_images_cannot_be_removed_removes_nothing(
    vault: Vault, frozen: list[Path]
) -> None:
    """The note was unlinked, then its images could not be: "nothing was changed", the
    note gone, and history said the image was deleted while it was still there."""
    image(vault, "n.md.assets/p.png")
    vault.write("en", "n.md", "# n\n\n![p](n.md.assets/p.png)\n")
    freeze(frozen, root(vault) / "n.md.assets")
    message = refused(vault, "forbidden_path", vault.delete, "en", "n.md")
    assert "permission denied" in message and "nothing was changed" in message
    immutable(root(vault) / "n.md.assets", False)
    vault.delete("en", "n.md")
    assert not (root(vault) / "n.md.assets").exists()


def test_a_restore_whose_images_cannot_come_back_writes_no_note(
    vault: Vault, frozen: list[Path]
) -> None:
    """The note was written first, then its image failed: "nothing was changed", with
    the note back on disk and heard as another program's."""
    image(vault, "n.md.assets/p.png")
    vault.write("en", "n.md", "# n\n\n![p](n.md.assets/p.png)\n")
    version = vault.history("en", "n.md", 1)["versions"][0]["version"]
    vault.delete("en", "n.md")
    (root(vault) / "n.md.assets").mkdir()  # an empty folder another program left
    freeze(frozen, root(vault) / "n.md.assets")
    message = refused(vault, "forbidden_path", vault.restore, "en", "n.md", version)
    assert "permission denied" in message
    immutable(root(vault) / "n.md.assets", False)
    vault.restore("en", "n.md", version)
    assert (root(vault) / "n.md.assets/p.png").read_bytes() == PNG


def test_moving_a_note_whose_images_may_not_move_is_no_conflict(
    vault: Vault, frozen: list[Path]
) -> None:
    """A read-only folder was answered "conflict" (which tells a client to read again
    and retry), with the system's raw error text."""
    image(vault, "dir/n.md.assets/p.png")
    vault.write("en", "dir/n.md", "# n\n\n![p](n.md.assets/p.png)\n")
    freeze(frozen, root(vault) / "dir/n.md.assets")
    message = refused(vault, "forbidden_path", vault.move, "en", "dir/n.md", "other/n.md")
    assert "permission denied" in message and "Errno" not in message


def test_a_read_only_note_is_left_as_it_is_by_every_tool(vault: Vault) -> None:
    """``append`` was refused by the system (for any user but root) while ``write``,
    ``restore`` and ``delete`` replaced or removed the note a person had made read-only
    (and the write gave the new file the same mode)."""
    image(vault, "top.md.assets/p.png")
    vault.write("en", "top.md", "# top\n")
    vault.write("en", "dir/keep.md", "# keep\n\nprecious\n\n![p](../top.md.assets/p.png)\n")
    vault.write("en", "dir/keep.md", "# keep\n\nprecious, edited\n\n![p](../top.md.assets/p.png)\n")
    os.chmod(root(vault) / "dir/keep.md", 0o444)
    calls = [
        (vault.write, ("en", "dir/keep.md", "# replaced\n")),
        (vault.append, ("en", "dir/keep.md", "more\n")),
        (vault.restore, ("en", "dir/keep.md", 1)),
        (vault.delete, ("en", "dir/keep.md")),
        (vault.move, ("en", "dir/keep.md", "a/b/keep.md")),  # its link would be rewritten
        (vault.move, ("en", "dir", "deeper/dir")),
    ]
    for call, args in calls:
        message = refused(vault, "forbidden_path", call, *args)
        assert "read-only" in message and "nothing was" in message, (call, message)
    assert vault.move("en", "dir/keep.md", "dir/kept.md")["new_path"] == "dir/kept.md"
    assert (root(vault) / "dir/kept.md").stat().st_mode & 0o777 == 0o444  # a rename only
    os.chmod(root(vault) / "dir/kept.md", 0o644)
    vault.write("en", "dir/kept.md", "# writable again\n")
