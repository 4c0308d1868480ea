"""Start-up does only what the first answer needs (issue 15: exec to URL file).

fastmcp and the MCP SDK cost most of a start and cannot wait; these modules can, and
each cost tens of milliseconds when they crept in: griffe (fastmcp parses a tool's
docstring with it), markdown-it and nh3 (the browser page's renderer), websockets
(uvicorn's "auto" WebSocket support), sqlite-utils (an empty start's new index: plain
DDL now) and watchdog (the file watcher, which starts once serving). A fresh interpreter
builds the server exactly as ``indexer serve`` does, on an empty workspace, and reports
what it imported. The cyclic garbage collector is
off while the server starts, and must be on again once it serves.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from fastmcp import Client

from indexer.daemon import build_core
from indexer.settings import Settings
from indexer.web.mcp import create_server

DEFERRED = (
    "griffe",
    "markdown_it",
    "nh3",
    "websockets",
    "wsproto",
    "sqlite_utils",
    "watchdog",
)

BUILD = """
import json, os, sys
from indexer.daemon import build_core, uvicorn_config
from indexer.settings import Settings
from indexer.web.app import build_app

settings = Settings.resolve({"workspace": sys.argv[1]}, os.environ)
core = build_core(settings, check=False)
uvicorn_config(build_app(core), settings).load()
core.index.close()
print(json.dumps(sorted(name for name in sys.modules if name.split(".")[0] in sys.argv[2:])))
"""


def test_serving_imports_none_of_the_deferred_modules(tmp_path: Path) -> None:
    args = [sys.executable, "-c", BUILD, str(tmp_path / "ws"), *DEFERRED]
    out = subprocess.run(args, capture_output=True, text=True, check=True, timeout=60)
    assert json.loads(out.stdout) == []


# Maintenance (off by default) and the other commands' parsers: 30-45 ms of a start that
# needs none of them. ``serve``'s parser is built as ``main`` builds it.
MAINTENANCE = (
    "indexer.jobs.maintenance",
    "indexer.jobs.maintenance_answer",
    "indexer.jobs.maintenance_extract",
    "indexer.jobs.maintenance_input",
    "indexer.jobs.maintenance_output",
    "indexer.jobs.maintenance_state",
    "indexer.jobs.model_tools",
)
OTHER_COMMANDS = tuple(
    f"indexer.cli.{name}"
    for name in ("index", "history", "summarize", "maintain", "client_config", "open")
)
SERVE_ONLY = """
import json, os, sys
from indexer.cli import build_parser
from indexer.daemon import build_core, uvicorn_config
from indexer.settings import Settings
from indexer.web.app import build_app

args = build_parser("serve").parse_args(["serve", "--workspace", sys.argv[1]])
settings = Settings.resolve(vars(args), os.environ)
core = build_core(settings, check=False)
uvicorn_config(build_app(core), settings).load()
started = sorted(set(sys.argv[2:]) & set(sys.modules))
assert core.maintenance is not None
status = core.maintenance().status()  # (built at its first use)
core.index.close()
print(json.dumps({"started": started, "first use": len(status)}))
"""


def test_serving_imports_no_maintenance_nor_other_commands(tmp_path: Path) -> None:
    names = (*MAINTENANCE, *OTHER_COMMANDS)
    args = [sys.executable, "-c", SERVE_ONLY, str(tmp_path / "ws"), *names]
    out = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"started": [], "first use": 0}


def test_a_new_index_has_the_tables_sqlite_utils_made(tmp_path: Path) -> None:
    """The new index's tables are written as plain DDL (no sqlite-utils at the start):
    ``sqlite_master`` reads as it did when sqlite-utils made them, text for text."""
    import sqlite_utils

    from indexer.index import schema
    from indexer.sqlite_lib import sqlite3

    made = schema.open_index(tmp_path / "index.db")
    old = sqlite3.connect(tmp_path / "old.db", isolation_level=None)
    db = sqlite_utils.Database(old)
    text = ("lang", "path", "title", "abstract", "tags", "tag_keys", "frontmatter", "body")
    db["notes"].create(  # type: ignore[union-attr]
        {
            "id": int,
            **{name: str for name in ("lang", "path", "title", "type", "type_key")},
            **{name: str for name in ("abstract", "tags", "tag_keys", "frontmatter")},
            **{name: str for name in ("body", "head")},
            **{name: int for name in ("joined", "exact", "size", "mtime_ns", "ctime_ns")},
            **{name: int for name in ("mode", "gid")},
            "hash": str,
            "problem": str,
        },
        pk="id",
        not_null={*text, "head", "hash"},
    )
    db["notes"].create_index(["lang", "path"], unique=True)  # type: ignore[union-attr]
    db["notes"].create_index(  # type: ignore[union-attr]
        ["lang", "path", "size", "mtime_ns", "ctime_ns", "exact", "type", "abstract"],
        index_name="notes_stat",
    )
    old.execute(f"CREATE INDEX notes_overviews ON notes (lang) WHERE {schema.OVERVIEW_ROWS}")
    db["state"].create({"key": str, "value": str}, pk="key")  # type: ignore[union-attr]
    old.execute(schema._WORDS_DDL)
    old.execute(schema._TRIGRAMS_DDL)
    old.execute(schema.BEFORES_DDL)
    listed = "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY rowid"
    try:
        assert made.execute(listed).fetchall() == old.execute(listed).fetchall()
        assert made.execute("PRAGMA user_version").fetchone() == (schema.SCHEMA_VERSION,)
    finally:
        made.close()
        old.close()


async def test_tool_descriptions_are_what_fastmcp_would_have_parsed(tmp_path: Path) -> None:
    """The Registrar passes each docstring as the description and hides it from fastmcp.
    Had fastmcp parsed it (griffe), it would have given the same text and no parameter
    descriptions, since ours come from ``Field(description=...)``: nothing changes for a
    client."""
    from fastmcp.utilities.docstring_parsing import parse_docstring

    settings = Settings.resolve({"workspace": str(tmp_path / "ws")}, {})
    core = build_core(settings, check=False)
    try:
        async with Client(create_server(core)) as client:
            tools = await client.list_tools()
    finally:
        core.index.close()
    assert {"read", "write", "grep", "history", "recall"} <= {tool.name for tool in tools}
    for tool in tools:

        def documented() -> None: ...

        documented.__doc__ = tool.description
        parsed = parse_docstring(documented)
        assert tool.description and parsed.description == tool.description, tool.name
        assert parsed.parameters == {}, tool.name


SERVE = """
import gc, os, signal, sys, threading, time
from pathlib import Path
from indexer.cli import main

