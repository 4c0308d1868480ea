"""A glob spelled with a leading ``./`` or a ``//`` matches as the path it spells (SPEC
round 2: ``./a.md`` and ``a//b.md`` are harmless spellings of ``a.md`` and ``a/b.md``):
``find(pattern="./items/*.md")`` and ``grep(glob="./**/*.md")`` found nothing, with no
word of why, since no path a walk gives starts with ``./``."""

from __future__ import annotations

from pathlib import Path

import pytest

from indexer.vault.globs import glob_depth, tidy
from indexer.vault.sandbox import Sandbox
from indexer.vault.vault import Vault
from shared.errors import InvalidArgumentError
from shared.workspace import Workspace


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    ws = Workspace(tmp_path / "ws")
    root = ws.vault_dir("zh-Hans")
    (root / "笔记/子").mkdir(parents=True)
    (root / "笔记/a.md").write_text("# 甲\n\n数据库\n", encoding="utf-8")
    (root / "笔记/子/b.md").write_text("# 乙\n\n数据库\n", encoding="utf-8")
    (root / "notes [draft]").mkdir()
    (root / "notes [draft]/c.md").write_text("# c\n\n数据库\n", encoding="utf-8")
    return Vault(Sandbox(ws), max_file_bytes=1 << 20)


@pytest.mark.parametrize(
    ("glob", "expected"),
    [
        ("./笔记/*.md", ["笔记/a.md"]),
        ("././笔记/*.md", ["笔记/a.md"]),
        ("笔记//*.md", ["笔记/a.md"]),
        ("./笔记//子/*.md", ["笔记/子/b.md"]),
        ("./**/*.md", ["notes [draft]/c.md", "笔记/a.md", "笔记/子/b.md"]),
        ("./notes [draft]/c.md", ["notes [draft]/c.md"]),  # a path spelled letter for letter
    ],
)
def test_find_and_grep_read_the_spelling_as_its_path(
    vault: Vault, glob: str, expected: list[str]
) -> None:
    assert vault.find("zh-Hans", glob)["paths"] == expected
    found = vault.grep("zh-Hans", "数据库", glob=glob)["matches"]
    assert [m["path"] for m in found] == expected


def test_the_spellings_are_tidied_and_nothing_else() -> None:
    assert tidy("./a//b/*.md") == "a/b/*.md"
    assert tidy("**/*.md") == "**/*.md"
    assert tidy("a/./b.md") == "a/b.md"  # (as a path reads it: tests/test_glob_dots.py)
    assert glob_depth("./笔记/*.md") == glob_depth("笔记/*.md") == 2


def test_a_glob_that_names_nothing_is_refused(vault: Vault) -> None:
    for glob in ("./", "././"):
        with pytest.raises(InvalidArgumentError, match="names no file"):
            vault.find("zh-Hans", glob)
