"""``agent-client``: the Memory Writer and the vault tools from a shell.

Each command waits for completion and prints what was written (``--json`` for machines).
Exit codes: 0 done, 1 refused or failed, 2 bad usage, 3 indexer offline.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
from collections.abc import Sequence
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

from agent_client.connection import mcp_vault_connection
from agent_client.notices import CollectingNoticeSink, SystemNotice
from agent_client.settings import ClientSettings
from agent_client.writer import MemoryWriter
from shared.errors import IndexerOfflineError, VaultError
from shared.models import Action, DeleteAction, EditAction, MemoryEntry


def _parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--workspace", help="workspace W (env AGENT_CLIENT_WORKSPACE)")
    common.add_argument("--json", action="store_true", help="print JSON")
    common.add_argument("--log-level", default="WARNING")
    lang = argparse.ArgumentParser(add_help=False)
    lang.add_argument("--lang", required=True, help="vault id, e.g. en, ja, zh-Hans")

    parser = argparse.ArgumentParser(prog="agent-client", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for name, help_text in (
        ("remember", "merge a piece of knowledge into the vault"),
        ("event", "log an event in the day file"),
    ):
        cmd = sub.add_parser(name, parents=[common, lang], help=help_text)
        cmd.add_argument("--title", required=True)
        cmd.add_argument("--tag", action="append", default=[], dest="tags")
        cmd.add_argument("--at", help="ISO 8601 timestamp with zone (default: now)")
        cmd.add_argument("text", help="the content, or - to read it from stdin")
        if name == "remember":
            cmd.add_argument("--image", action="append", default=[], dest="images")
            cmd.add_argument("--no-llm", action="store_true", help="merge deterministically")
    edit = sub.add_parser("edit", parents=[common, lang], help="edit a note (id/created kept)")
    edit.add_argument("path")
    edit.add_argument("--body", help="the new body, or - for stdin")
    edit.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    edit.add_argument("--unset", action="append", default=[], metavar="KEY")
    delete = sub.add_parser("delete", parents=[common, lang], help="delete a note")
    delete.add_argument("path")
    search = sub.add_parser("search", parents=[common, lang], help="search the vault")
    search.add_argument("query")
    search.add_argument("--limit", type=int, default=10)
    read = sub.add_parser("read", parents=[common, lang], help="print a vault file")
    read.add_argument("path")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    try:
        flags: dict[str, object] = {"workspace": args.workspace}
        if getattr(args, "no_llm", False):
            flags["llm"] = "off"
        settings = ClientSettings.resolve(flags, os.environ)
        return _run(args, settings)
    except IndexerOfflineError as exc:
        print(f"agent-client: {exc}", file=sys.stderr)
        return 3
    except ValueError as exc:  # before VaultError: a bad lang is both, and bad usage
        print(f"agent-client: {exc}", file=sys.stderr)
        return 2
    except VaultError as exc:
        print(f"agent-client: {exc}", file=sys.stderr)
        return 1


def _run(args: argparse.Namespace, settings: ClientSettings) -> int:
    if args.command in ("remember", "event"):
        return _submit(args, settings)
    if args.command in ("edit", "delete"):
        return _action(args, settings)
    return asyncio.run(_query(args, settings))


def _text(value: str) -> str:
    return sys.stdin.read() if value == "-" else value


def _submit(args: argparse.Namespace, settings: ClientSettings) -> int:
    entry = MemoryEntry(
        lang=args.lang,
        kind="knowledge" if args.command == "remember" else "event",
        title=args.title,
        content=_text(args.text),
        tags=args.tags,
        timestamp=datetime.fromisoformat(args.at) if args.at else datetime.now(UTC),
        images=getattr(args, "images", []),
    )
    sink = CollectingNoticeSink()
    writer = MemoryWriter(settings, sink)
    writer.submit([entry])
    budget = (settings.llm.timeout if settings.llm else 0) + 4 * settings.call_timeout
    finished = writer.flush(budget)
    writer.close(1.0)
    if not finished or not sink.notices:
        print("agent-client: the writer did not finish in time", file=sys.stderr)
        return 1
    notice = sink.notices[-1]
    _print_notice(notice, args.json)
    if notice.ok:
        return 0
    return 3 if (notice.error or "").startswith("indexer_offline") else 1


def _print_notice(notice: SystemNotice, as_json: bool) -> None:
    if as_json:
        print(json.dumps(asdict(notice), ensure_ascii=False))
    elif notice.ok:
        print(notice.update_summary)
        for path in notice.updated_files:
            print(f"  {path}")
    else:
        print(f"failed: {notice.error}", file=sys.stderr)


def _action(args: argparse.Namespace, settings: ClientSettings) -> int:
    action: Action
    if args.command == "delete":
        action = DeleteAction(args.lang, args.path)
    else:
        frontmatter: dict[str, Any] = {}
        for item in args.set:
            key, sep, value = item.partition("=")
            if not sep or not key:
                raise ValueError(f"--set wants KEY=VALUE, not {item!r}")
            frontmatter[key] = value
        frontmatter.update({key: None for key in args.unset})
        body = _text(args.body) if args.body is not None else None
        action = EditAction(args.lang, args.path, body=body, frontmatter=frontmatter or None)
    writer = MemoryWriter(settings)

    async def run() -> Any:
        return await writer.execute_action_async(action)

    try:
        result = asyncio.run(run())
    finally:
        writer.close(1.0)
    if args.json:
        print(json.dumps(asdict(result)))
    else:
        print(f"{'deleted' if result.deleted else 'edited'} {result.path}")
    return 0


async def _query(args: argparse.Namespace, settings: ClientSettings) -> int:
    async with mcp_vault_connection(args.lang, settings) as vault:
        if args.command == "read":
            result: Any = await vault.read(args.path)
            text = result["content"]
        elif await vault.has_search():
            result = await vault.search(args.query, limit=args.limit)
            text = "\n".join(f"{hit['path']}\t{hit['title']}" for hit in result["results"])
        else:  # an indexer without search: fall back to a case-insensitive grep
            result = await vault.grep(args.query, fixed=True, ignore_case=True, limit=args.limit)
            text = "\n".join(f"{m['path']}:{m['line']}: {m['text']}" for m in result["matches"])
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    elif text:
        print(text.rstrip("\n"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
