"""``agent-client``: the Memory Writer and the vault tools from a shell.

A thin layer over the library: each command builds the settings once, runs one writer
submission, action or tool call, and maps every error to one line and an exit code here
(0 done, 1 refused or failed, 2 bad usage, 3 indexer offline). ``history`` and ``undo``
live in ``cli_history``, ``read``, ``search`` and ``recall`` in ``cli_query``, ``remember``
and ``event`` in ``cli_submit``.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import json
import logging
import math
import os
import sys
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from agent_client import cli_history, cli_query, cli_submit
from agent_client.cli_submit import text_argument
from agent_client.exit_codes import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OFFLINE, EXIT_OK, EXIT_USAGE
from agent_client.settings import ClientSettings
from agent_client.terminal import TerminalFormatter
from agent_client.transport_logs import NOISY_LOGGERS
from agent_client.writer import MemoryWriter
from shared.cli_usage import (
    Parser,
    refuse_options_before_command,
    say_refusal,
    stdout_closed,
    whole_number,
)
from shared.errors import ConfigError, IndexerOfflineError, VaultError
from shared.frontmatter import LIST_COMMAS, scalar_value
from shared.models import (
    MAX_RECALL_BUDGET,
    MAX_SEARCH_LIMIT,
    MIN_RECALL_BUDGET,
    Action,
    DeleteAction,
    EditAction,
)
from shared.terminal_text import shows_any_text
from shared.utf8 import utf8_problem

DESCRIPTION = """\
Remember knowledge and events in a vault-memory workspace; read, search, edit or delete
its notes; see their history and undo what a memory entry wrote. The indexer must be
serving the workspace (indexer serve --workspace W).
"""

EPILOG = """\
settings:
  --workspace and --lang default to AGENT_CLIENT_WORKSPACE and AGENT_CLIENT_LANG.
  Knowledge is merged by the LLM named in VAULT_LLM_MODEL (with OPENAI_BASE_URL and
  OPENAI_API_KEY), or deterministically without one. deploy/env.example lists them
  all (in the source, not in the wheel).

exit status:
  0  done
  1  refused or failed (the message says why)
  2  bad usage (a missing or malformed argument, an invalid vault id)
  3  the indexer is not running on the workspace, or does not answer
  130  interrupted (Ctrl-C or SIGTERM; what was written is taken back where it can be)