url_file = Path(sys.argv[1]) / "indexer.mcp.url"


def watch() -> None:
    while not url_file.exists():
        time.sleep(0.005)
    deadline = time.monotonic() + 10
    while not gc.isenabled() and time.monotonic() < deadline:
        time.sleep(0.005)
    print("collector on once serving:", gc.isenabled(), flush=True)
    os.kill(os.getpid(), signal.SIGINT)


threading.Thread(target=watch, daemon=True).start()
sys.exit(main(["serve", "--workspace", sys.argv[1]]))
"""


def test_the_garbage_collector_is_on_again_once_serving(tmp_path: Path) -> None:
    args = [sys.executable, "-c", SERVE, str(tmp_path / "ws")]
    done = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "collector on once serving: True" in done.stdout


COMMAND = """
import json, sys
from indexer.cli import main
code = main(sys.argv[1:])
print(json.dumps(sorted({name.split(".")[0] for name in sys.modules} & {"fastmcp", "uvicorn"})))
"""


def test_commands_without_a_server_import_no_web_stack(tmp_path: Path) -> None:
    """``indexer search``, ``summarize``, ``reindex`` and ``maintain`` while no server
    serves reached history's wiring through the daemon, which imports fastmcp and
    uvicorn: 1.2 s of a 2 s run (now 0.3-0.5 s)."""
    workspace = tmp_path / "ws"
    vault = workspace / "memory" / "languages" / "en" / "vault"
    vault.mkdir(parents=True)
    (vault / "a.md").write_text("# A\n\nan apple\n")
    for command in (
        ["search", "--lang", "en", "apple"],
        ["summarize"],
        ["reindex"],
        ["maintain", "--status"],
    ):
        args = [sys.executable, "-c", COMMAND, command[0], "--workspace", str(workspace)]
        out = subprocess.run([*args, *command[1:]], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, (command, out.stderr)
        assert json.loads(out.stdout.splitlines()[-1]) == [], command


# Our own share of a start (issue 15): recall's keyword extraction (its word tables) and
# the patterns of the first search, snippet or recall past ASCII cost 60-100 ms of every
# start when built at import; they are built once the server serves (``after_start``,
# on a thread) or at their first use.
OURS_DEFERRED = ("indexer.jobs.keywords", "indexer.jobs.han_keywords", "indexer.jobs.stop_words")
LAZY = """
import json, os, sys
from indexer.cli import build_parser
from indexer.daemon import build_core, uvicorn_config
from indexer.warm_up import after_start
from indexer.index import query, snippet_view, text
from indexer import canonical
from indexer.jobs import secrets, tokens
from indexer.settings import Settings
from indexer.web.app import build_app

builders = {
    "folded spellings": query.folded_spellings,
    "heavy runs": tokens.heavy_runs,
    "long mark run": canonical._long_mark_run,
    "what nfc may change": canonical._may_change,
    "loose table": text._loose_table,
    "newer symbols": text._newer_symbols,
    "view patterns": snippet_view.view_patterns,
    "secrets": secrets._compiled,
}


def report() -> dict:
    built = sorted(name for name, builder in builders.items() if builder.cache_info().currsize)
    return {"modules": sorted(set(sys.argv[2:]) & set(sys.modules)), "built": built}


build_parser()
settings = Settings.resolve({"workspace": sys.argv[1]}, os.environ)
core = build_core(settings, check=False)
uvicorn_config(build_app(core), settings).load()
started = report()
after_start(settings.workspace)
print(json.dumps({"started": started, "serving": report()}))
core.index.close()
"""


def test_our_deferred_work_waits_for_serving(tmp_path: Path) -> None:
    args = [sys.executable, "-c", LAZY, str(tmp_path / "ws"), *OURS_DEFERRED]
    out = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["started"] == {"modules": [], "built": []}
    # Once serving, the first search or recall waits for none of it (maintenance's
    # secret patterns wait for its first run, in the background).
    assert report["serving"] == {
        "modules": sorted(OURS_DEFERRED),
        "built": sorted(
            [
                "folded spellings",
                "heavy runs",
                "long mark run",
                "loose table",
                "newer symbols",
                "view patterns",
                "what nfc may change",
            ]
        ),
    }
