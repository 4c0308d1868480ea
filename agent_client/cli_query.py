"""``agent-client read``, ``search`` and ``recall``: one tool call each, printed as text
(an image's bytes when redirected) or as JSON."""

from __future__ import annotations

import argparse
import base64
import json
import sys
from typing import Any

from agent_client.connection import mcp_vault_connection
from agent_client.exit_codes import EXIT_OK
from agent_client.results import SearchResult
from agent_client.settings import ClientSettings
from agent_client.terminal import for_terminal
from agent_client.vault import Vault
from shared.langs import no_notes_said


async def run(args: argparse.Namespace, settings: ClientSettings, lang: str) -> int:
    """``read``, ``search`` or ``recall``: one tool call, printed."""
    async with mcp_vault_connection(lang, settings) as vault:
        if args.command == "read":
            result: Any = await vault.read(args.path)
            if result.get("encoding") == "base64" and not args.json:
                return _print_binary(args.path, result["content"])
            text = result["content"]
        elif args.command == "recall":
            result = await vault.recall(args.query, budget_tokens=args.budget, path=args.path)
            text = result["block"]
            if not text:  # nothing at all to quote: say so, as search does
                text = "Nothing to recall." + await _no_such_vault(vault, lang)
        elif await vault.has_search():
            result = await vault.search(
                args.query, limit=args.limit, offset=args.offset, path=args.path
            )
            text = _search_text(args.query, result, args.offset, args.path)
            if not result["results"] and not args.offset:
                text += await _no_such_vault(vault, lang)
        else:
            result, text = await _grep_instead(vault, args)
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    elif text:
        print(for_terminal(text.rstrip("\n"), sys.stdout))
    return EXIT_OK


async def _no_such_vault(vault: Vault, lang: str) -> str:
    """A word after "no notes match" when the vault itself has no notes (a typo in
    ``--lang`` looked like an empty result), naming the vaults that have some."""
    langs = (await vault.status()).get("langs") or {}
    if not isinstance(langs, dict) or langs.get(lang):
        return ""
    return " " + no_notes_said(lang, sorted(str(name) for name in langs))


def _print_binary(path: str, content: str) -> int:
    """An image read: its bytes when the output goes to a file or a pipe; on a terminal,
    one line saying what it is (the bytes would only garble it)."""
    data = base64.b64decode(content)
    if sys.stdout.isatty():
        print(f"{path} is an image ({len(data):,} bytes); redirect the output to save it")
    else:
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    return EXIT_OK


def _search_text(query: str, result: SearchResult, offset: int, path: str = "") -> str:
    hits = result["results"]
    total = result.get("total")
    if not hits:
        where = f" below {path!r}" if path else ""
        where += f" after the first {offset}" if offset else ""
        return f"No notes match {query!r}{where}."
    lines: list[str] = []
    for hit in hits:
        lines.append(f"{hit['path']}  {hit['title']}")
        snippet = " ".join(hit["snippet"].split())
        if snippet:
            lines.append(f"    {snippet}")
    shown = f"{offset + 1}-{offset + len(hits)}"
    if total is not None:
        lines.append(f"({shown} of {total})")
    elif offset:
        lines.append(f"({shown})")
    if result["partial"]:
        lines.append("(the index is still catching up: some notes may be missing)")
    return "\n".join(lines)


async def _grep_instead(vault: Vault, args: argparse.Namespace) -> tuple[Any, str]:
    """An indexer without search: a case-insensitive grep for the query text."""
    result = await vault.grep(
        args.query, path=args.path, fixed=True, ignore_case=True, limit=args.limit + args.offset
    )
    matches = result["matches"][args.offset :]
    if not matches:
        return result, f"No lines match {args.query!r}."
    return result, "\n".join(f"{m['path']}:{m['line']}: {m['text']}" for m in matches)