run "agent-client COMMAND --help" for the options of a command.
"""


def build_parser() -> argparse.ArgumentParser:
    common = Parser(add_help=False)
    common.add_argument(
        "--workspace", metavar="W", help="workspace folder (default: $AGENT_CLIENT_WORKSPACE)"
    )
    common.add_argument(
        "--lang", help="vault id, e.g. en, ja, zh-Hans (default: $AGENT_CLIENT_LANG)"
    )
    common.add_argument("--json", action="store_true", help="print the result as JSON")
    common.add_argument(
        "--log-level",
        default="WARNING",
        type=str.upper,
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="what to log on stderr (default: WARNING)",
    )

    parser = Parser(
        prog="agent-client",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"agent-client {_package_version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, help_text in (
        ("remember", "merge a piece of knowledge into the vault's notes"),
        ("event", "log an event in the day file events/YYYY/MM/DD.md"),
    ):
        cmd = sub.add_parser(name, parents=[common], help=help_text, description=help_text)
        cmd.add_argument("--title", required=True, help="a short name for it (one line)")
        tag_help = "a topic label; repeatable ('#a #b' is two)"
        if name == "event":  # (maintenance without a model files tagged events)
            tag_help += " (preference, habit, decision, goal, todo... put it in USER.md/PROJECT.md)"
        cmd.add_argument(
            "--tag", action="append", default=[], dest="tags", metavar="TAG", help=tag_help
        )
        cmd.add_argument(
            "--at",
            metavar="TIME",
            help="when, as ISO 8601 with a zone, e.g. 2026-11-29T20:00:00+01:00 (default: now)",
        )
        cmd.add_argument("text", help="the content (Markdown); - reads it from stdin")
        if name == "remember":
            cmd.add_argument(
                "--image",
                action="append",
                default=[],
                dest="images",
                metavar="FILE",
                help="an image to attach (PNG, JPEG, GIF, WebP, BMP, AVIF); repeatable",
            )
            cmd.add_argument(
                "--no-llm",
                action="store_true",
                help="merge deterministically even when an LLM is configured",
            )
    about = "replace a note's body or change its frontmatter (id and created are kept)"
    edit = sub.add_parser("edit", parents=[common], help=about, description=about)
    edit.add_argument("path", help="the note, relative to the vault, e.g. items/go.md")
    edit.add_argument("--body", help="the new body (Markdown); - reads it from stdin")
    edit.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="set a frontmatter key; VALUE is read as YAML: 5 is a number, true a "
        "boolean, tags=[a, b] a list (tags and aliases), anything else (a date too) "
        "text; repeatable",
    )
    edit.add_argument(
        "--unset", action="append", default=[], metavar="KEY", help="remove a frontmatter key"
    )
    about = "delete a note (its images go with it), a text file (.txt, .json...) or an image"
    delete = sub.add_parser("delete", parents=[common], help=about, description=about)
    delete.add_argument("path", help="the file, relative to the vault, e.g. items/go.md")
    about = "search the vault's notes; prints path, title and a snippet per hit"
    search = sub.add_parser("search", parents=[common], help=about, description=about)
    search.add_argument(
        "query",
        nargs="+",
        help='words (all must match) and "quoted phrases"; OR between them; datab* a prefix',
    )
    search.add_argument(
        "--limit",
        type=whole_number(1, MAX_SEARCH_LIMIT),
        default=10,
        help=f"hits to show, 1-{MAX_SEARCH_LIMIT} (default: 10)",
    )
    search.add_argument(
        "--offset",
        type=whole_number(0),
        default=0,
        help="skip this many hits first, to page (default: 0)",
    )
    search.add_argument("--path", default="", help="only notes below this folder")
    about = (
        "print what the vault recalls for a request: one block of reference context "
        "(USER.md, PROJECT.md, folder abstracts, recent notes, matching notes) within a "
        "token budget; call it at the start of an agent turn"
    )
    recall = sub.add_parser("recall", parents=[common], help=about, description=about)
    recall.add_argument("query", nargs="+", help="the user's request, as written")
    recall.add_argument(
        "--budget",
        type=whole_number(MIN_RECALL_BUDGET, MAX_RECALL_BUDGET),
        default=1500,
        help=f"most tokens in the block, {MIN_RECALL_BUDGET} to {MAX_RECALL_BUDGET} "
        "(default: 1500)",
    )
    recall.add_argument("--path", default="", help="only notes below this folder")
    about = "print a file of the vault"
    read = sub.add_parser("read", parents=[common], help=about, description=about)
    read.add_argument("path", help="relative to the vault, e.g. items/go.md")
    cli_history.register(sub, common)
    return parser


def _package_version() -> str:
    """The installed package's version (the checkout's, when not installed)."""
    try:
        return importlib.metadata.version("vault-memory")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def main(argv: Sequence[str] | None = None) -> int:
    shows_any_text(sys.stdout)  # (a terminal that is not UTF-8: escapes, not a crash)
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    refuse_options_before_command(parser, argv)
    args = parser.parse_args(argv)
    if isinstance(getattr(args, "query", None), list):  # words unquoted: one query
        args.query = " ".join(args.query)
    _configure_logging(args.log_level)
    try:
        _check_utf8_arguments(args)
        flags: dict[str, object] = {"workspace": args.workspace, "lang": args.lang}
        if getattr(args, "no_llm", False):
            flags["llm"] = "off"
        settings = ClientSettings.resolve(flags, os.environ)
        if settings.lang is None:
            raise ValueError("which vault? pass --lang (e.g. en) or set AGENT_CLIENT_LANG")
        code = _run(args, settings, settings.lang)
        sys.stdout.flush()  # here, where a reader gone is caught, not at the exit
        return code
    except BrokenPipeError:
        return stdout_closed()
    except KeyboardInterrupt:
        print("agent-client: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except IndexerOfflineError as exc:
        say_refusal(f"agent-client: {exc}")
        return EXIT_OFFLINE
    except ValueError as exc:  # before VaultError: a bad lang is both, and bad usage
        said = exc.message if isinstance(exc, ConfigError) else str(exc)
        say_refusal(f"agent-client: {said}")
        return EXIT_USAGE
    except VaultError as exc:
        say_refusal(f"agent-client: {exc}")
        return EXIT_FAILED


def _configure_logging(level: str) -> None:
    """The CLI owns its process's logging; at DEBUG the transport's lines are wanted too."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(TerminalFormatter("%(levelname)s %(name)s: %(message)s", sys.stderr))
    logging.basicConfig(level=level, handlers=[handler])
    if level == "DEBUG":
        for name in NOISY_LOGGERS:
            logging.getLogger(name).setLevel(logging.DEBUG)


