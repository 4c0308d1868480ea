"""``agent-client``: the Memory Writer and the vault tools from a shell.

A thin layer over the library: each command builds the settings once, runs one writer
submission, action or tool call, and maps every error to one line and an exit code here
(0 done, 1 refused or failed, 2 bad usage, 3 indexer offline). ``history`` and ``undo``
live in ``cli_history``, ``read``, ``search`` and ``recall`` in ``cli_query``.
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
from datetime import UTC, datetime
from typing import Any

from agent_client import cli_history, cli_query
from agent_client.exit_codes import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OFFLINE, EXIT_OK, EXIT_USAGE
from agent_client.interrupts import result_decided, terminate_as_interrupt
from agent_client.notices import CollectingNoticeSink, SystemNotice
from agent_client.settings import ClientSettings
from agent_client.terminal import TerminalFormatter, for_terminal
from agent_client.transport_logs import NOISY_LOGGERS
from agent_client.writer import MemoryWriter
from shared.cli_usage import Parser, refuse_options_before_command, stdout_closed, whole_number
from shared.errors import ConfigError, IndexerOfflineError, VaultError
from shared.frontmatter import hashtags, scalar_value
from shared.images import detect_image
from shared.models import (
    MAX_RECALL_BUDGET,
    MAX_SEARCH_LIMIT,
    MIN_RECALL_BUDGET,
    Action,
    DeleteAction,
    EditAction,
    MemoryEntry,
)
from shared.terminal_text import shows_any_text
from shared.timestamps import parse_timestamp
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
        print(f"agent-client: {exc}", file=sys.stderr)
        return EXIT_OFFLINE
    except ValueError as exc:  # before VaultError: a bad lang is both, and bad usage
        said = exc.message if isinstance(exc, ConfigError) else str(exc)
        print(f"agent-client: {said}", file=sys.stderr)
        return EXIT_USAGE
    except VaultError as exc:
        print(f"agent-client: {exc}", file=sys.stderr)
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
        return _submit(args, settings, lang)
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
    if dest == "path" and command != "recall":
        return "PATH"
    options = {"tags": "--tag", "images": "--image"}
    positional = {"text": "TEXT", "query": "QUERY", "entry_id": "ENTRY_ID"}
    return options.get(dest) or positional.get(dest) or "--" + dest.replace("_", "-")


def _text(value: str) -> str:
    """The argument, or stdin for ``-``: decoded as UTF-8 here, whatever the locale says.
    A byte order mark opening stdin (a file saved by a Windows editor) is not text: it
    would sit invisible in the middle of the note."""
    if value != "-":
        return value
    if sys.stdin is None:  # started with stdin closed (cron, a daemon)
        raise ValueError("'-' reads the text from stdin, but this process has no stdin")
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None:  # a text stream put in place of stdin (tests, embedding)
        return sys.stdin.read().removeprefix("\ufeff")
    data: bytes = buffer.read()
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"stdin is not valid UTF-8 text (byte {data[exc.start]:#04x} at offset {exc.start})"
        ) from None


def _image_files(paths: list[str], max_bytes: int) -> list[str]:
    """The ``--image`` files, each checked to be a readable image of at most ``max_bytes``
    before anything is sent (bad usage, exit 2: it was a failure, exit 1, after
    connecting, named by a Python class)."""
    for path in paths:
        if not os.path.isfile(path) or not os.access(path, os.R_OK):
            raise ValueError(f"--image {path!r:.80}: no such readable file")
        size = os.path.getsize(path)
        if size > max_bytes:
            raise ValueError(
                f"--image {path!r:.80}: {size:,} bytes, more than the {max_bytes:,} an image"
                " may have (AGENT_CLIENT_MAX_IMAGE_BYTES)"
            )
        with open(path, "rb") as file:
            if detect_image(file.read(4096)) is None:
                raise ValueError(
                    f"--image {path!r:.80}: not a PNG, JPEG, GIF, WebP, BMP or AVIF image"
                )
    return paths


def _tags(values: list[str]) -> list[str]:
    """The ``--tag`` values as the server reads a string of tags: ``'#a #b'`` (hashtags
    typed in one value) is ``a`` and ``b``; ``past tense`` stays one tag. (Each is
    checked as any entry's tag: an empty one is refused, not dropped.)"""
    tags: list[str] = []
    for value in values:
        words = hashtags(value)
        tags += [word[1:] for word in words] if len(words) > 1 else [value]
    return tags


def _timestamp(value: str | None) -> datetime:
    try:
        return datetime.now(UTC) if value is None else parse_timestamp(value)
    except ValueError as exc:
        raise ValueError(f"--at: {exc}") from None


def _submit(args: argparse.Namespace, settings: ClientSettings, lang: str) -> int:
    entry = MemoryEntry(
        lang=lang,
        kind="knowledge" if args.command == "remember" else "event",
        title=args.title,
        content=_text(args.text),
        tags=_tags(args.tags),
        timestamp=_timestamp(args.at),
        images=_image_files(getattr(args, "images", []), settings.max_image_bytes),
    )
    sink = CollectingNoticeSink()
    writer = MemoryWriter(settings, sink)
    said_twice = _WritersFailureLine()
    logs = [logging.getLogger(name) for name in ("agent_client.writer", "agent_client.merge")]
    for log in logs:
        log.addFilter(said_twice)
    try:
        with terminate_as_interrupt():
            writer.submit([entry])
            budget = (settings.llm.timeout if settings.llm else 0) + 4 * settings.call_timeout
            finished = writer.flush(budget)
            writer.close(1.0)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: the entry is taken back, not left half
        return _interrupted(writer, sink, entry, settings)
    finally:
        for log in logs:
            log.removeFilter(said_twice)
    notice = _own_notice(sink, entry)
    if not finished or notice is None:
        with result_decided(EXIT_FAILED):
            print("agent-client: the writer did not finish in time", file=sys.stderr)
        return EXIT_FAILED
    for left in sink.notices:  # and those of the entries killed clients left (``leftovers``)
        if left is notice:
            continue
        said = left.update_summary if left.ok else f"failed: {left.error}"
        line = f"agent-client: entry {left.entry_id} a stopped client left ({left.title}): {said}"
        print(for_terminal(line, sys.stderr), file=sys.stderr)
    code = EXIT_OK if notice.ok else EXIT_FAILED
    if not notice.ok and (notice.error or "").startswith("indexer_offline"):
        code = EXIT_OFFLINE
    with result_decided(code):  # (the result stands: a stop now takes nothing back)
        _print_notice(notice, args.json)
    return code


def _interrupted(
    writer: MemoryWriter, sink: CollectingNoticeSink, entry: MemoryEntry, settings: ClientSettings
) -> int:
    """Stop the writer (its merge taken back) and say what became of the entry."""
    stopped = writer.cancel(4 * settings.call_timeout)
    notice = _own_notice(sink, entry)
    if notice is not None and notice.ok:  # done before the interrupt came
        _print_notice(notice, False)
        return EXIT_OK
    said = notice.error if notice is not None else f"entry {entry.id} was not written"
    print(f"agent-client: interrupted: {said}", file=sys.stderr)
    if not stopped:
        print(
            f"agent-client: the writer did not stop in time: `agent-client undo {entry.id}`"
            " takes back what it wrote",
            file=sys.stderr,
        )
    return EXIT_INTERRUPTED


def _own_notice(sink: CollectingNoticeSink, entry: MemoryEntry) -> SystemNotice | None:
    """The entry's notice, not one of an entry a killed client left (its id is the one
    the entry took, when it was that entry run again)."""
    return next((n for n in reversed(sink.notices) if n.entry_id == entry.id), None)


class _WritersFailureLine(logging.Filter):
    """Drops the writer's error line for a failed entry, and the merge's for a model
    that failed (unless it carries a traceback): the CLI prints the notice, which says the
    same (its error, or its fallback reason; a terminal got both)."""

    def filter(self, record: logging.LogRecord) -> bool:
        said = str(record.msg)
        merge_failed = said.startswith("LLM merge of entry") and not record.exc_info
        return not (
            record.levelno >= logging.ERROR and (said.startswith("memory entry") or merge_failed)
        )


def _print_notice(notice: SystemNotice, as_json: bool) -> None:
    if as_json:
        print(json.dumps(asdict(notice), ensure_ascii=False))
        return
    if not notice.ok:
        print(for_terminal(f"agent-client: failed: {notice.error}", sys.stderr), file=sys.stderr)
        return
    print(for_terminal(notice.update_summary, sys.stdout))
    for path in notice.updated_files:
        print(for_terminal(f"  {path}", sys.stdout))
    if notice.fallback_reason:
        reason = f"(merged without the LLM: {notice.fallback_reason})"
        print(for_terminal(reason, sys.stderr), file=sys.stderr)


def frontmatter_value(text: str, key: str = "") -> Any:
    """A ``--set`` value as the server reads frontmatter: ``5`` a number, ``true`` a
    boolean; anything else stays the text typed (``yes``, ``010``, a date too: the note
    keeps what was written). For ``tags`` and ``aliases``, lists, a list in brackets
    (``[a, b]``) is that list: as text, the server would split it at its commas into the
    tags ``[a`` and ``b]``."""
    value = scalar_value(text)
    if key in _LIST_KEYS and text.lstrip().startswith("[") and _plain_list(value):
        return value
    if isinstance(value, bool | int) or (isinstance(value, float) and math.isfinite(value)):
        return value
    return text


_LIST_KEYS = frozenset({"tags", "aliases"})


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
        body = _text(args.body) if args.body is not None else None
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
