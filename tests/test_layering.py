"""Import rules between the packages and subsystems (see the README's "Layout")."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# package (or module) prefix -> prefixes it must never import
FORBIDDEN: dict[str, set[str]] = {
    "indexer": {"agent_client"},
    "agent_client": {"indexer"},
    "shared": {"indexer", "agent_client", "fastmcp", "mcp", "openai", "sqlite_utils", "sqlite3"},
    # the vault knows nothing of the index, background jobs, the protocol or the CLI
    "indexer.vault": {
        "indexer.index",
        "indexer.jobs",
        "indexer.web",
        "indexer.cli",
        "indexer.core",
        "indexer.daemon",
        "fastmcp",
        "starlette",
    },
    # the index is derived data: it may walk and read files, never run tools or jobs
    "indexer.index": {
        "indexer.jobs",
        "indexer.web",
        "indexer.cli",
        "indexer.core",
        "indexer.daemon",
        "indexer.vault.vault",
        "indexer.vault.sandbox",
        "fastmcp",
        "starlette",
    },
    "indexer.jobs": {"indexer.web", "indexer.cli", "indexer.daemon", "fastmcp", "starlette"},
    "indexer.web": {"indexer.cli", "indexer.daemon", "sqlite3", "sqlite_utils"},
    "indexer.web.mcp": {"indexer.web.api"},
    "indexer.web.api": {"indexer.web.mcp", "indexer.web.tools"},
    "indexer.core": {"indexer.web", "indexer.cli", "indexer.daemon"},
    # the scan pool and the log setup serve every layer and know none of them
    "indexer.scans": {"indexer.web", "indexer.index", "indexer.vault", "indexer.cli"},
    "indexer.logs": {"indexer.web", "indexer.index", "indexer.vault", "indexer.cli"},
}
# Only these may talk to SQLite directly.
SQLITE_OWNERS = ("indexer.index", "indexer.vault.history", "bench")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported(path: Path) -> set[str]:
    """Fully qualified names of what ``path`` imports (relative imports resolved)."""
    package = module_name(path).rsplit(".", 1)[0] if path.name != "__init__.py" else None
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = (package or module_name(path)).split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def python_files(*folders: str) -> list[Path]:
    return sorted(p for folder in folders for p in (ROOT / folder).rglob("*.py"))


@pytest.mark.parametrize("path", python_files("indexer", "agent_client", "shared"), ids=str)
def test_import_rules(path: Path) -> None:
    name = module_name(path)
    names = imported(path)
    for owner, banned in FORBIDDEN.items():
        if under(name, owner):
            bad = sorted(n for n in names for b in banned if under(n, b))
            assert not bad, f"{name} imports {bad} (rule for {owner})"
    if not any(under(name, owner) for owner in SQLITE_OWNERS):
        bad = sorted(n for n in names if under(n, "sqlite3") or under(n, "sqlite_utils"))
        assert not bad, f"{name} talks to SQLite directly ({bad}); go through the index"


def test_shared_needs_only_stdlib_yaml_and_frontmatter() -> None:
    allowed = set(sys.stdlib_module_names) | {"yaml", "frontmatter", "shared"}
    for file in (ROOT / "shared").rglob("*.py"):
        extra = {n.split(".")[0] for n in imported(file)} - allowed
        assert not extra, f"{file.relative_to(ROOT)} imports {sorted(extra)}"


def test_objects_are_built_in_the_composition_root_only() -> None:
    """The web layer gets a built ``Core``; it never builds the vault or the index."""
    for path in python_files("indexer/web"):
        tree = ast.parse(path.read_text())
        built = {
            node.func.id
            for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        }
        assert not built & {"Vault", "NoteIndex", "Sandbox", "Core"}, path
