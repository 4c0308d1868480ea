"""``indexer reindex | status | search``: the index from the command line.

They open ``W/.indexer/index.sqlite`` directly, with or without a running server (WAL
lets readers share the file). ``reindex`` refuses while a server holds the workspace
lock; ``search`` without a server first brings the index up to date with disk (and history
records what changed, as the server's start would have).
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any, TextIO

from indexer.cli import resolve_workspace
from indexer.health import server_health
from indexer.index.search_filters import search_filters
from indexer.index.service import NoteIndex
from indexer.vault.names import skips_unsaid
from indexer.vault.sandbox import clean_relpath
from indexer.vault.unreachable import unreachable_vaults
from shared.cli_usage import said_of_os_error, whole_number
from shared.counted import counted
from shared.errors import AlreadyRunningError, IndexSchemaError, VaultError
from shared.langs import check_lang, no_notes_said
from shared.models import MAX_SEARCH_LIMIT
from shared.terminal_text import for_terminal
from shared.utf8 import check_text
from shared.workspace import Workspace, lock_pid, older_server, read_url_file, server_serving


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add ``reindex``, ``status`` and ``search`` to the ``indexer`` CLI."""
    reindex = commands.add_parser(
        "reindex",
        parents=[common],
        help="rebuild the search index from the vaults (stop the server first)",
        description=(
            "Rebuild the search index from the vaults' files (the notes are the truth; the "
            "index is derived). Refused while an indexer serves the workspace: stop it first."
        ),
    )
    reindex.set_defaults(func=cmd_reindex)

    status = commands.add_parser(
        "status",
        parents=[common],
        help="notes per vault, index size, whether a server runs",
        description=(
            "Print the notes per vault, the index's size and state, and whether an indexer "
            "serves the workspace (asked while one runs; read from the index file otherwise)."
        ),
    )
    status.add_argument("--json", action="store_true", help="print one JSON object")
    status.set_defaults(func=cmd_status)

    search = commands.add_parser(
        "search",
        parents=[common],
        help="full-text search of one vault, from the shell",
        description=(
            "Full-text search of one vault. While an indexer serves the workspace, it is "
            "asked (over its REST API), so appends it has not written to the index yet are "
            "found; otherwise the index file is read."
        ),
    )
    search.add_argument("--lang", required=True, help="vault id, e.g. en, ja, zh-Hans")
    search.add_argument("query", nargs="+", metavar="QUERY", help='words, "phrases", datab*')
    search.add_argument(
        "--limit",
        type=whole_number(1, MAX_SEARCH_LIMIT),
        default=10,
        help=f"results, 1-{MAX_SEARCH_LIMIT} (default 10)",
    )
    search.add_argument(
        "--offset", type=whole_number(0), default=0, help="skip this many results (paging)"
    )
    search.add_argument("--type", help="only notes of this frontmatter type")
    search.add_argument("--tag", action="append", default=[], help="required tag (repeatable)")
    search.add_argument("--path", default="", help="only notes below this folder")
    search.add_argument("--json", action="store_true", help="print the tool's JSON result")
    search.set_defaults(func=cmd_search)


_SEARCH_VALUES = frozenset(
    {"--workspace", "--lang", "--limit", "--offset", "--type", "--tag", "--path"}
)


def minus_words_as_query(argv: list[str]) -> list[str]:
    """``indexer search python -java``: a word after a minus belongs to the query (it
    leaves the notes holding it out), not an option argparse does not know (which it
    refused); a leading space makes argparse take it as the query's (the query's words
    are joined and split on white space again)."""
    if not argv or argv[0] != "search":
        return argv
    from indexer.index.query_parse import LEFT_OUT

    out = argv[:1]
    for before, arg in itertools.pairwise(argv):
        if "--" in out or before in _SEARCH_VALUES or arg == "-h":
            out.append(arg)
        else:
            out.append(" " + arg if LEFT_OUT.match(arg) else arg)
    return out


