"""What a writer that died mid-entry left of it (see ``inflight``), settled before the
entry is written again, so that it is written once.

An event is looked for in its day file (its append may have landed). A knowledge merge
is taken back by the server's undo of the entry's id, all or nothing (the undo the
writer runs for a failed merge), then merged afresh: the model may have written half
its notes, or all of them with the confirmation never told. Only an id the client
made is undone so: one the host set may have changed the vault before (an entry
submitted again), which that undo would take back too.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine, Iterator, Sequence
from dataclasses import asdict

from agent_client.inflight import Claim, Held, InFlight, same_entry
from agent_client.notices import SystemNotice
from agent_client.reasons import undo_command
from agent_client.vault import Vault
from shared.errors import ConflictError, NotFoundError
from shared.models import MemoryEntry, is_made_id

logger = logging.getLogger("agent_client.leftovers")


async def take_back_left(vault: Vault, entry: MemoryEntry) -> None:
    """Take back what a dead writer's merge of ``entry`` wrote (``ConflictError`` when it
    cannot be), so that it is merged once. (An event is looked for by the writer.)"""
    stopped = f"a client stopped while merging entry {entry.id}"
    how = f"`agent-client history` shows what it wrote, `{undo_command(entry.id)}`"
    if not is_made_id(entry.id):
        raise ConflictError(
            f"{stopped} (an id the host set, which may have changed the vault before),"
            f" so it is not merged again: {how} takes back what it wrote"
        )
    if not await vault.has_history():
        raise ConflictError(f"{stopped}; this indexer keeps no history to take it back with")
    try:
        await vault.undo(entry.id)
    except NotFoundError:
        pass  # none of its writes landed
    except ConflictError as exc:
        raise ConflictError(
            f"{stopped}; its notes were changed since, so what it wrote stays and it is not"
            f" merged again ({exc.message}): {how}"
        ) from None


def adopt_orphans(
    inflight: InFlight,
    batch: list[MemoryEntry],
    adopted: dict[str, Claim],
    ids: set[str],
    seen: list[Held],
) -> Iterator[Claim]:
    """The records dead writers left, to be finished before ``batch``; one whose entry
    is equal to an entry of the batch (a command run again) is that entry: the entry
    takes its id and time, and its record goes to ``adopted`` under that id. Each id
    goes to ``ids``: its entry's leftovers are settled before it is written. A record
    of an entry of the batch another writer holds goes to ``seen``: the entry waits
    for it (``wait_for_same``), even once it is removed."""
    for claim in inflight.orphans(batch, seen):
        left = claim.entry
        ids.add(left.id)
        twin = next((e for e in batch if e.id not in adopted and same_entry(e, left)), None)
        if twin is None:
            logger.warning("memory entry %s (%r): left by a stopped writer", left.id, left.title)
            yield claim
        else:
            logger.info("memory entry %s: a stopped writer's entry, submitted again", left.id)
            twin.id, twin.timestamp = left.id, left.timestamp
            adopted[left.id] = claim


async def in_flight(
    claim: Claim | None,
    run: Coroutine[object, object, SystemNotice],
    *,
    keep: bool | Callable[[], bool],
) -> SystemNotice:
    """Run an entry with its record held; told of (or stopped by its own writer), the
    record goes. It stays, for the next writer to finish, when its indexer was offline
    and ``keep`` (an orphan's, or an entry whose indexer went away mid-entry: asked once
    it is told), or when an orphan was cut off."""
    notice: SystemNotice | None = None
    try:
        notice = await run
        return notice
    finally:
        if claim is not None:
            offline = notice is None or (notice.error or "").startswith("indexer_offline")
            kept = keep if isinstance(keep, bool) else notice is not None and keep()
            done = not (offline and kept)
            claim.release(done=done, told=asdict(notice) if notice is not None else None)


async def wait_for_same(
    inflight: InFlight, entry: MemoryEntry, seconds: float, seen: Sequence[Held] = ()
) -> SystemNotice | Claim | None:
    """Before ``entry`` is written: when another writer is writing an entry saying the
    same (the command run again while the first run still finishes a killed one), wait
    up to ``seconds`` for it and tell its outcome, under its id. Its writer dying
    meanwhile leaves its record to this one (``Claim``: the entry, its id and time,
    settled first); a writer stopped before it wrote the entry leaves it to be written
    (None), as does no such writer. Still held at the end: a failed notice, not
    written twice. ``seen``: records of it the batch's sweep found held, open since
    (first: they are older). One still queued at its writer (not begun) is not waited
    for: its writer writes it and tells its own outcome; the notice says so at once
    (waited for, it was behind that writer's whole queue, and may have timed out)."""
    passed = [held.path.name for held in seen]
    helds = [*seen, *inflight.held(entry, passed)]
    deadline = time.monotonic() + seconds
    try:
        for held in helds:
            while (state := held.settled()) is None:
                if held.queued():
                    return _queued_elsewhere(entry, held)
                if time.monotonic() > deadline:
                    return _still_held(entry, held)
                await asyncio.sleep(0.05)
            told, claim = state
            if claim is not None:
                entry.id, entry.timestamp = claim.entry.id, claim.entry.timestamp
                return claim
            try:
                notice = SystemNotice(**told) if told is not None else None  # type: ignore[arg-type]
            except TypeError:  # (told by another version of the client)
                notice = None
            if notice is not None:
                entry.id = notice.entry_id
                return notice
        return None
    finally:
        for held in helds:
            held.close()


def _queued_elsewhere(entry: MemoryEntry, held: Held) -> SystemNotice:
    return _not_written_here(
        entry,
        held,
        "queued",
        "another client has the same entry queued (its record {name}) and writes it,"
        " telling its own outcome; it is not written twice here",
    )


def _still_held(entry: MemoryEntry, held: Held) -> SystemNotice:
    return _not_written_here(
        entry,
        held,
        "being written",
        "another client is still writing the same entry (its record {name}); it is not"
        " written twice: run the command again once that one is done",
    )


def _not_written_here(entry: MemoryEntry, held: Held, state: str, said: str) -> SystemNotice:
    """The entry's failure notice: another client's record ``held`` has it."""
    logger.info("memory entry %s: the same entry is %s at %s", entry.id, state, held.path)
    error = said.format(name=held.path.name)
    return SystemNotice(entry.id, entry.lang, entry.kind, entry.title, ok=False, error=error)