def _run(args: argparse.Namespace, settings: ClientSettings, lang: str) -> int:
    if args.command in ("remember", "event"):
        return cli_submit.submit(args, settings, lang)
    if args.command in ("edit", "delete"):
        return _action(args, settings, lang)
    if args.command in ("history", "undo"):
        return asyncio.run(cli_history.run(args, settings, lang))
    return asyncio.run(cli_query.run(args, settings, lang))


# Arguments never sent to the indexer: a local path may hold any bytes.
_LOCAL_ONLY = frozenset({"workspace"})


def _check_utf8_arguments(args: argparse.Namespace) -> None:
    """Refuse an argument that is not UTF-8 (``ValueError``: exit 2).

    Python hands bytes that are not UTF-8 over as lone surrogates (``surrogateescape``);
    sent to the indexer, one broke the MCP session, reported as an offline indexer.
    """
    for name, value in vars(args).items():
        if name in _LOCAL_ONLY:
            continue
        for text in value if isinstance(value, list) else [value]:
            if isinstance(text, str) and utf8_problem(text):
                raw = text.encode("utf-8", "surrogateescape")
                where = _option(name, args.command)
                raise ValueError(f"{where} is not valid UTF-8 text: {raw!r:.80}")


def _option(dest: str, command: str) -> str:
    """How the user spelled the argument stored as ``dest``, for a message."""
    if dest == "path" and command not in ("recall", "search"):
        return "PATH"
    options = {"tags": "--tag", "images": "--image"}
    positional = {"text": "TEXT", "query": "QUERY", "entry_id": "ENTRY_ID"}
    return options.get(dest) or positional.get(dest) or "--" + dest.replace("_", "-")


def frontmatter_value(text: str, key: str = "") -> Any:
    """A ``--set`` value as the server reads frontmatter: ``5`` a number, ``true`` a
    boolean; anything else stays the text typed (``yes``, ``010``, a date too: the note
    keeps what was written). For ``tags`` and ``aliases``, lists, a list in brackets
    (``[a, b]``) is that list, cut at any script's comma as a string is: as text, the
    server would split it at its commas into the tags ``[a`` and ``b]``."""
    value = scalar_value(text)
    if key in _LIST_KEYS and text.lstrip().startswith("[") and _plain_list(value):
        if "'" in text or '"' in text:  # a quoted item is one, as YAML reads it
            return value
        # YAML cuts at ASCII's comma alone: [شعر، أدب] would be one tag, where the
        # string شعر، أدب is two (a tag never holds a comma)
        return [piece for item in value for piece in _pieces(item)]
    if isinstance(value, bool | int) or (isinstance(value, float) and math.isfinite(value)):
        return value
    return text


_LIST_KEYS = frozenset({"tags", "aliases"})


def _pieces(item: str | int) -> list[str | int]:
    """A bracket list's item cut at any script's comma (a number stays a number)."""
    if isinstance(item, str):  # the server's commas; an empty piece is no tag
        return [piece.strip() for piece in LIST_COMMAS.split(item) if piece.strip()]
    return [item]


def _plain_list(value: Any) -> bool:
    """Whether ``value`` is a list of texts and whole numbers (no dates, maps, nulls)."""
    return isinstance(value, list) and all(isinstance(item, str | int) for item in value)


def _action(args: argparse.Namespace, settings: ClientSettings, lang: str) -> int:
    action: Action
    if args.command == "delete":
        action = DeleteAction(lang, args.path)
    else:
        frontmatter: dict[str, Any] = {}
        for item in args.set:
            key, sep, value = item.partition("=")
            if not sep or not key.strip():
                raise ValueError(f"--set wants KEY=VALUE, not {item!r}")
            frontmatter[key.strip()] = frontmatter_value(value, key.strip())
        frontmatter.update({key: None for key in args.unset})
        body = text_argument(args.body) if args.body is not None else None
        action = EditAction(lang, args.path, body=body, frontmatter=frontmatter or None)
    writer = MemoryWriter(settings)

    async def run() -> Any:
        return await writer.execute_action_async(action)

    try:
        result = asyncio.run(run())
    finally:
        writer.close(1.0)
    if args.json:
        print(json.dumps(asdict(result)))
    elif result.deleted:
        print(f"deleted {result.path}")
    else:
        print(f"edited {result.path}" if result.changed else f"unchanged {result.path}")
    for what in result.ignored:
        print(f"agent-client: {what}", file=sys.stderr)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