def server_holds_lock(workspace: Workspace) -> bool:
    """True when ``indexer serve`` serves the workspace right now (its serving lock: a
    command such as ``reindex`` holds the workspace lock too, beside a URL file a crashed
    server left, and the port it names may be some other program's by now)."""
    return server_serving(workspace) is True


def lock_unless_served(workspace: Workspace) -> contextlib.ExitStack | None:
    """The workspace lock, held until the stack returned is closed, for a command that
    writes the index or history itself; None when a server holds it. Looked at and taken
    in one step: a server that started between a look and the command's writes made two
    processes writing one index and one history. ``AlreadyRunningError`` when another
    command holds it (looked at twice: a server takes its serving lock just after)."""
    from indexer.workspace_lock import workspace_lock

    for attempt in range(2):
        stack = contextlib.ExitStack()
        try:
            stack.enter_context(workspace_lock(workspace))
        except AlreadyRunningError:
            if server_holds_lock(workspace):
                return None
            if attempt == 1:
                raise
            continue
        return stack
    raise AssertionError("unreachable")


# -- reindex -------------------------------------------------------------------------------


def _record_changes_first(workspace: Workspace) -> None:
    """Have history record what changed in the vaults since the index last saw them (and
    the texts those changes replaced, from the index's copy), as a start would, before
    the index that holds those texts is rebuilt: a note another program overwrote or
    deleted while no indexer ran could not be restored after a reindex."""
    index = NoteIndex(workspace)
    try:
        _reconcile_heard(workspace, index)
    except IndexSchemaError:  # a newer index: the rebuild says so
        pass
    finally:
        index.close()


def _reconcile_heard(workspace: Workspace, index: NoteIndex) -> None:
    """Open ``index`` and reconcile it with disk while history records what it finds
    changed outside the tools (``wiring.history_hearing``), for a command run while no
    server does."""
    from indexer.settings import Settings
    from indexer.wiring import history_hearing

    try:
        settings = Settings.resolve({"workspace": str(workspace.root)}, os.environ)
    except ValueError:  # a setting the command does not use: history's defaults do
        settings = Settings(workspace=workspace)
    with history_hearing(settings, index):
        index.open()
        index.reconcile()


def cmd_reindex(args: argparse.Namespace) -> int:
    workspace = resolve_workspace(args, existing=True)
    held = lock_unless_served(workspace)  # (held to the end: no server starts meanwhile)
    if held is None:  # exit 3, as ``serve`` says it (``indexer --help``)
        raise AlreadyRunningError(
            f"a server is running on {workspace.root} (it holds {workspace.lock_path}); "
            "stop it first (it keeps its index current itself)"
        )
    index = NoteIndex(workspace)
    with held:
        _record_changes_first(workspace)
        try:
            index.open()
            line = "{done}/{total} files (notes and folder summaries)"
            with progress_display(sys.stderr, "indexing files", "reindex", line) as show:
                stats = index.rebuild(show)
            notes = sum(index.counts().values())  # as status counts them: summaries apart
        finally:
            index.close()
    summaries = stats.added - notes
    also = f" and {counted(summaries, 'folder summary', 'folder summaries')}" if summaries else ""
    print(
        f"indexed {counted(notes, 'note')}{also} in {stats.seconds:.1f}s ({workspace.index_path})"
    )
    for lang, path, reason in stats.invalid:
        print(f"  {lang}/{path}: {reason}")
    return 0


@contextlib.contextmanager
def progress_display(
    stream: TextIO, task: str, command: str, line: str
) -> Iterator[Callable[[int, int], None]]:
    """A rich progress bar on a terminal, else plain lines about every 2 s: ``line``
    formatted with ``done`` and ``total``, after ``indexer <command>:`` as the command's
    refusals and notices are (a log of several commands tells whose line it is)."""
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
            task_id = bar.add_task(task, total=None)
            yield lambda done, total: bar.update(task_id, completed=done, total=total)
        return
    last = [0.0]

    def plain(done: int, total: int) -> None:
        now = time.monotonic()
        if done == total or now - last[0] >= 2.0:
            last[0] = now
            said = line.format(done=done, total=total)
            print(f"indexer {command}: {said}", file=stream, flush=True)

    yield plain


