"""The entries submitted and not yet told, on disk until their outcome is, so that those
of a writer that died (``kill -9``, a crash, a host exiting while its daemon thread
merged), the one mid-entry and those queued behind it, are finished by the next writer
on the workspace, once.

Why: the entry being merged may have written half its notes. Run again, ``agent-client
remember`` merged it a second time under a new id (the fact twice in its note) and the
half merge stayed, nobody told; the entries queued went with the process.

A record is ``W/.agent-client/inflight/<time><random>.json`` (the entry's fields), held with
an exclusive ``flock`` for as long as its entry is in flight. The folder is 0700 and a
record another user owns is passed over: it would be finished as this user's memory,
its images (any file paths) copied in. The kernel lets go of a
lock when its process dies, so a record whose lock can be taken is an orphan: no pids
(reused) nor clocks are trusted. A record is made under a temporary name, locked, then
renamed, so that no writer takes it for an orphan before its lock is held; a record
taken is unlinked before it is unlocked (a writer that locks it after finds it unlinked).

An entry's outcome is written into its record before the record is unlinked (``told``):
a writer given the same entry while another holds it (the command run again as the
first run finishes a killed one) waits on the record's lock and tells that outcome,
not merging it a second time (``Held``, ``leftovers.wait_for_same``). The records are
listed and opened under ``.agent-client/inflight.lock`` held shared, and one is only
unlinked under it held exclusively: an outcome told and its record removed between the
listing and the open was passed over, and the entry merged a second time.

A record is made when its entry is submitted (``MemoryWriter.submit``), not when it is
started: the entries queued behind the one being merged went with a killed process.
Its process holds it (``mine``: never waited on, nor taken, by this process's writer)
and the writer thread writes the entry under it. Names start with the time, so a dead
writer's entries are finished in the order they were submitted.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from shared.models import MemoryEntry

logger = logging.getLogger("agent_client.inflight")

INFLIGHT_DIR = ".agent-client/inflight"
LOCK_NAME = "inflight.lock"  # beside the folder: held as records are listed, or removed
_MAX_RECORD_BYTES = 4 << 20  # an entry's content is at most 262,144 characters
# A record made at submit starts so; its 1 becomes 0 (same length: one write) as its
# writing begins. Another writer given the same entry waits on a record being written
# (its entry's time), not on one still queued behind the other client's queue.
_QUEUED = b'{"queued": 1, '
_QUEUED_AT = len(_QUEUED) - 3
# A record's temporary file this old is a writer's killed before it named it (it names
# it at once): a younger one is not even locked to look, its writer's lock comes next.
_STALE_SECONDS = 60


@dataclass
class Claim:
    """A record held (locked) by this process; ``entry`` as it was recorded."""

    path: Path
    fd: int
    entry: MemoryEntry
    mine: set[str] | None = None  # (this process's records: the name leaves it)
    taken: bool = False  # (a queued entry's: its writing holds it now, and releases it)
    queued: bool = False  # (marked queued on disk: its writing has not begun)

    def begin(self) -> None:
        """Mark the record's entry as being written (one byte: ``"queued": 0``): a
        writer given the same entry waits for its outcome from now on."""
        if self.queued:
            self.queued = False
            with contextlib.suppress(OSError):
                os.pwrite(self.fd, b"0", _QUEUED_AT)

    def release(self, *, done: bool = True, told: dict[str, object] | None = None) -> None:
        """Let go of the record: ``done`` (its outcome told) removes it, ``told`` written
        in it first for a writer waiting on it; else it stays for the next writer (an
        orphan interrupted while it was being finished)."""
        last = None
        if done and told is not None:  # (longer than the entry's: no truncate)
            last = json.dumps({**_as_record(self.entry), "told": told}, ensure_ascii=False)
        if self.mine is not None:
            self.mine.discard(self.path.name)
        _let_go(self.path, self.fd, remove=done, last=last.encode() if last else None)


@dataclass
class Held:
    """A record another writer held when it was looked at, of an entry saying the same
    as ``wanted``, open here to wait on its lock."""

    path: Path
    fd: int
    wanted: MemoryEntry

    def settled(self) -> tuple[dict[str, object] | None, Claim | None] | None:
        """None while its writer holds it; then its outcome (``told``, None when its
        writer was stopped or it is another entry's) or, when its writer died, the
        record as an orphan held by this process (``Claim``)."""
        if self.fd < 0:
            return None, None  # settled before
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return None
        record = _record(self.fd)
        entry = _entry(record)
        if entry is None or not same_entry(entry, self.wanted):
            self.close()
            return None, None
        if os.fstat(self.fd).st_nlink == 0 or "told" in (record or {}):
            self.close()
            told = (record or {}).get("told")
            return (told if isinstance(told, dict) else None), None
        claim, self.fd = Claim(self.path, self.fd, entry), -1  # (the claim's to close)
        return None, claim

    def queued(self) -> bool:
        """Whether its entry is still queued at its writer (not yet being written)."""
        return self.fd >= 0 and (_record(self.fd) or {}).get("queued") == 1

    def close(self) -> None:
        """Close it, once: its number may be another file's after."""
        fd, self.fd = self.fd, -1
        if fd >= 0:
            os.close(fd)


def same_entry(one: MemoryEntry, other: MemoryEntry) -> bool:
    """Whether two entries say the same (an entry submitted again: its id and time aside)."""
    fields = ("lang", "kind", "title", "content", "tags", "images")
    return all(getattr(one, name) == getattr(other, name) for name in fields)


class InFlight:
    """The records of one workspace. A workspace whose folder cannot be written (a
    read-only one, another user's) keeps none: entries are written as before, with
    one warning."""

    def __init__(self, workspace: Path) -> None:
        self.folder = workspace / INFLIGHT_DIR
        self._warned = False
        self._mine: set[str] = set()  # the records this process holds (any thread's)

    def hold(self, entry: MemoryEntry, *, queued: bool = False) -> Claim | None:
        """Record ``entry`` as in flight, locked by this process (None: not kept);
        ``queued``: marked so until its writing begins (``Claim.begin``)."""
        data = json.dumps(_as_record(entry), ensure_ascii=False).encode()
        if queued:
            data = _QUEUED + data[1:]
        try:
            try:
                return self._hold(entry, data)
            except FileNotFoundError:
                if not self.folder.parent.parent.is_dir():
                    return None  # no workspace there: nothing can be written (offline)
                # 0700 whatever the umask: a record others could put here would be
                # finished as this user's memory (``_take`` passes over one it does not
                # own, too). Made on a first record only: a submit's cost
                self.folder.parent.mkdir(mode=0o700, exist_ok=True)
                self.folder.mkdir(mode=0o700, exist_ok=True)
                return self._hold(entry, data)
        except OSError as exc:
            if not self._warned:
                self._warned = True
                logger.warning(
                    "entries in flight are not kept in %s (%s): one whose writer is killed"
                    " is not finished by the next",
                    self.folder,
                    exc.strerror or exc,
                )
            return None

    def held_here(self) -> int:
        """How many records this process holds (each an open file)."""
        return len(self._mine)

    def _hold(self, entry: MemoryEntry, data: bytes) -> Claim:
        name = f"{time.time_ns():020d}{uuid.uuid4().hex[:16]}"  # (sorted: submitted)
        temporary = self.folder / f".{name}.tmp"
        fd = os.open(temporary, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.write(fd, data)  # (no fsync: a killed process's writes stand; a crash of
            # the machine loses the record as it loses the queue, which the SPEC accepts;
            # the fsync halved events/s through the writer: 400 -> 209-251. Measured
            # again, record + folder synced: 0.32-0.35 ms p50 on an idle ext4, but
            # 0.4-3.9 ms p50 and 12-60 ms p90 with other writers busy on the disk, on
            # the submitting host's thread; ext4 commits within 5 s anyway)
            final = self.folder / f"{name}.json"
            self._mine.add(final.name)  # (before it is seen: this process never waits on it)
            os.rename(temporary, final)
        except OSError:
            self._mine.discard(f"{name}.json")
            os.close(fd)
            raise
        return Claim(final, fd, entry, self._mine, queued=data.startswith(_QUEUED))

    def orphans(
        self, batch: Sequence[MemoryEntry] = (), seen: list[Held] | None = None
    ) -> Iterator[Claim]:
        """The records whose writer died, each locked for this process as it is given.
        One another writer holds, of an entry saying the same as one of ``batch``, goes
        to ``seen``, open: that entry waits on it. (Looked at under the folder's lock:
        one its writer finished as this writer took the others before it was passed
        over, and its entry, listed again later, found no record and was merged a
        second time.) Only the records of ``batch``'s entries stay open (and an
        orphan's, locked); another orphan is taken again as its turn comes (``_take``):
        every record open at once, a few hundred dead writers' entries took the
        process's every file, and each one's write then failed for want of a socket."""
        waiting: list[tuple[Path, int | None]] = []  # (an orphan: its lock held, or not)
        for path, fd in self._look_at_each():
            locked = _locked(fd)
            recorded = _entry(_record(fd))
            twin = next((e for e in batch if recorded and same_entry(e, recorded)), None)
            if locked and twin is not None:
                waiting.append((path, fd))
            elif locked:
                os.close(fd)  # (taken again in turn)
                waiting.append((path, None))
            elif twin is not None and seen is not None:
                seen.append(Held(path, fd, twin))
            else:
                os.close(fd)  # (its writer runs)
        try:
            while waiting:
                path, held = waiting.pop(0)
                claim = self._take(path) if held is None else self._taken(path, held)
                if claim is not None:
                    yield claim
        finally:
            for _path, held in waiting:
                if held is not None:
                    os.close(held)

    def _look_at_each(self) -> Iterator[tuple[Path, int]]:
        """Every record but this process's own, open in turn under the folder's lock
        (none removed meanwhile); the caller closes each or keeps it."""
        with _listing(self.folder, fcntl.LOCK_SH):
            try:
                names = sorted(os.listdir(self.folder))
            except OSError:
                return
            for name in names:
                if name in self._mine:
                    continue  # (held by this process: queued, or being written)
                if not name.endswith(".json") and not _stale(self.folder / name):
                    continue  # (being made: locked here, its writer's lock failed and
                    # its entry was kept nowhere, "entries in flight are not kept")
                try:  # (a link: no record)
                    flags = os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW
                    fd = os.open(self.folder / name, flags)
                except OSError:
                    continue
                yield self.folder / name, fd

    def held(self, entry: MemoryEntry, passed: Sequence[str] = ()) -> list[Held]:
        """The records of an entry saying the same as ``entry``, each open to be waited
        on: another writer's, or one whose writer died since the batch looked for
        orphans. One that is no entry's (read whole: under the folder's lock, as
        outcomes are written) is passed: held by another program, every entry waited
        its whole time on it, then failed as written elsewhere."""
        found: list[Held] = []
        with _listing(self.folder, fcntl.LOCK_SH):  # (no record removed meanwhile)
            try:
                names = sorted(os.listdir(self.folder))
            except OSError:
                return []
            for name in names:
                if not name.endswith(".json") or name in self._mine or name in passed:
                    continue  # (this process's own: written by its writer, in turn)
                try:
                    fd = os.open(self.folder / name, os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW)
                except OSError:
                    continue  # (a link, another's: no record; none is removed meanwhile)
                recorded = _entry(_record(fd))  # (each read as it is opened: another
                # entry's closed at once, not every record open at the same time)
                if recorded is not None and same_entry(recorded, entry):
                    found.append(Held(self.folder / name, fd, entry))
                else:
                    os.close(fd)
        return found

    def _take(self, path: Path) -> Claim | None:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW)
        except OSError:
            return None  # finished meanwhile
        if not _locked(fd):
            os.close(fd)
            return None  # its writer runs
        return self._taken(path, fd)

    def _taken(self, path: Path, fd: int) -> Claim | None:
        """The record locked here as ``fd``, as an orphan's (None: removed, or passed)."""
        status = os.fstat(fd)
        if status.st_uid != os.geteuid():
            logger.warning("%s belongs to another user: passed over, not finished", path)
            os.close(fd)  # (left where it is: not this user's to remove)
            return None
        if status.st_nlink == 0 or not path.name.endswith(".json"):
            # finished as we looked, or made by a writer killed before it named it
            stale = path.name.endswith(".tmp") and time.time() - status.st_mtime > _STALE_SECONDS
            _let_go(path, fd, remove=stale)
            return None
        record = _record(fd)
        if record is not None and "told" in record:  # its writer died as it removed it
            _let_go(path, fd, remove=True)
            return None
        try:
            entry = _from_record(record or {})
            entry.validate()
        except (ValueError, KeyError, TypeError) as exc:
            logger.warning("%s is not an entry in flight (%s): removed", path, exc)
            _let_go(path, fd, remove=True)
            return None
        queued = (record or {}).get("queued") == 1  # (a dead writer's, not begun)
        return Claim(path, fd, entry, queued=queued)


def _stale(path: Path) -> bool:
    """Whether ``path`` is a record's temporary file left by a writer killed making it."""
    try:
        return path.name.endswith(".tmp") and time.time() - path.lstat().st_mtime > _STALE_SECONDS
    except OSError:
        return False


def _locked(fd: int) -> bool:
    """Whether the record open as ``fd`` is locked here now (False: its writer runs)."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def _let_go(path: Path, fd: int, *, remove: bool, last: bytes | None = None) -> None:
    """Unlink (when ``remove``) then unlock: a writer that locks it next finds it gone.
    Unlinked under the folder's lock: no writer lists it then fails to open it. ``last``
    (the record with its outcome, for a writer waiting on its lock) is written over it
    under that lock too: the sweeps read records under it held shared, and one read as
    it was written in place was half old and half new (a record of many pages), "not an
    entry": passed over, its entry was merged a second time."""
    if remove:
        with _listing(path.parent, fcntl.LOCK_EX):
            if last is not None:
                with contextlib.suppress(OSError):
                    os.pwrite(fd, last, 0)
            with contextlib.suppress(OSError):
                path.unlink()
    os.close(fd)


@contextlib.contextmanager
def _listing(folder: Path, how: int) -> Iterator[None]:
    """``.agent-client/inflight.lock`` held (``how``) for as long as the block runs; none
    where it cannot be made (a folder that cannot be written keeps no records)."""
    try:
        flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
        fd = os.open(folder.parent / LOCK_NAME, flags, 0o600)
    except OSError:
        yield
        return
    try:
        fcntl.flock(fd, how)
        yield
    finally:
        os.close(fd)


def _record(fd: int) -> dict[str, object] | None:
    """The record's JSON object (None: not one, or not whole yet)."""
    try:
        record = json.loads(os.pread(fd, _MAX_RECORD_BYTES, 0))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def _entry(record: dict[str, object] | None) -> MemoryEntry | None:
    """The entry of a record (None: no record, or not an entry's)."""
    try:
        entry = _from_record(record or {})
        entry.validate()
    except (ValueError, KeyError, TypeError):
        return None
    return entry


def _as_record(entry: MemoryEntry) -> dict[str, object]:
    return {
        "id": entry.id,
        "lang": entry.lang,
        "kind": entry.kind,
        "title": entry.title,
        "content": entry.content,
        "tags": entry.tags,
        "images": entry.images,
        "timestamp": entry.timestamp.isoformat(),
    }


def _from_record(record: dict[str, object]) -> MemoryEntry:
    return MemoryEntry(
        lang=record["lang"],  # type: ignore[arg-type]
        kind=record["kind"],  # type: ignore[arg-type]
        title=record["title"],  # type: ignore[arg-type]
        content=record["content"],  # type: ignore[arg-type]
        tags=record["tags"],  # type: ignore[arg-type]
        images=record["images"],  # type: ignore[arg-type]
        timestamp=datetime.fromisoformat(str(record["timestamp"])),
        id=record["id"],  # type: ignore[arg-type]
    )
