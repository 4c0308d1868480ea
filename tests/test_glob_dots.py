"""A glob's ``.`` and ``..`` segments read as a path reads them, wherever they stand.

A path ``笔记/./a.md`` is ``笔记/a.md`` (``sandbox.clean_relpath``), but the glob
``笔记/./*.md`` answered an empty list (only a leading ``./`` was taken out); a ``..``
after a name holding a ``{`` or ``[`` that opens nothing (``notes {x}``, ``a[b``: the
text they spell, as ``_glob_regex`` reads them) was refused as if after a wildcard; and
a ``..`` after ``{a/b,c}`` alternatives cut them in half (``{a/b,c}/../*.md`` became
``{a/*.md``, a literal name: an empty list)."""

from __future__ import annotations

from pathlib import Path

import pytest

from indexer.vault.globs import tidy
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
    (root / "notes {x}").mkdir()
    (root / "notes {x}/c.md").write_text("# c\n\n数据库\n", encoding="utf-8")
    return Vault(Sandbox(ws), max_file_bytes=1 << 20)


@pytest.mark.parametrize(
    ("glob", "expected"),
    [
        ("笔记/./*.md", ["笔记/a.md"]),
        ("笔记/./子/./b.md", ["笔记/子/b.md"]),
        ("**/./*.md", ["notes {x}/c.md", "笔记/a.md", "笔记/子/b.md"]),
        ("笔记/子/.", []),  # (the folder itself: find lists files)
        ("**/.", []),  # (every folder: no file)
        ("*/.", []),
        ("notes {x}/../笔记/*.md", ["笔记/a.md"]),  # (a name with a '{' that opens nothing)
        ("a[b/../笔记/子/*.md", ["笔记/子/b.md"]),  # (a '[' with no ']')
        ("notes {x}/./c.md", ["notes {x}/c.md"]),
        ("{笔记,x}/子/../*.md", ["笔记/a.md"]),  # (alternatives before the name)
    ],
)
def test_dot_segments_read_as_a_path_reads_them(
    vault: Vault, glob: str, expected: list[str]
) -> None:
    assert vault.find("zh-Hans", glob)["paths"] == expected
    found = vault.grep("zh-Hans", "数据库", glob=glob)["matches"]
    assert [m["path"] for m in found] == expected


def test_tidy_takes_out_each_dot_segment() -> None:
    assert tidy("a/./b.md") == "a/b.md"
    assert tidy("a/./././b/.") == "a/b"
    assert tidy("a..b/.c/*.md") == "a..b/.c/*.md"  # (names, not steps)
    assert tidy("a/\\./b.md") == "a/b.md"  # (an escaped '.' spells '.')
    assert tidy("**/.") == "**/."  # (folders alone, not every file: left, matching none)
    assert tidy("*/./.") == "*/."


@pytest.mark.parametrize(
    "glob", ["{笔记/子,x}/../*.md", "*/../*.md", "笔记/[ab]/../*.md", "笔记/a[b/c]/../*.md"]
)
def test_a_step_back_out_of_a_wildcard_or_alternatives_is_refused(vault: Vault, glob: str) -> None:
    with pytest.raises(InvalidArgumentError, match="may follow only a folder's name"):
        vault.find("zh-Hans", glob)
