"""Event entries: one ``## Event`` section appended to the day file, by plain code.

The day file is ``events/YYYY/MM/DD.md`` for the entry's timestamp in the configured
time zone. Its preamble is written with ``if_match=""`` (must not exist yet), so when
two writers race to create the same day file exactly one preamble wins; the other sees
``conflict`` and just appends. Appends are serialized by the server.
"""

from __future__ import annotations

import contextlib
from datetime import datetime, tzinfo

from agent_client.connection import Vault
from agent_client.notes import ATX_HEADING, render_note
from agent_client.results import AppendResult
from shared.errors import ConflictError, NotFoundError
from shared.models import MemoryEntry
from shared.workspace import day_file


def day_path(when: datetime, tz: tzinfo | None) -> tuple[str, datetime]:
    """The day file of ``when`` and ``when`` in the configured zone (None: local)."""
    local = when.astimezone(tz)
    return day_file(local), local


def preamble(local: datetime) -> str:
    day = f"{local:%Y-%m-%d}"
    body = f"# Events {day}\n\nOne section per event, in the order they were logged.\n"
    return render_note({"title": f"Events {day}", "type": "events", "tags": ["events"]}, body)


def event_section(entry: MemoryEntry, local: datetime) -> str:
    """The Markdown of one event; headings inside the content are escaped."""
    tags = ", ".join(entry.tags) if entry.tags else "-"
    body = ATX_HEADING.sub(lambda m: "\\" + m.group(0), entry.content.strip("\n"))
    return (
        f"\n## Event\n\n"
        f"- time: {local.isoformat(timespec='seconds')}\n"
        f"- title: {' '.join(entry.title.split())}\n"
        f"- tags: {tags}\n"
        f"- entry: {entry.id}\n\n"
        f"{body}\n"
    )


async def append_event(vault: Vault, entry: MemoryEntry, tz: tzinfo | None) -> AppendResult:
    """Make sure the day file exists (preamble once), then append the entry's section."""
    return await append_events(vault, [entry], tz)


async def append_events(
    vault: Vault, entries: list[MemoryEntry], tz: tzinfo | None
) -> AppendResult:
    """Append the sections of consecutive events of one day file in a single ``append``.

    ``entries`` all belong to one day file (see ``same_day_runs``); their sections keep
    their order and stay contiguous, as if appended one by one without interleaving.
    """
    path, local = day_path(entries[0].timestamp, tz)
    sections = "".join(event_section(e, day_path(e.timestamp, tz)[1]) for e in entries)
    for _ in range(2):
        stat = await vault.stat(path)
        if not stat["exists"]:
            # A conflict means another writer created it first: its preamble stands.
            with contextlib.suppress(ConflictError):
                await vault.write(path, preamble(local), if_match="")
        try:
            return await vault.append(path, sections, create=False)
        except NotFoundError:
            continue  # deleted between our write and append: create it again
    raise NotFoundError(f"{path} vanished twice while appending {len(entries)} event(s)")


def same_day_runs(
    entries: list[MemoryEntry], tz: tzinfo | None, max_run: int = 100, max_chars: int = 256_000
) -> list[list[MemoryEntry]]:
    """Split a batch into runs: consecutive events of one lang and day file, or single
    knowledge entries. A run of events costs one ``append`` instead of one per event."""
    runs: list[list[MemoryEntry]] = []
    key: tuple[str, str] | None = None
    size = 0
    for entry in entries:
        if entry.kind != "event":
            runs.append([entry])
            key = None
            continue
        entry_key = (entry.lang, day_path(entry.timestamp, tz)[0])
        if entry_key == key and len(runs[-1]) < max_run and size + len(entry.content) < max_chars:
            runs[-1].append(entry)
            size += len(entry.content)
        else:
            runs.append([entry])
            key, size = entry_key, len(entry.content)
    return runs
