"""Package boundaries: indexer and agent_client never import each other; shared imports
neither, and depends only on the standard library and PyYAML. Inside agent_client, each
module imports only the layers below it: the writer composes the merge, never the reverse,
and nothing imports the CLI."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = {
    "indexer": {"agent_client"},
    "agent_client": {"indexer", "bench", "tests", "helpers"},
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


# agent_client's units (a top-level module, or the ``merge`` package), lowest first. A unit
# imports agent_client units of lower layers only (a package may import its own modules).
CLIENT_LAYERS: list[set[str]] = [
    {"settings", "discovery", "notes", "notices", "failures", "results", "transport_logs"},
    {"connection"},
    {"merge", "events", "actions"},
    {"writer"},
    {"hooks"},
    {"cli"},
    {"__main__", "__init__"},
]


def client_unit(path: Path) -> str:
    parts = path.relative_to(ROOT / "agent_client").with_suffix("").parts
    return parts[0]


def client_imports(path: Path) -> set[str]:
    """The agent_client units ``path`` imports (``__init__`` for the package root)."""
    units: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}: use absolute imports"
            module = node.module or ""
            if module == "agent_client":
                units.update(
                    a.name if (ROOT / "agent_client" / f"{a.name}.py").exists() else "__init__"
                    for a in node.names
                )
            elif module.startswith("agent_client."):
                units.add(module.split(".")[1])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "agent_client":
                    units.add("__init__")
                elif alias.name.startswith("agent_client."):
                    units.add(alias.name.split(".")[1])
    return units


def test_agent_client_layers() -> None:
    layer_of = {unit: i for i, layer in enumerate(CLIENT_LAYERS) for unit in layer}
    for file in sorted((ROOT / "agent_client").rglob("*.py")):
        unit = client_unit(file)
        assert unit in layer_of, f"{file.relative_to(ROOT)}: add {unit!r} to CLIENT_LAYERS"
        for target in client_imports(file) - {unit}:
            assert target in layer_of, f"{file.relative_to(ROOT)} imports unknown {target!r}"
            assert layer_of[target] < layer_of[unit], (
                f"{file.relative_to(ROOT)} ({unit}) imports {target}, which is not below it"
            )
