"""Names holding ``[...]`` or ``{a,b}``: a glob that spells a path finds it, and ``\\``
escapes a glob character, as in ``rg --glob`` (a vault name never holds a ``\\``)."""

from __future__ import annotations

import pytest

from indexer.vault.globs import compile_glob, glob_depth
from indexer.vault.sandbox import Sandbox
from indexer.vault.vault import Vault
from shared.errors import InvalidArgumentError
from shared.workspace import Workspace

NAMES = [
    "notes [draft]/a.md",
    "notes d/a.md",
    "x{a,b}.md",
    "xa.md",
    "n[0].md",
    "n0.md",
    "[z-a].md",
    "plain.md",
]


@pytest.mark.parametrize(
    ("pattern", "found"),
    [
        ("notes [draft]/a.md", ["notes [draft]/a.md", "notes d/a.md"]),  # (and the class)
        ("notes \\[draft\\]/a.md", ["notes [draft]/a.md"]),
        ("notes \\[draft\\]/*.md", ["notes [draft]/a.md"]),
        ("**/notes [[]draft]/*", ["notes [draft]/a.md"]),
        ("x{a,b}.md", ["x{a,b}.md", "xa.md"]),
        ("x\\{a,b\\}.md", ["x{a,b}.md"]),
        ("n[0].md", ["n[0].md", "n0.md"]),
        ("n\\[0\\].md", ["n[0].md"]),
        ("[z-a].md", ["[z-a].md"]),  # (no valid glob: the name it spells)
        ("*\\.md", ["[z-a].md", "n0.md", "n[0].md", "plain.md", "x{a,b}.md", "xa.md"]),
        ("plain\\.md", ["plain.md"]),
    ],
)
def test_a_name_with_glob_characters_is_found(
    ws: Workspace, pattern: str, found: list[str]
) -> None:
    """``notes [draft]/a.md`` was found only by ``notes [[]draft]/a.md``; ``[z-a].md``
    was refused as no glob."""
    root = ws.vault_dir("en")
    for name in NAMES:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("# t\nneedle\n", encoding="utf-8")
    vault = Vault(Sandbox(ws), max_file_bytes=1 << 20)
    assert sorted(vault.find("en", pattern)["paths"]) == sorted(found), pattern
    hits = vault.grep("en", "needle", glob=pattern)["matches"]
    assert sorted(hit["path"] for hit in hits) == sorted(found), pattern


def test_folders_are_found_by_the_name_they_spell(ws: Workspace) -> None:
    root = ws.vault_dir("en")
    (root / "notes [draft]" / "sub").mkdir(parents=True)
    (root / "notes [draft]" / "sub" / "a.md").write_text("x", encoding="utf-8")
    vault = Vault(Sandbox(ws), max_file_bytes=1 << 20)
    found = vault.find("en", "notes [draft]/sub", dirs=True)["paths"]
    assert found == ["notes [draft]/sub/"]
    found = vault.find("en", "[draft]/a.md", path="notes [draft]/sub")["paths"]
    assert found == []
    found = vault.find("en", "a.md", path="notes [draft]/sub")["paths"]
    assert found == ["notes [draft]/sub/a.md"]


def test_escapes_leave_other_globs_as_they_were() -> None:
    assert compile_glob("**/*.{md,txt}").fullmatch("a/b.txt")
    assert not compile_glob("**/*.\\{md,txt\\}").fullmatch("a/b.txt")
    assert compile_glob("**/*.\\{md,txt\\}").fullmatch("a/b.{md,txt}")
    assert compile_glob("a\\*b").fullmatch("a*b") and not compile_glob("a\\*b").fullmatch("axb")
    assert glob_depth("x\\{a,b\\}/*.md") == 2
    with pytest.raises(InvalidArgumentError):
        compile_glob("n[z-a]*.md")  # (no valid glob, and no name: a name holds no *)
