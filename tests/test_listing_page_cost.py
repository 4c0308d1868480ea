"""A later page of ``find`` costs what the first does (``cursor``, ``scan.walk_files``'s
``after``): the walk passes over the folders wholly before the cursor without listing
them, and over the files before it in its own folder by bisection. It walked every one
of them again, so each page of a big tree listed more folders than the one before.
Counted here in folders listed (``os.scandir`` calls), not time; and the answers stay
those of one call, ``total`` too (the last page counts what was passed over)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.history import vault_with_history

from indexer.vault import scan
from indexer.vault.vault import Vault


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Vault]:
    with vault_with_history(tmp_path, 1 << 20) as made:
        yield made


def make_tree(vault: Vault) -> list[str]:
    """30 notes in the top folder, 3 in folders with odd names, 40 folders of 10 notes
    (a folder below each of the first 5): in the walk's order."""
    root = vault.sandbox.workspace.vault_dir("en")
    paths = [f"t/top{i:02d}.md" for i in range(30)]
    paths += ["t/a.md/inner.md", "t/a.md.assets/inner.md", "t/b.txt/c/d.md"]  # (odd names)
    for f in range(40):
        paths += [f"t/d{f:02d}/n{i}.md" for i in range(10)]
        if f < 5:
            paths += [f"t/d{f:02d}/deep/m{i}.md" for i in range(3)]
    for path in paths:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(b"# x\n")
    (root / "t/d03/picture.png").write_bytes(b"png")
    return paths


@pytest.fixture
def listed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Folders the walks list (each ``os.scandir`` of the walker counted)."""
    calls: list[int] = []
    real = os.scandir

    def counting(path):  # type: ignore[no-untyped-def]
        calls.append(1)
        return real(path)

    monkeypatch.setattr(scan.os, "scandir", counting)
    return calls


def test_a_later_find_page_lists_no_folder_before_the_cursor(
    vault: Vault, listed: list[int]
) -> None:
    paths = make_tree(vault)
    whole = vault.find("en", path="t", limit=10_000, paged=True)
    assert whole["paths"] == paths and whole["total"] == len(paths)
    listed.clear()
    first = vault.find("en", path="t", limit=20, paged=True)
    first_cost = len(listed)
    assert first["paths"] == paths[:20] and first_cost == 1
    listed.clear()
    after = "t/d35/n4.md"  # (39 folders lie wholly before it, 5 of them below others)
    page = vault.find("en", path="t", limit=20, paged=True, after=after)
    start = paths.index(after) + 1
    assert page["paths"] == paths[start : start + 20]
    assert len(listed) == 1 + 3  # the top folder, d35, d36, d37 (was 48: all before too)
    listed.clear()
    last = vault.find("en", path="t", limit=100, paged=True, after=page["next_after"])
    assert last["paths"] == paths[start + 20 :] and last["total"] == len(paths)


@pytest.mark.parametrize("pattern", ["**/*.md", "*/*.md", "*/deep/*.md", "*.md", "**/*"])
def test_the_last_page_counts_what_the_cursor_passed_over(vault: Vault, pattern: str) -> None:
    make_tree(vault)
    whole = vault.find("en", pattern, path="t", limit=10_000, paged=True)
    for size in (1, 7, 45):
        listed_paths: list[str] = []
        after = None
        while True:
            page = vault.find("en", pattern, path="t", limit=size, paged=True, after=after)
            listed_paths += page["paths"]
            if not page["truncated"]:
                break
            after = page["next_after"]
        assert listed_paths == whole["paths"]
        assert page["total"] == whole["total"]
    tail = vault.find("en", pattern, path="t", limit=10_000, paged=True, after="t/zz/")
    assert tail["paths"] == [] and tail["total"] == whole["total"]
