"""``agent-client history PATH`` and ``agent-client undo ENTRY_ID``: history from a shell.

``history`` lists a file's versions (newest first), prints one (``--show N``) or a
unified diff (``--diff N [--to M]``); ``undo`` puts back every file a memory entry
changed, all or nothing (``--dry-run`` only says what it would do). Both are thin layers
over the vault handle's ``history``/``read(version=)``/``diff``/``undo``; errors go up
to ``agent_client.cli``, which maps them to one line and an exit code (a refused undo,
``conflict``, exits 1 with the server's message). An undo sent whose answer never came
(the call timed out: an entry of 10,000 files takes the server longer) may have been
done, or still be under way: the message says so, not only that the indexer is offline.
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
from typing import Any

from agent_client.connection import mcp_vault_connection
from agent_client.reasons import undo_command
from agent_client.repeats import noting
from agent_client.results import HistoryResult, UndoResult, Version
from agent_client.settings import ClientSettings
from agent_client.terminal import for_terminal
from agent_client.vault import Vault
from shared.cli_usage import whole_number
from shared.counted import file_in_vault, versions_said
from shared.errors import IndexerOfflineError
from shared.models import ENTRY_ID_RE

MAX_LIMIT = 1000


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add the ``history`` and ``undo`` commands to the ``agent-client`` parser."""
    about = (
        "list a file's versions, newest first (version, time, operation, who, size, "
        "reason); print one, or the changes between two"
    )
    history = sub.add_parser("history", parents=[common], help=about, description=about)
    history.add_argument("path", help="the file, relative to the vault, e.g. items/go.md")
    history.add_argument(
        "--limit",
        type=whole_number(1, MAX_LIMIT),
        default=20,
        help=f"versions to list, 1-{MAX_LIMIT} (default: 20)",
    )
    which = history.add_mutually_exclusive_group()
    version = whole_number(1)  # versions are numbered 1, 2, 3... per path
    which.add_argument("--show", type=version, metavar="N", help="print the text of version N")
    which.add_argument(
        "--diff", type=version, metavar="N", help="print the changes from version N to now"
    )
    history.add_argument(
        "--to", type=version, metavar="M", help="with --diff: to version M instead of now"
    )
    about = (
        "undo what one memory entry wrote: each file it changed goes back to before it "
        "(one it created is deleted); refused, changing nothing, if anyone changed one "
        "of them since"
    )
    undo = sub.add_parser("undo", parents=[common], help=about, description=about)
    undo.add_argument("entry_id", metavar="ENTRY_ID", help="the id of the memory entry")
    undo.add_argument(
        "--dry-run", action="store_true", help="only print what would be undone; change nothing"
    )


async def run(args: argparse.Namespace, settings: ClientSettings, lang: str) -> int:
    """Run ``history`` or ``undo``; 0 when done (errors are raised)."""
    _check(args)
    async with mcp_vault_connection(lang, settings) as vault:
        if args.command == "undo":
            result: Any = await _undo(vault, args.entry_id, args.dry_run)
            text = undo_text(result)
        elif args.show is not None:
            return await _show(vault, args)
        elif args.diff is not None:
            result = await vault.diff(args.path, args.diff, args.to)
            text = result["diff"]
            if not text and not args.json:
                print("(no differences)", file=sys.stderr)
        else:
            result = await vault.history(args.path, args.limit)
            text = history_text(result, lang)
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    elif text:
        print(for_terminal(text.rstrip("\n"), sys.stdout))
    return 0


async def _undo(vault: Vault, entry_id: str, dry_run: bool) -> UndoResult:
    """The undo; one sent whose answer never came says that it may have been done."""
    with noting() as sending:
        try:
            return await vault.undo(entry_id, dry_run=dry_run)
        except IndexerOfflineError as exc:
            if not dry_run and not sending.never_sent:
                exc.message += (
                    f"; the undo was sent and may have been done, or still be under way:"
                    f" `{undo_command(entry_id)}` run again once the indexer answers"
                    " says 'already undone' if it was"
                )
                exc.args = (exc.message,)
            raise


def _check(args: argparse.Namespace) -> None:
    """Bad usage found before connecting (``ValueError``: exit 2)."""
    if args.command == "undo":
        if not ENTRY_ID_RE.fullmatch(args.entry_id):
            raise ValueError(
                f"{args.entry_id!r} is not an entry id (1-128 letters, digits and"
                " _ . : -, starting with a letter or digit)"
            )
        return
    if args.to is not None and args.diff is None:
        raise ValueError("--to goes with --diff N")


async def _show(vault: Vault, args: argparse.Namespace) -> int:
    """Version N's text as it was (an image's bytes as they were)."""
    result = await vault.read(args.path, version=args.show)
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    elif result.get("encoding") == "base64":
        sys.stdout.flush()
        sys.stdout.buffer.write(base64.b64decode(result["content"]))
        sys.stdout.buffer.flush()
    else:
        sys.stdout.write(for_terminal(result["content"], sys.stdout))
        sys.stdout.flush()
    return 0


def history_text(result: HistoryResult, lang: str) -> str:
    """One line per version, newest first, as ``indexer history`` prints them (the file
    named as it does, with its vault: the CLI's lang may come from the environment)."""
    rows = result["versions"]
    said = versions_said(len(rows), rows[0]["version"]) if rows else "no version recorded yet"
    lines = [f"{file_in_vault(result['path'], lang)}: {said}"]
    lines += [_version_line(row) for row in rows]
    return "\n".join(lines)


def _version_line(row: Version) -> str:
    size = "absent" if row["etag"] is None else f"{row['size']} B"
    moved = ""
    if "moved_to" in row:
        moved = f" (moved to {row['moved_to']})"
    elif "moved_from" in row:
        moved = f" (moved from {row['moved_from']})"
    reason = f"  {row['reason']}" if row["reason"] else ""
    return (
        f"{row['version']:>5}  {row['at']}  {row['op']:<8} {row['actor']:<10} "
        f"{size:>10}{moved}{reason}"
    )


def undo_text(result: UndoResult) -> str:
    """One line per file: back to which version, or deleted (the entry created it)."""
    dry = result["dry_run"]
    lines = []
    for done in result["files"]:
        # e.g. an image the entry placed, then moved ("unchanged": a server of this release)
        if done.get("unchanged") or (not dry and "version" not in done):
            state = "is" if dry else "was"
            lines.append(f"{done['path']} {state} already as before the entry")
        elif done["deleted"]:
            verb = "would delete" if dry else "deleted"
            lines.append(f"{verb} {done['path']} (the entry created it)")
        else:
            verb = "would restore" if dry else "restored"
            lines.append(f"{verb} {done['path']} to version {done['to_version']}")
    return "\n".join(lines)
