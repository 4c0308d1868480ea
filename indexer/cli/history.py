"""``indexer history --lang L PATH``: a file's versions from the shell.

Reads ``W/.indexer/history/`` directly and read-only, with or without a running server
(WAL lets readers share the file); ``--show N`` prints the text of version N, which
is how a text can be recovered without a server (with ``--json``: as the read tool gives
that version).
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
from typing import Any

from indexer.cli import resolve_workspace
from indexer.vault import fsops
from indexer.vault.history.store import HistoryStore
from indexer.vault.sandbox import Sandbox
from indexer.vault.timeline import check_file
from shared.cli_usage import whole_number
from shared.counted import file_in_vault, versions_said
from shared.errors import NotFoundError
from shared.langs import check_lang
from shared.terminal_text import for_terminal, is_terminal


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    history = commands.add_parser(
        "history",
        parents=[common],
        help="the versions of a vault file (also of a deleted one)",
        description="Print the recorded versions of one file of a vault, newest first.",
    )
    history.add_argument("--lang", required=True, help="vault id, e.g. en, ja, zh-Hans")
    history.add_argument("path", metavar="PATH", help="vault-relative path, e.g. items/go.md")
    history.add_argument(
        "--limit", type=whole_number(1, 1000), default=20, help="versions to list (default 20)"
    )
    history.add_argument(
        "--show",
        type=whole_number(1),
        metavar="N",
        help="print the text of version N (with --json: the read tool's result for it)",
    )
    history.add_argument("--json", action="store_true", help="print the tool's JSON result")
    history.set_defaults(func=cmd_history)


def cmd_history(args: argparse.Namespace) -> int:
    workspace = resolve_workspace(args, existing=True)
    lang = check_lang(args.lang)
    sandbox = Sandbox(workspace)
    target = sandbox.resolve_file(lang, args.path, summary=True)  # as the history tool
    path = target.rel
    store = HistoryStore(workspace.history_dir, fsops.etag_of, readonly=True)
    rows = []
    if store.path.exists():  # else no server has served here yet: no version of anything
        try:
            store.open()
            if args.show is not None:
                return _show(store, lang, path, args.show, args.json)
            rows = store.versions(lang, path, args.limit)
        finally:
            store.close()
    elif args.show is not None:
        check_file(sandbox, target)
        raise NotFoundError(f"{file_in_vault(path, lang)} has no version {args.show}")
    if not rows:  # why, as the history tool says it (a folder, a link, nothing there)
        check_file(sandbox, target)
    if args.json:
        result = {"path": path, "versions": [row.public() for row in rows]}
        print(json.dumps(result, ensure_ascii=False, indent=2))
        return 0
    if not rows:  # the file is there (as the tool answers: no versions yet)
        print(f"{file_in_vault(path, lang)}: no version recorded yet")
        return 0
    print(f"{file_in_vault(path, lang)}: {versions_said(len(rows), rows[0].version)}")
    for row in rows:
        size = "absent" if row.etag is None else f"{row.size} B"
        moved = f" (moved to {row.other_path})" if row.other_path and row.etag is None else ""
        moved = moved or (f" (moved from {row.other_path})" if row.other_path else "")
        reason = f"  {row.reason}" if row.reason else ""
        print(f"{row.version:>5}  {row.at}  {row.op:<8} {row.actor:<10} {size:>10}{moved}{reason}")
    return 0


def _show(store: HistoryStore, lang: str, path: str, number: int, as_json: bool) -> int:
    row = store.get(lang, path, number)
    if row is None:
        raise NotFoundError(f"{file_in_vault(path, lang)} has no version {number}")
    if row.blob is None:
        raise NotFoundError(
            f"at version {number}, {file_in_vault(path, lang)} did not exist ({row.op})"
        )
    data = store.content(row)
    if as_json:  # what the read tool answers for that version (as agent-client's --json)
        result = {"path": path, "etag": row.etag, "size": len(data), "mtime": row.at_ms / 1000}
        result["version"] = row.version
        try:
            result.update(content=data.decode("utf-8"), encoding="utf-8")
        except UnicodeDecodeError:
            result.update(content=base64.b64encode(data).decode("ascii"), encoding="base64")
        print(json.dumps(result, ensure_ascii=False, indent=2))
        return 0
    if is_terminal(sys.stdout):  # a note's escape sequences shown, not obeyed
        sys.stdout.write(for_terminal(data.decode("utf-8", "backslashreplace"), sys.stdout))
    else:
        sys.stdout.buffer.write(data)  # (its exact bytes, to a file or a pipe)
    sys.stdout.flush()
    return 0
