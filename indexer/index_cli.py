"""``indexer reindex | status | search``: the index from the command line.

They open ``W/.indexer/index.sqlite`` directly, with or without a running server (WAL
lets readers share the file). ``reindex`` refuses while a server holds the workspace
lock; ``search`` without a server first brings the index up to date with disk.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TextIO

from indexer.health import server_health
from indexer.index import IndexSchemaError, NoteIndex
from shared.errors import VaultError
from shared.workspace import Workspace


def register(subparsers: Any) -> None:
    """Add ``reindex``, ``status`` and ``search`` to the ``indexer`` CLI."""
    reindex = subparsers.add_parser("reindex", help="rebuild the search index from the vaults")
    _workspace_flag(reindex)
    reindex.set_defaults(func=cmd_reindex)

    status = subparsers.add_parser("status", help="notes per lang, index size, server state")
    _workspace_flag(status)
    status.add_argument("--json", action="store_true", help="print one JSON object")
    status.set_defaults(func=cmd_status)

    search = subparsers.add_parser("search", help="full-text search of one lang's notes")
    _workspace_flag(search)
    search.add_argument("--lang", required=True, help="vault id, e.g. en, ja, zh-Hans")
    search.add_argument("query", nargs="+", metavar="QUERY", help='words and "phrases"')
    search.add_argument("--limit", type=int, default=10, help="results, 1-100 (default 10)")
    search.add_argument("--type", help="only notes of this frontmatter type")
    search.add_argument("--tag", action="append", default=[], help="required tag (repeatable)")
    search.add_argument("--path", default="", help="only notes below this folder")
    search.add_argument("--json", action="store_true", help="print the tool's JSON result")
    search.set_defaults(func=cmd_search)


def _workspace_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--workspace", help="workspace folder W (env INDEXER_WORKSPACE)")


def _workspace(args: argparse.Namespace) -> Workspace:
    root = args.workspace or os.environ.get("INDEXER_WORKSPACE", "")
    if not root:
        raise ValueError("no workspace: pass --workspace W or set INDEXER_WORKSPACE")
    return Workspace(Path(root).expanduser().resolve())


def server_holds_lock(workspace: Workspace) -> bool:
    """True when a process (``indexer serve``) holds the workspace lock right now."""
    try:
        fd = os.open(workspace.lock_path, os.O_RDWR)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing releases a lock we took
    return False


def server_url(workspace: Workspace) -> str | None:
    try:
        return workspace.url_file.read_text(encoding="utf-8").strip() or None
    except FileNotFoundError:
        return None


# -- reindex -------------------------------------------------------------------------------


def cmd_reindex(args: argparse.Namespace) -> int:
    workspace = _workspace(args)
    if server_holds_lock(workspace):
        print(
            f"indexer reindex: a server is running on {workspace.root} (it holds "
            f"{workspace.lock_path}); stop it first (it keeps its index current itself)",
            file=sys.stderr,
        )
        return 1
    index = NoteIndex(workspace)
    try:
        index.open()
        with _progress(sys.stderr) as progress:
            stats = index.rebuild(progress)
    except IndexSchemaError as err:
        print(f"indexer reindex: {err}", file=sys.stderr)
        return 1
    finally:
        index.close()
    print(f"indexed {stats.added} notes in {stats.seconds:.1f}s ({workspace.index_path})")
    for lang, path, reason in stats.invalid:
        print(f"  {lang}/{path}: {reason}")
    return 0


@contextlib.contextmanager
def _progress(stream: TextIO) -> Iterator[Callable[[int, int], None]]:
    """A rich progress bar on a terminal, plain lines (about every 2 s) otherwise."""
    if stream.isatty():
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

        bar = Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=Console(file=stream),
            transient=True,
        )
        with bar:
            task = bar.add_task("indexing notes", total=None)
            yield lambda done, total: bar.update(task, completed=done, total=total)
        return
    last = [0.0]

    def plain(done: int, total: int) -> None:
        now = time.monotonic()
        if done == total or now - last[0] >= 2.0:
            last[0] = now
            print(f"reindex: {done}/{total} notes", file=stream, flush=True)

    yield plain


# -- status --------------------------------------------------------------------------------


def cmd_status(args: argparse.Namespace) -> int:
    workspace = _workspace(args)
    url = server_url(workspace)
    health = server_health(url) if url else None
    report: dict[str, Any] = {
        "workspace": str(workspace.root),
        "server": {"running": health is not None, "url": url if health else None},
        "index": None,
    }
    if workspace.index_path.exists():
        index = NoteIndex(workspace)
        try:
            index.open(readonly=True)
            report["index"] = {**index.info(), "langs": index.counts()}
        except Exception as err:  # an unreadable index is something to report, not a crash
            report["index"] = {"error": str(err)}
        finally:
            index.close()
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"workspace: {workspace.root}")
    if health:
        print(f"server: running at {url} (version {health.get('version', '?')})")
    elif url:
        print(f"server: not running ({workspace.url_file.name} is stale: {url})")
    else:
        print("server: not running")
    info = report["index"]
    if info is None:
        print("index: none yet (run `indexer reindex` or start the server)")
    elif "error" in info:
        print(f"index: unreadable ({info['error']})")
    else:
        print(f"index: {info['size_bytes'] / 1e6:.1f} MB, {info['notes']} notes")
        print(f"last reconcile: {info['last_reconcile'] or 'never'}")
        if info["problems"]:
            print(f"files with problems: {info['problems']}")
        for lang, count in info["langs"].items():
            print(f"  {lang}: {count} notes")
    return 0


# -- search --------------------------------------------------------------------------------


def cmd_search(args: argparse.Namespace) -> int:
    workspace = _workspace(args)
    index = NoteIndex(workspace)
    try:
        if server_holds_lock(workspace) or not os.access(workspace.root, os.W_OK):
            index.open(readonly=True)
        else:
            index.open()
            index.reconcile()
        result = index.search(
            args.lang,
            " ".join(args.query),
            limit=args.limit,
            type=args.type,
            tags=args.tag or None,
            path=args.path,
        )
    except VaultError as err:
        print(f"indexer search: {err}", file=sys.stderr)
        return 2
    except (IndexSchemaError, OSError) as err:
        print(f"indexer search: {err}", file=sys.stderr)
        return 1
    finally:
        index.close()
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=2))
        return 0
    if result["partial"]:
        print("(the index is still catching up with disk: results may be partial)")
    if not result["results"]:
        print("no notes match")
    for hit in result["results"]:
        print(f"{hit['score']:8.3f}  {hit['path']}  {hit['title']}")
        print(f"          {hit['snippet']}")
    return 0
