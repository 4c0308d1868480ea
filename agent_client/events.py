"""Event entries: one ``## Event`` section appended to the day file, by plain code.

The day file is ``events/YYYY/MM/DD.md`` for the entry's timestamp in the configured
time zone. Its preamble is written with ``if_match=""`` (must not exist yet), so when
two writers race to create the same day file exactly one preamble wins; the other sees
``conflict`` and just appends. Appends are serialized by the server.

One ``append`` per event, with the entry's reason: history then holds one version per
event, which ``undo`` of that entry can take back (one append for several events could
carry one entry's reason only). The append is tried first with ``create=False``: the
day file usually exists, so an event costs one call; the first of a day costs three
(``not_found``, the preamble, the append), as a ``stat`` first would.
"""

from __future__ import annotations

import contextlib
import re
from datetime import datetime, tzinfo

from agent_client.notes import ATX_HEADING, render_note
from agent_client.reasons import entry_reason
from agent_client.results import AppendResult
from agent_client.vault import Vault
from shared.errors import ConflictError, InvalidArgumentError, NotFoundError, TooLargeError
from shared.models import LINE_BREAKS, MemoryEntry
from shared.utf8 import NOT_UTF8_TEXT
from shared.workspace import DAY_FILE_PREAMBLE, day_file

MAX_DAY_PARTS = 100  # a day's file and its continuations (DD-2.md ...) at most
# A line of an event's text that reads as the section's own ``- entry: <id>`` line.
_ENTRY_LINE = re.compile(r"^- entry:", re.MULTILINE)


def day_path(when: datetime, tz: tzinfo | None) -> tuple[str, datetime]:
    """The day file of ``when`` and ``when`` in the configured zone (None: local)."""
    local = when.astimezone(tz)
    return day_file(local), local


def preamble(local: datetime, part: int = 1) -> str:
    """A day file's start. Its ``description`` is what a folder summary says of it (its
    abstract; else the first paragraph, the same sentence in every day file)."""
    day = local.date().isoformat()  # four-digit years, as the day file's path
    title = f"Events {day}" if part == 1 else f"Events {day} ({part})"
    body = f"# {title}\n\n{DAY_FILE_PREAMBLE}\n"
    meta = {"title": title, "type": "events", "tags": ["events"], "description": title}
    return render_note(meta, body)


def part_path(path: str, part: int) -> str:
    """The day file ``path`` (part 1), or its ``DD-<part>.md`` once the ones before
    reached the vault's file size limit."""
    return path if part == 1 else f"{path.removesuffix('.md')}-{part}.md"


def event_section(entry: MemoryEntry, local: datetime) -> str:
    """The Markdown of one event; headings inside the content are escaped."""
    tags = ", ".join(entry.tags) if entry.tags else "-"
    body = ATX_HEADING.sub(lambda m: "\\" + m.group(0), entry.content.strip("\n"))
    body = _ENTRY_LINE.sub(r"\\\g<0>", body)  # only the section's own line names its entry
    return (
        f"\n## Event\n\n"
        f"- time: {local.isoformat(timespec='seconds')}\n"
        f"- title: {_one_line(entry.title)}\n"
        f"- tags: {tags}\n"
        f"- entry: {entry.id}\n\n"
        f"{body}\n"
    )


def _one_line(title: str) -> str:
    """The title as given (an ideographic or no-break space is spelling, as in the note
    of a knowledge entry); a line break, which ``check_title`` refuses anyway, would end
    the line: a space."""
    return "".join(" " if char in LINE_BREAKS else char for char in title)


async def append_event(vault: Vault, entry: MemoryEntry, tz: tzinfo | None) -> AppendResult:
    """Append the entry's section to its day file, made first (preamble) if missing; a
    day file at the vault's size limit goes on in ``DD-2.md``, ``DD-3.md``... (every
    event of the rest of the day was refused ``too_large``), and so does one that is not
    UTF-8 (another program's: the server refuses to mix encodings in it)."""
    day, local = day_path(entry.timestamp, tz)
    section = event_section(entry, local)
    try:
        return await _append_to_day(vault, day, section, entry, local)
    except TooLargeError:
        pass
    except InvalidArgumentError as err:
        if NOT_UTF8_TEXT not in err.message:
            raise
    reason = entry_reason(entry)
    for part in range(2, MAX_DAY_PARTS + 1):
        path = part_path(day, part)
        try:
            return await vault.append(path, section, create=False, reason=reason)
        except InvalidArgumentError as err:
            if NOT_UTF8_TEXT not in err.message:
                raise
            continue
        except TooLargeError:
            if not (await vault.stat(path))["exists"]:  # refused before it was looked for
                size = len(section.encode("utf-8"))
                raise TooLargeError(
                    f"this event alone ({size} bytes) is larger than the indexer takes in "
                    "one request: shorten it"
                ) from None
            continue  # full too: the next
        except NotFoundError:
            pass
        try:  # made with the section in one write: a section too large alone makes nothing
            text = preamble(local, part) + section
            written = await vault.write(path, text, if_match="", reason=reason)
            return {"path": path, "etag": written["etag"], "size": written["size"]}
        except ConflictError:  # another writer made it first
            with contextlib.suppress(TooLargeError):
                return await vault.append(path, section, create=False, reason=reason)
    raise TooLargeError(f"{day} and its {MAX_DAY_PARTS - 1} continuations are full")


async def _append_to_day(
    vault: Vault, path: str, section: str, entry: MemoryEntry, local: datetime
) -> AppendResult:
    reason = entry_reason(entry)
    try:
        return await vault.append(path, section, create=False, reason=reason)
    except NotFoundError:
        pass  # the first event of the day
    for _ in range(2):
        # A conflict means another writer created it first: its preamble stands.
        with contextlib.suppress(ConflictError):
            await vault.write(path, preamble(local), if_match="", reason=reason)
        try:
            return await vault.append(path, section, create=False, reason=reason)
        except NotFoundError:
            continue  # deleted between our write and append: create it again
    raise NotFoundError(f"{path} vanished twice while appending event {entry.id}")


async def appended_already(
    vault: Vault, entry: MemoryEntry, tz: tzinfo | None
) -> AppendResult | None:
    """The day file, when it already holds the entry's section (found by its ``entry:``
    line), else None: for an append tried again after its connection dropped."""
    path, _ = day_path(entry.timestamp, tz)
    folder, _, name = path.rpartition("/")
    own_line = f"^- entry: {re.escape(entry.id)}$"  # not a longer id, not quoted text
    stem = name.removesuffix(".md")
    try:  # (the day's file and its continuations, DD-2.md ...)
        found = await vault.grep(own_line, path=folder, glob=f"{stem}*.md")
    except NotFoundError:  # no such day yet
        return None
    parts = re.compile(rf"{re.escape(folder)}/{stem}(-[0-9]+)?\.md")
    matches = [m for m in found["matches"] if parts.fullmatch(m["path"])]
    if not matches:
        return None
    path = matches[0]["path"]
    stat = await vault.stat(path)
    return {"path": path, "etag": stat.get("etag") or "", "size": stat.get("size") or 0}
