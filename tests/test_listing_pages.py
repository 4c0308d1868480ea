"""Listings in pages (``indexer.vault.cursor``): ``find`` and ``list_folder`` were cut
at 10,000 files with no way to the rest; ``after=<path>`` now lists what follows the
last path of the page before, in the walk's order, whatever came and went meanwhile."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.history import vault_with_history
from test_folder_listing import make

from indexer.vault.vault import Vault
from shared.errors import InvalidArgumentError

FILES = 2_500


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Vault]:
    with vault_with_history(tmp_path, 1 << 20) as made:
        yield made


def find_pages(vault: Vault, limit: int, **kwargs: object) -> Iterator[dict]:
    after = None
    while True:
        page = vault.find("en", limit=limit, after=after, paged=True, **kwargs)  # type: ignore[arg-type]
        yield page
        if not page["truncated"]:
            return
        after = page["next_after"]
        assert after == page["paths"][-1]


def test_find_pages_list_every_file_once_in_order(vault: Vault) -> None:
    names = [f"big/n{i:05d}.md" for i in range(FILES)]
    make(vault, "en", *names)
    pages = list(find_pages(vault, 300, path="big"))
    listed = [p for page in pages for p in page["paths"]]
    assert listed == names
    assert len(pages) == 9 and all(len(page["paths"]) == 300 for page in pages[:-1])
    assert pages[-1]["total"] == FILES  # (known once the walk reached the end)
    assert all("total" not in page for page in pages[:-1])


def test_find_pages_stay_right_when_files_come_and_go(vault: Vault) -> None:
    """Between pages a file before the cursor and one after it are deleted, and one is
    added on each side: no file still there is skipped or listed twice (an offset would
    skip one), the new one after the cursor comes in its place."""
    root = make(vault, "en", *(f"big/n{i:05d}.md" for i in range(FILES)))
    seen: list[str] = []
    after = None
    for step in range(100):
        page = vault.find("en", path="big", limit=250, after=after, paged=True)
        seen += page["paths"]
        if not page["truncated"]:
            break
        after = page["next_after"]
        if step == 2:
            (root / "big/n00010.md").unlink()  # listed already
            (root / "big/n02000.md").unlink()  # not yet
            make(vault, "en", "big/n00010x.md", "big/n01999x.md")
    assert len(seen) == len(set(seen))
    assert seen == sorted(seen)
    assert "big/n02000.md" not in seen and "big/n01999x.md" in seen
    assert "big/n00010x.md" not in seen  # (added before the cursor: the next listing has it)
    assert {f"big/n{i:05d}.md" for i in range(FILES)} - set(seen) == {"big/n02000.md"}


def test_find_pages_follow_the_walk_through_nested_folders(vault: Vault) -> None:
    """The walk lists a folder's files before its subfolders, so the path order is not
    the strings' (``a/z.md`` before ``a/b/c.md``; ``a-b.md`` and ``a/`` and ``a.md``):
    pages of any size, with folders and without, give what one call gives."""
    make(
        vault,
        "en",
        "a.md",
        "a-b.md",
        "a/z.md",
        "a/b/c.md",
        "a/b/d/e.md",
        "a/b-c/f.md",
        "a/b/g.md",
        "a/é.md",
        "a/\U0001f600.md",
        "a/\uff01.md",
        "b/",
        "b/c/",
        "z.txt",
    )
    for dirs in (False, True):
        whole = vault.find("en", "**/*", limit=1000, dirs=dirs)["paths"]
        assert len(whole) == (11 if not dirs else 17)
        for limit in (1, 2, 3, 7):
            paged = [
                p
                for page in find_pages(vault, limit, pattern="**/*", dirs=dirs)
                for p in page["paths"]
            ]
            assert paged == whole, (dirs, limit)


def test_find_after_a_path_that_is_gone_lists_what_follows_it(vault: Vault) -> None:
    make(vault, "en", "f/a.md", "f/c.md", "f/s/d.md")
    found = vault.find("en", path="f", after="f/b.md", paged=True)
    assert found == {"paths": ["f/c.md", "f/s/d.md"], "truncated": False, "total": 3}
    assert vault.find("en", path="f", after="f/s/", paged=True)["paths"] == ["f/s/d.md"]
    assert vault.find("en", path="f", after="f/s/d.md", paged=True)["paths"] == []
    assert vault.find("en", path="f", limit=1)["paths"] == ["f/a.md"]
    assert "total" not in vault.find("en", path="f")  # (the tool's answer is as it was)


@pytest.mark.parametrize(
    ("path", "after", "says"),
    [
        ("f", "", "after is empty"),
        ("f", "/", "after is empty"),
        ("f", "g/a.md", "below f"),
        ("f", "f", "below f"),
        ("f", "../x.md", "no path of the vault"),
        ("f", "f/\x00.md", "no path of the vault"),
    ],
)
def test_find_refuses_an_after_outside_its_listing(
    vault: Vault, path: str, after: str, says: str
) -> None:
    make(vault, "en", "f/a.md", "g/a.md")
    with pytest.raises(InvalidArgumentError, match=says):
        vault.find("en", path=path, after=after)


def test_folder_pages_list_its_own_files_together_once(vault: Vault) -> None:
    """Text and other files are one sequence by path, cut by ``limit`` together; every
    page gives the total and the subfolders with their counts."""
    names = [f"big/n{i:04d}.{'png' if i % 7 == 0 else 'md'}" for i in range(FILES)]
    make(vault, "en", *names, "big/sub/x.md", "big/sub/y.md")
    files: list[str] = []
    others: list[str] = []
    after = None
    pages = 0
    while True:
        page = vault.list_folder("en", "big", limit=400, after=after)
        pages += 1
        assert page["total"] == FILES
        assert page["folders"] == [{"path": "big/sub", "files": 2}]
        assert len(page["files"]) + len(page["others"]) == min(400, FILES - 400 * (pages - 1))
        files += page["files"]
        others += page["others"]
        if not page["truncated"]:
            assert "next_after" not in page
            break
        after = page["next_after"]
        assert after == max(page["files"] + page["others"])
    assert pages == 7
    assert files == [n for n in names if n.endswith(".md")]
    assert others == [n for n in names if n.endswith(".png")]


@pytest.mark.parametrize("after", ["", "other/a.md", "big/sub/x.md", "big"])
def test_folder_refuses_an_after_not_in_the_folder(vault: Vault, after: str) -> None:
    make(vault, "en", "big/a.md", "big/sub/x.md", "other/a.md")
    with pytest.raises(InvalidArgumentError, match="after"):
        vault.list_folder("en", "big", after=after)
    assert vault.list_folder("en", "big", after="big/a.md")["files"] == []
    assert vault.list_folder("en", "", after="a.md")["folders"] != []
