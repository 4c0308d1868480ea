"""The page's folder listing counts the text files below each subfolder from the index
while it vouches for them (``indexer.index.folder_counts``): it walked the folder's
whole subtree on every request (the root of a 50,000-note vault: every file, on each
page). The numbers must stay the walk's, on hostile names and while files change.

Real index, real watcher, real files; ``os.scandir`` is only counted.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Iterator

import pytest
from helpers.indexer_process import wait_for
from helpers.vault_stack import watching_index

from indexer.index.service import NoteIndex
from indexer.vault.folder_listing import IndexedCounts
from indexer.vault.sandbox import Sandbox
from indexer.vault.vault import Vault
from shared.workspace import Workspace


def put(ws: Workspace, rel: str, text: str = "# note\n") -> None:
    path = ws.vault_dir("en") / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def stack(ws: Workspace) -> Iterator[tuple[Vault, NoteIndex]]:
    """A vault whose folder counts come from a watching index, as a server wires it."""
    ws.vault_dir("en").mkdir(parents=True)
    for index in watching_index(ws):
        vault = Vault(Sandbox(ws), max_file_bytes=1 << 20)
        vault.index_sync = index
        vault.folder_counter = index.folders.below
        yield vault, index


def walked(vault: Vault, path: str = "", after: str | None = None, limit: int = 50) -> dict:
    """The listing as the walk makes it (no index)."""
    counter, vault.folder_counter = vault.folder_counter, None
    try:
        return vault.list_folder("en", path, limit, after)
    finally:
        vault.folder_counter = counter


def vouching(index: NoteIndex) -> None:
    """Wait until the index vouches for every file (the start-up reconcile applied)."""
    wait_for(lambda: index.changed_since_indexed("en") == frozenset(), 15, what="vouching")


class Entries:
    """``os.scandir`` counting every entry it yields."""

    def __init__(self) -> None:
        self.seen = 0
        self._scandir = os.scandir

    def __call__(self, path: int) -> Iterator[os.DirEntry[str]]:
        outer = self

        class Counted:
            def __init__(self) -> None:
                self._it = outer._scandir(path)

            def __enter__(self) -> Counted:
                return self

            def __exit__(self, *exc: object) -> None:
                self._it.close()

            def __iter__(self) -> Iterator[os.DirEntry[str]]:
                for entry in self._it:
                    outer.seen += 1
                    yield entry

        return Counted()  # type: ignore[return-value]


def test_a_page_of_the_root_lists_one_level_beside_a_big_subfolder(
    stack: tuple[Vault, NoteIndex], ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault, index = stack
    for n in range(2000):
        put(ws, f"big/part{n % 40}/note{n}.md")
    for n in range(5):
        put(ws, f"root{n}.md")
    put(ws, "small/one.md")
    index.reconcile()
    vouching(index)
    expected = walked(vault, limit=3)
    second = walked(vault, after=expected["next_after"], limit=3)
    entries = Entries()
    monkeypatch.setattr(os, "scandir", entries)
    got = vault.list_folder("en", "", 3)
    assert got == expected
    assert {f["path"]: f["files"] for f in got["folders"]} == {"big": 2000, "small": 1}
    assert entries.seen <= 10  # the root's 7 entries (the walk: over 2,000)
    page = vault.list_folder("en", "", 3, after=got["next_after"])
    assert page == second
    assert entries.seen <= 20


def hostile(ws: Workspace) -> None:
    """Names in both Unicode forms, dot-folders, ``*.assets``, files that are no text,
    summaries, links, plain text suffixes, empty and image-only subfolders."""
    nfd = unicodedata.normalize("NFD", "café")
    put(ws, f"{nfd}/crème.md")
    put(ws, f"{nfd}/{unicodedata.normalize('NFD', 'thé')}.md")
    put(ws, f"{nfd}/deep/{unicodedata.normalize('NFD', 'Ωμέγα')}/x.txt")
    put(ws, "café2/note.md")
    put(ws, "a/.hidden/secret.md")
    put(ws, "a/.overview.md", "---\ntype: summary\n---\nsum\n")
    put(ws, "a/b/.overview.md", "---\ntype: summary\n---\nsum\n")
    put(ws, "a/b/c.md")
    put(ws, "a/b/data.json", "{}")
    put(ws, "a/b/table.csv", "x,y\n")
    put(ws, "a/b/notes.yaml", "a: 1\n")
    put(ws, "a/b/page.xml", "<a/>")
    put(ws, "a/pic.png", "no text")
    put(ws, "a/note.assets/inside.md")
    put(ws, "a/b/c.assets/inside.md")
    put(ws, "a/.dot.md")
    put(ws, "a/archive.md.bak")
    put(ws, "images/x.png", "png")
    put(ws, ".obsidian/app.md")
    put(ws, "top.md")
    (ws.vault_dir("en") / "empty").mkdir()
    (ws.vault_dir("en") / "a/link").symlink_to(ws.vault_dir("en") / "a/b")
    (ws.vault_dir("en") / "a/b/linked.md").symlink_to(ws.vault_dir("en") / "top.md")
    os.link(ws.vault_dir("en") / "a/b/c.md", ws.vault_dir("en") / "a/b/hard.md")


FOLDERS = ["", "a", "a/b", "café", "café/deep", "images", "empty"]


def same_as_the_walk(vault: Vault) -> None:
    for folder in FOLDERS:
        assert vault.list_folder("en", folder, 2) == walked(vault, folder, limit=2), folder


def test_the_counts_are_the_walks_on_hostile_names_and_while_files_change(
    stack: tuple[Vault, NoteIndex], ws: Workspace
) -> None:
    vault, index = stack
    answers: list[IndexedCounts | None] = []

    def told(lang: str, folder: str) -> IndexedCounts | None:
        answers.append(index.folders.below(lang, folder))
        return answers[-1]

    vault.folder_counter = told
    hostile(ws)
    index.reconcile()
    wait_for(lambda: index.changed_since_indexed("en") is not None, 15, what="vouching")
    counts = {f["path"]: f["files"] for f in vault.list_folder("en", "")["folders"]}
    assert counts == {"a": 6, "café": 3, "café2": 1, "empty": 0, "images": 0}
    same_as_the_walk(vault)
    assert answers[0] is not None and "a/b/hard.md" in answers[0].changed  # (on disk)
    # Written outside the tools, looked at at once (the watcher has not applied them):
    # the index hands back what it cannot vouch for, or the listing walks.
    for n in range(30):
        put(ws, f"a/b/new{n}.md")
        put(ws, f"{unicodedata.normalize('NFD', 'café')}/new{n}.txt")
        if n % 3 == 0:
            (ws.vault_dir("en") / f"a/b/new{n // 3}.md").unlink()
        same_as_the_walk(vault)
    vouching_now = index.changed_since_indexed("en")
    assert vouching_now is not None  # (the counts were the index's at least then)
    (ws.vault_dir("en") / "a/b/c.md").unlink()  # (hard.md stays: hard-linked, in doubt)
    same_as_the_walk(vault)
    wait_for(lambda: index.changed_since_indexed("en") is not None, 15, what="vouching")
    same_as_the_walk(vault)
    assert sum(answer is not None for answer in answers) > len(answers) // 2
