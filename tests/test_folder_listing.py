"""``Vault.list_folder``: a folder as the page shows it, from one walk (its own text
files, its subfolders with the text files below each), cut in time without hiding any
of the folder's own entries."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.history import vault_with_history

from indexer.vault import folder_listing
from indexer.vault.vault import Vault
from shared.errors import InvalidArgumentError, NotFoundError


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Vault]:
    with vault_with_history(tmp_path, 1 << 20) as made:
        yield made


def make(vault: Vault, lang: str, *paths: str) -> Path:
    root = vault.sandbox.workspace.vault_dir(lang)
    for path in paths:
        if path.endswith("/"):
            (root / path).mkdir(parents=True, exist_ok=True)
        else:
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_bytes(b"# x\n")
    return root


def test_one_walk_lists_own_files_and_counts_below_each_subfolder(vault: Vault) -> None:
    make(
        vault,
        "en",
        "top/a.md",
        "top/prefs.json",
        "top/photo.png",  # not text
        "top/a.md.assets/p.png",
        "top/a.md.assets/deeper/x.md",  # inside a note's images: not counted
        "top/.hidden.md",
        "top/sub/one.md",
        "top/sub/deep/two.txt",
        "top/sub/deep/three.csv",
        "top/empty/",
        "other/elsewhere.md",
    )
    listed = vault.list_folder("en", "top")
    assert listed == {
        "path": "top",
        "files": ["top/a.md", "top/prefs.json"],
        "others": ["top/photo.png"],
        "total": 3,
        "folders": [{"path": "top/empty", "files": 0}, {"path": "top/sub", "files": 3}],
        "truncated": False,
        "counted": True,
    }
    root = vault.list_folder("en")
    assert root["files"] == []
    assert root["folders"] == [{"path": "other", "files": 1}, {"path": "top", "files": 5}]


def test_limit_cuts_the_own_files_never_the_counts(vault: Vault) -> None:
    make(vault, "en", *(f"f/n{i}.md" for i in range(5)), *(f"f/s/m{i}.md" for i in range(7)))
    listed = vault.list_folder("en", "f", limit=2)
    assert listed["files"] == ["f/n0.md", "f/n1.md"]
    assert listed["truncated"] is True
    assert listed["folders"] == [{"path": "f/s", "files": 7}]


def test_a_walk_out_of_time_still_lists_every_own_entry(vault: Vault) -> None:
    """Counting stops; the folder's own files and subfolders are listed all the same
    (their counts None), so nothing in it is out of the page's reach."""
    make(vault, "en", "g/a/1.md", "g/b/2.md", "g/c/3.md", "g/z.md")
    listed = folder_listing.list_folder(vault, "en", "g", max_seconds=1e-9)
    assert listed["counted"] is False
    assert listed["files"] == ["g/z.md"]
    assert [f["path"] for f in listed["folders"]] == ["g/a", "g/b", "g/c"]
    assert [f["files"] for f in listed["folders"]] == [None, None, None]


def test_refusals(vault: Vault) -> None:
    make(vault, "en", "h/n.md")
    with pytest.raises(NotFoundError):
        vault.list_folder("en", "nowhere")
    with pytest.raises(InvalidArgumentError):
        vault.list_folder("en", "h/n.md")
    with pytest.raises(InvalidArgumentError):
        vault.list_folder("en", "h", limit=0)
    assert vault.list_folder("xx") == {
        "path": "",
        "files": [],
        "others": [],
        "total": 0,
        "folders": [],
        "truncated": False,
        "counted": True,
    }


def test_a_folder_of_pictures_lists_them(vault: Vault) -> None:
    """An Obsidian vault keeps its pictures in a folder of their own (``Attachments/``):
    it listed as empty."""
    make(vault, "en", "n.md", "Attachments/b.png", "Attachments/a.jpg", "Attachments/.x.png")
    make(vault, "en", "Attachments/deeper/c.png", "n.md.assets/p.png")
    top = vault.list_folder("en", "")
    assert top["files"] == ["n.md"] and top["others"] == []
    shown = vault.list_folder("en", "Attachments")
    assert shown["files"] == [] and shown["others"] == ["Attachments/a.jpg", "Attachments/b.png"]
    assert shown["folders"] == [{"path": "Attachments/deeper", "files": 0}]
    cut = vault.list_folder("en", "Attachments", limit=1)
    assert cut["others"] == ["Attachments/a.jpg"] and cut["truncated"]