# -- status --------------------------------------------------------------------------------


def cmd_status(args: argparse.Namespace) -> int:
    with skips_unsaid():  # (its report names them: not each again on stderr)
        return _status(args)


def _status(args: argparse.Namespace) -> int:
    workspace = resolve_workspace(args, existing=True)  # a typo is no empty workspace
    try:  # (a garbled or unreadable URL file is said of the server: status goes on)
        url, url_problem = read_url_file(workspace.url_file), ""
    except OSError as err:
        url, url_problem = None, said_of_os_error(err)
    health = server_health(url, workspace) if url else None
    report: dict[str, Any] = {
        "workspace": str(workspace.root),
        "server": {
            "running": health is not None,
            "url": url if health else None,
            # what the server knows: a read-only look at the file cannot tell
            "index_ready": health.get("index_ready") if health else None,
            "index_partial": health.get("index_partial") if health else None,
            "unreadable_vaults": health.get("unreadable_vaults", {}) if health else None,
        },
        "index": None,
    }
    if workspace.index_path.exists():
        index = NoteIndex(workspace)
        try:
            index.open(readonly=True)
            report["index"] = {**index.info(), "langs": index.counts()}
        except Exception as err:  # an unreadable index is something to report, not a crash
            # (its words, not its code: "operational: " said nothing to a reader)
            said = err.message if isinstance(err, VaultError) else str(err)
            report["index"] = {"error": said}
        finally:
            index.close()
    report["unreachable"] = unreachable_vaults(workspace)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    _say(f"workspace: {workspace.root}")
    if health:
        _say(f"server: running at {url} (version {health.get('version', '?')})")
        kept_out = health.get("unreadable_vaults") or {}
        for lang, why in kept_out.items():
            _say(f"server: the vault {lang} cannot be read ({why}): its notes may be out of date")
        if health.get("index_partial") and not kept_out:
            _say("server: its index is still catching up with disk (searches may miss notes)")
    elif (older := older_server(workspace)) is not None:
        _say(
            f"server: an indexer serve (pid {older}) runs without a serving lock (started"
            " before an upgrade, or its serving file deleted): clients call it stopped;"
            " stop it and start it again"
        )
    elif server_serving(workspace):  # (a hung or stopped one: `serve` is refused too)
        pid = lock_pid(workspace)
        _say(
            f"server: not answering: an indexer serve{f' (pid {pid})' if pid.isdigit() else ''}"
            " holds this workspace but did not answer within 2 s (starting, very busy,"
            " stopped or hung): wait, let it go on (kill -CONT), or stop it and start again"
        )
    elif url_problem:
        _say(f"server: not running ({url_problem})")
    elif url:
        _say(
            f"server: not running ({workspace.url_file.name} is stale: no indexer of this "
            f"workspace answers at {url})"
        )
    else:
        _say("server: not running")
    info = report["index"]
    if info is None:
        _say("index: none yet (run `indexer reindex` or start the server)")
    elif "error" in info:
        _say(f"index: unreadable ({info['error']})")
    else:
        _say(f"index: {info['size_bytes'] / 1e6:.1f} MB, {counted(info['notes'], 'note')}")
        _say(f"last reconcile: {info['last_reconcile'] or 'never'}")
        if info["problems"]:
            _say(f"files with problems: {info['problems']}")
        for lang, count in info["langs"].items():
            _say(f"  {lang}: {counted(count, 'note')}")
    for lang, found in report["unreachable"].items():
        # (quoted as they are: already printable, a repr doubled each escape's backslash)
        names = ", ".join(f"'{name}'" for name in found["sample"])
        more = " at least" if found["partial"] else ""
        _say(
            f"unreachable in {lang}:{more} {found['count']} files or folders no tool can"
            f" list, search or read (a name the vault refuses, or too deep): {names}; rename"
            " or move them"
        )
    return 0


