"""Package boundaries: indexer and agent_client never import each other; shared imports
neither, and depends only on the standard library and PyYAML."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = {
    "indexer": {"agent_client"},
    "agent_client": {"indexer"},
    "shared": {"indexer", "agent_client", "fastmcp", "mcp", "openai", "sqlite_utils"},
}


def imported_roots(path: Path) -> set[str]:
    roots: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_boundaries(package: str) -> None:
    files = sorted((ROOT / package).rglob("*.py"))
    assert files, f"no modules in {package}"
    for file in files:
        bad = imported_roots(file) & FORBIDDEN[package]
        assert not bad, f"{file.relative_to(ROOT)} imports {sorted(bad)}"


def test_shared_needs_only_stdlib_and_yaml() -> None:
    allowed = set(sys.stdlib_module_names) | {"yaml", "frontmatter", "shared"}
    for file in (ROOT / "shared").rglob("*.py"):
        extra = imported_roots(file) - allowed
        assert not extra, f"{file.relative_to(ROOT)} imports {sorted(extra)}"
