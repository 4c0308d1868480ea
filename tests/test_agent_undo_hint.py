"""The ``agent-client undo`` a message suggests runs as printed for any entry id: an id
may start with ``-`` (letters, digits and ``_ . : -``), which the command line took for
an option; the suggestion puts ``--`` before it."""

from __future__ import annotations

import re
import shlex
from datetime import UTC, datetime

import pytest

from agent_client.cli import build_parser
from agent_client.reasons import undo_command
from agent_client.writer import _stopped
from shared.models import MemoryEntry


def suggested(message: str) -> str:
    found = re.search(r"`(agent-client undo [^`]*)`", message)
    assert found is not None, message
    return found.group(1)


@pytest.mark.parametrize("entry_id", ["-rf", "--dry-run", "-", "a-b.c:d_1", "3f2a"])
def test_the_suggested_undo_names_the_entry_whatever_it_starts_with(entry_id: str) -> None:
    entry = MemoryEntry(
        "en", "knowledge", "T", "c", [], datetime(2026, 1, 1, tzinfo=UTC), id=entry_id
    )
    messages = [_stopped(entry, "x", cut=True).error or "", f"`{undo_command(entry_id)}`"]
    for message in messages:
        words = shlex.split(suggested(message))
        args = build_parser().parse_args(words[1:])
        assert (args.command, args.entry_id, args.dry_run) == ("undo", entry_id, False)