def _say(line: str) -> None:
    """A line of ``status``'s report, escaped on a terminal: it quotes the workspace's
    path, the server's words and a URL file's."""
    print(for_terminal(line, sys.stdout))


# -- search --------------------------------------------------------------------------------


def search_index_file(
    workspace: Workspace, lang: str, query: str, *, serving: bool, **options: Any
) -> dict:
    """Search the index file: read-only beside a server (or in a read-only workspace),
    else after a reconcile with disk (history records the edits it finds, as the
    server's start would have)."""
    index = NoteIndex(workspace)
    held = None
    try:
        if not serving and os.access(workspace.root, os.W_OK):
            with contextlib.suppress(AlreadyRunningError):  # another command writes it
                held = lock_unless_served(workspace)  # None: a server started since
        if held is None:
            index.open(readonly=True)
            return index.search(lang, query, **options)
        _reconcile_heard(workspace, index)
        return index.search(lang, query, **options)
    finally:
        index.close()
        if held is not None:
            held.close()


def langs_with_notes(workspace: Workspace) -> list[str]:
    """The vaults the index holds notes of (none without an index file)."""
    if not workspace.index_path.exists():
        return []
    index = NoteIndex(workspace)
    try:
        index.open(readonly=True)
        return sorted(lang for lang, notes in index.counts().items() if notes)
    except Exception:  # (only a word of help: an index it cannot read names none)
        return []
    finally:
        index.close()


def cmd_search(args: argparse.Namespace) -> int:
    with skips_unsaid():  # (no report on the vault: indexer status names those paths)
        return _search(args)


def _search(args: argparse.Namespace) -> int:
    workspace = resolve_workspace(args, existing=True)
    lang = check_lang(args.lang)
    query = " ".join(args.query)
    options: dict[str, Any] = {
        "limit": args.limit,
        "type": args.type,
        "tags": args.tag or None,
        "path": clean_relpath(args.path, allow_root=True),  # as the server checks it
        "offset": args.offset,
    }
    # Refused as the index refuses them, before a server is asked: a byte that is not
    # UTF-8 (a lone surrogate in argv) failed to go into its URL (UnicodeEncodeError).
    check_text("the query", query)
    search_filters(options["type"], options["tags"], options["path"])
    serving = server_holds_lock(workspace)
    from indexer.cli.remote import search_on_server  # (urllib: 30 ms of `serve`'s start)

    result = search_on_server(workspace, args.lang, query, **options) if serving else None
    if result is None:  # no server, or none answering: the index file itself
        result = search_index_file(workspace, args.lang, query, serving=serving, **options)
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=2))
        return 0
    if result["partial"]:
        print("(the index is still catching up with disk: results may be partial)")
    if not result["results"] and args.offset:
        print(f"no more results past {args.offset}")
    elif not result["results"]:  # a vault not made yet has none, as the tools answer it
        with_notes = langs_with_notes(workspace)
        print(
            "no notes match"
            + ("" if lang in with_notes else ". " + no_notes_said(lang, with_notes))
        )
    elif "total" in result:
        shown = f"{args.offset + 1}-{args.offset + len(result['results'])}"
        matches = "note matches" if result["total"] == 1 else "notes match"
        print(f"{result['total']} {matches}; showing {shown}")
    for hit in result["results"]:  # (a note's escape sequences shown, not obeyed)
        print(for_terminal(f"{hit['score']:8.3f}  {hit['path']}  {hit['title']}", sys.stdout))
        print(for_terminal(f"          {hit['snippet']}", sys.stdout))
    return 0
