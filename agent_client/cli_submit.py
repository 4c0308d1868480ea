"""``agent-client remember`` and ``event``: the entry made from the arguments (its text,
tags, time and images checked before anything is sent), one writer run, and what became
of the entry said (and of those killed clients left, which the run finished first).

Why apart from ``cli``: that module parses and maps errors for every command; this is
the one command that runs the Memory Writer and waits on it.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from dataclasses import asdict
from datetime import UTC, datetime

from agent_client.exit_codes import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OFFLINE, EXIT_OK
from agent_client.image_files import check_image_files
from agent_client.interrupts import result_decided, terminate_as_interrupt
from agent_client.notices import CollectingNoticeSink, SystemNotice
from agent_client.reasons import undo_command
from agent_client.settings import ClientSettings
from agent_client.terminal import for_terminal
from agent_client.writer import MemoryWriter
from shared.frontmatter import hashtags
from shared.models import MemoryEntry
from shared.timestamps import parse_timestamp


def text_argument(value: str) -> str:
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
    """The ``--image`` files, each checked before anything is sent (bad usage, exit 2: it
    was a failure, exit 1, after connecting, named by a Python class)."""
    check_image_files(paths, max_bytes, "--image")
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


def submit(args: argparse.Namespace, settings: ClientSettings, lang: str) -> int:
    entry = MemoryEntry(
        lang=lang,
        kind="knowledge" if args.command == "remember" else "event",
        title=args.title,
        content=text_argument(args.text),
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
            finished = writer.flush_each(settings.entry_seconds)
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
            f"agent-client: the writer did not stop in time: `{undo_command(entry.id)}`"
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
        # (as every command's error line: the error names what failed, its code first)
        print(for_terminal(f"agent-client: {notice.error}", sys.stderr), file=sys.stderr)
        return
    print(for_terminal(notice.update_summary, sys.stdout))
    for path in notice.updated_files:
        print(for_terminal(f"  {path}", sys.stdout))
    if notice.fallback_reason:
        reason = f"(merged without the LLM: {notice.fallback_reason})"
        print(for_terminal(reason, sys.stderr), file=sys.stderr)
