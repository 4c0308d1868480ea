"""Import rules between the packages and subsystems (see the README's "Layout").

indexer and agent_client never import each other; shared imports neither and depends
only on the standard library, PyYAML and python-frontmatter (and httpx2, which comes
with the OpenAI SDK, for the bound on a model's reply both sides read). Inside the indexer, the
vault knows nothing of the index, jobs or protocols, and objects are built in the
composition root only. Inside agent_client, each module imports only the layers below
it: the writer composes the merge, never the reverse, and nothing imports the CLI; and
what ``agent-client`` loads as it starts imports no SDK that only some commands use."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# package (or module) prefix -> prefixes it must never import
FORBIDDEN: dict[str, set[str]] = {
    "indexer": {"agent_client"},
    "agent_client": {"indexer", "bench", "tests", "helpers"},
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
    # history's store keeps versions; it knows nothing of paths on disk, tools or the vault
    "indexer.vault.history": {
        "indexer.vault.vault",
        "indexer.vault.sandbox",
        "indexer.vault.timeline",
        "indexer.vault.moves",
        "indexer.vault.move_checks",
        "indexer.vault.undo",
        "indexer.vault.undo_moves",
        "indexer.vault.recording",
        "indexer.vault.fsops",
        "indexer.vault.atomic",
        "indexer.vault.reading",
        "indexer.vault.contents",
        "indexer.index",
        "indexer.jobs",
    },
    # descriptor primitives, below the atomic writes built on them
    "indexer.vault.fsops": {"indexer.vault.atomic"},
    # a file's bytes in and out: below the tools that use them
    "indexer.vault.contents": {
        "indexer.vault.vault",
        "indexer.vault.reading",
        "indexer.vault.timeline",
        "indexer.vault.moves",
        "indexer.vault.move_checks",
        "indexer.vault.undo",
        "indexer.vault.undo_moves",
    },
    "indexer.jobs": {"indexer.web", "indexer.cli", "indexer.daemon", "fastmcp", "starlette"},
    # recall is plain lookups: it never reaches a model or the maintenance jobs
    "indexer.jobs.recall": {"indexer.jobs.llm", "indexer.jobs.maintenance", "openai"},
    "indexer.jobs.recall_block": {"indexer.jobs.llm", "indexer.jobs.maintenance", "openai"},
    "indexer.jobs.recall_focus": {"indexer.jobs.llm", "indexer.jobs.maintenance", "openai"},
    "indexer.jobs.recall_source": {"indexer.jobs.llm", "indexer.jobs.maintenance", "openai"},
    "indexer.jobs.keywords": {"indexer.jobs.llm", "indexer.jobs.maintenance", "openai"},
    "indexer.jobs.han_keywords": {"indexer.jobs.llm", "indexer.jobs.maintenance", "openai"},
    "indexer.jobs.stop_words": {"indexer.jobs.llm", "indexer.jobs.maintenance", "openai"},
    # the delimiter's defusing is text alone
    "indexer.jobs.delimiter": {"indexer.vault", "indexer.index", "indexer.jobs.llm", "openai"},
    "indexer.jobs.tokens": {"indexer.jobs.llm", "indexer.jobs.maintenance", "openai"},
    # directory summaries: texts and dirty marks are pure; summary files are written by
    # the job by descriptor, never through the tools (which refuse dot-names on purpose)
    "indexer.index.abstract": {
        "indexer.vault",
        "indexer.index.service",
        "indexer.index.reads",
        "indexer.index.connections",
        "sqlite3",
    },
    # the facade's parts know nothing of the facade, nor of each other's side
    "indexer.index.connections": {
        "indexer.index.service",
        "indexer.index.reads",
        "indexer.index.applying",
        "indexer.index.tool_changes",
    },
    "indexer.index.reads": {"indexer.index.service", "indexer.index.applying"},
    "indexer.index.applying": {"indexer.index.service", "indexer.index.reads"},
    "indexer.jobs.summary_texts": {
        "indexer.vault",
        "indexer.index.service",
        "indexer.index.reads",
        "indexer.jobs.llm",
        "indexer.jobs.summaries",
        "openai",
    },
    "indexer.jobs.dirty": {"indexer.vault", "indexer.index", "indexer.jobs"},
    "indexer.jobs.summaries": {"indexer.vault.vault"},
    "indexer.jobs.summary_files": {"indexer.vault.vault", "indexer.jobs.llm"},
    "indexer.web": {"indexer.cli", "indexer.daemon", "sqlite3", "sqlite_utils"},
    "indexer.web.mcp": {"indexer.web.api"},
    "indexer.web.api": {"indexer.web.mcp", "indexer.web.tools"},
    "indexer.core": {"indexer.web", "indexer.cli", "indexer.daemon"},
    # what the commands build while no server serves: never the web stack (1.2 s a run)
    "indexer.wiring": {"indexer.web", "indexer.cli", "indexer.daemon", "uvicorn", "fastmcp", "mcp"},
    # the scan pool and the log setup serve every layer and know none of them
    "indexer.scans": {"indexer.web", "indexer.index", "indexer.vault", "indexer.cli"},
    "indexer.logs": {"indexer.web", "indexer.index", "indexer.vault", "indexer.cli"},
}
# Only these may talk to SQLite directly.
SQLITE_OWNERS = ("indexer.index", "indexer.vault.history", "indexer.sqlite_lib", "bench")
SQLITE_MODULES = ("sqlite3", "sqlite_utils", "indexer.sqlite_lib")


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
        bad = sorted(n for n in names for m in SQLITE_MODULES if under(n, m))
        assert not bad, f"{name} talks to SQLite directly ({bad}); go through the index"


def test_shared_needs_only_stdlib_yaml_and_frontmatter() -> None:
    allowed = set(sys.stdlib_module_names) | {"yaml", "frontmatter", "shared"}
    for file in (ROOT / "shared").rglob("*.py"):
        extra = {n.split(".")[0] for n in imported(file)} - allowed
        if file.name == "reply_bound.py":  # the SDK's own HTTP library, for its hook
            extra -= {"httpx2"}
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


# agent_client's units (a top-level module, or the ``merge`` package), lowest first. A unit
# imports agent_client units of lower layers only (a package may import its own modules).
CLIENT_LAYERS: list[set[str]] = [
    {
        "settings",
        "discovery",
        "notes",
        "notices",
        "failures",
        "results",
        "transport_logs",
        "terminal",
        "interrupts",
        "unreachable",
        "reasons",
        "exit_codes",
        "off_loop",
        "inflight",
        "tls",
        "image_files",
    },
    {"repeats", "vault"},
    {"mcp_client"},
    {"connection"},
    {"sessions"},
    {"merge", "events", "actions", "claude_memory", "leftovers"},
    {"entry_writing"},
    {"writer"},
    {"hooks", "cli_history", "cli_query", "cli_submit"},
    {"cli"},
    {"command"},  # (imports the CLI inside its Ctrl-C guard)
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


def test_only_the_claude_memory_backend_imports_anthropic() -> None:
    """The Anthropic SDK is the optional ``claude`` extra: nothing else may need it."""
    for path in python_files("indexer", "agent_client", "shared"):
        name = module_name(path)
        uses = sorted(n for n in imported(path) if under(n, "anthropic"))
        if uses and not under(name, "agent_client.claude_memory"):
            raise AssertionError(f"{name} imports {uses}: only agent_client.claude_memory may")


# Where ``agent-client`` starts: what these import as they load comes before every answer.
CLI_START = ("agent_client.command", "agent_client.cli")
# Imported when used (a session opening, a model merge): over a second and 0.5 s.
NOT_AT_CLI_START = ("fastmcp", "mcp", "openai")


def loaded_with(path: Path) -> set[str]:
    """What ``path`` imports as it loads: not in functions (run later), nor under ``if
    TYPE_CHECKING:`` (type hints only). Absolute names (agent_client and shared use no
    relative imports)."""
    names: set[str] = set()
    todo: list[ast.AST] = [ast.parse(path.read_text(), str(path))]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING"):
            todo += node.orelse
        elif not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            todo += ast.iter_child_nodes(node)
    return names


def source_of(name: str) -> Path | None:
    """The file of our module (or package) ``name``; None for another's."""
    base = ROOT.joinpath(*name.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def test_the_cli_start_imports_no_sdk() -> None:
    """``agent-client --help`` took 3 s, 2 of them fastmcp, the MCP SDK and openai, which
    only a session (``agent_client.connection``) or a model merge (``merge.llm``) needs."""
    seen: dict[str, str] = {}  # our module -> the one that imported it first
    todo = [(name, "") for name in CLI_START]
    while todo:
        name, by = todo.pop()
        if name in seen:
            continue
        seen[name] = by
        path = source_of(name)
        assert path is not None, name
        for imported_name in sorted(loaded_with(path)):
            bad = [sdk for sdk in NOT_AT_CLI_START if under(imported_name, sdk)]
            assert not bad, f"{name} (imported by {by or 'the script'}) imports {imported_name}"
            parts = imported_name.split(".")
            for end in range(1, len(parts) + 1):  # a package's __init__ loads first
                ours = ".".join(parts[:end])
                if parts[0] in {"agent_client", "shared"} and source_of(ours) is not None:
                    todo.append((ours, name))
