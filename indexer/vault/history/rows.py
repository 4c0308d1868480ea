"""The rows of history as Python sees them: versions, and changes about to be recorded."""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

# The columns ``version_of`` reads, and the join they come from.
VERSION_COLUMNS = (
    "v.id, v.path_id, p.lang, p.path, v.version, v.etag, v.prev_etag, v.op, v.actor,"
    " v.reason, v.at_ms, v.size, v.blob, v.other_path, v.batch, v.pending"
)
VERSIONS_FROM = "FROM versions AS v JOIN paths AS p ON p.id = v.path_id"


@dataclass(frozen=True, slots=True)
class Version:
    """One row of history; ``blob`` is the id of its stored bytes (None: absent)."""

    id: int
    path_id: int
    lang: str
    path: str
    version: int
    etag: str | None
    prev_etag: str | None
    op: str
    actor: str
    reason: str | None
    at_ms: int
    size: int | None
    blob: int | None
    other_path: str | None
    batch: int | None
    pending: bool

    @property
    def at(self) -> str:
        """ISO 8601 in UTC with milliseconds, e.g. ``2026-11-29T20:01:02.345Z``."""
        moment = datetime.fromtimestamp(self.at_ms / 1000, UTC)
        return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")

    def public(self) -> dict[str, Any]:
        """What the ``history`` tool shows of it."""
        shown: dict[str, Any] = {
            "version": self.version,
            "etag": self.etag,
            "op": self.op,
            "actor": self.actor,
            "reason": self.reason,
            "at": self.at,
            "size": self.size,
        }
        if self.other_path is not None:
            shown["moved_to" if self.etag is None else "moved_from"] = self.other_path
        return shown


@dataclass(frozen=True, slots=True)
class Change:
    """A file about to change: its bytes before and after (None: absent); the caller
    may pass the etags (and the sha256 of ``after``) when it knows them already."""

    lang: str
    path: str
    op: str
    before: bytes | None
    after: bytes | None
    other_path: str | None = None
    after_etag: str | None = None
    after_sha: bytes | None = None
    before_etag: str | None = None
    mode: int | None = None  # a file going away: its permissions (``permissions``)


@dataclass(frozen=True, slots=True)
class Seen:
    """A file as another program left it (``data`` None: gone), for ``observe_many``;
    ``unknown``, ``kept``, ``moved_from``, ``moved_to``: as ``HistoryStore.observe``;
    ``mode``: a deletion's permissions, when known (a rename's, at its new path; the
    index's row's, of the text of etag ``mode_of``: kept only if history's latest
    version is that text, not another the file held before or after)."""

    lang: str
    path: str
    data: bytes | None
    unknown: bool
    kept: bool = False
    moved_from: str | None = None
    moved_to: str | None = None
    mode: int | None = None
    mode_of: str | None = None


@dataclass
class Pending:
    """The change rows ``begin`` wrote (its catch-up rows are final at once)."""

    ids: list[int] = field(default_factory=list)
    versions: dict[tuple[str, str], int] = field(default_factory=dict)


@dataclass
class PruneStats:
    versions: int = 0
    blobs: int = 0
    cutoff_ms: int = 0  # what the pass pruned before
    held_ms: int = 0  # how far short of the clock's cut-off (see ``retention.next_cutoff``)


def permissions(info: os.stat_result, folder_fd: int | None) -> int:
    """The permission bits of a file going away (in ``folder_fd``), kept on its row
    (``schema``) for the file restore makes again. History keeps no group: that file
    gets the one a new file there gets (``new_file_group``), so where it is not the
    file's own, its group bits count as its bits for others, as the jobs' outputs do
    (``indexer.jobs.group_bits``): a 0640 note of group A came back 0640 under the
    process's group B, readable by every member of B where only A could read it."""
    return mode_bits(info.st_mode, info.st_gid, folder_fd)


def mode_bits(mode: int, gid: int, folder_fd: int | None) -> int:
    """``permissions`` of a file of ``mode`` and group ``gid`` (as the index kept them)."""
    bits = stat.S_IMODE(mode) & 0o777
    if gid == new_file_group(folder_fd):
        return bits
    return (bits & ~0o070) | ((bits & 0o007) << 3)


def new_file_group(folder_fd: int | None) -> int:
    """The group a file made in ``folder_fd`` gets: the folder's where it is
    set-group-ID, else the process's."""
    if folder_fd is not None:
        try:
            folder = os.fstat(folder_fd)
        except OSError:
            return os.getegid()
        if folder.st_mode & stat.S_ISGID:
            return folder.st_gid
    return os.getegid()


def millis(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def reason_tag(reason: str | None) -> int | None:
    """The indexed hash of a reason's first word (``entry:<id>`` of ``entry:<id> <title>``)."""
    if reason is None:
        return None
    word = reason.split(" ", 1)[0].encode("utf-8")
    return int.from_bytes(hashlib.blake2b(word, digest_size=8).digest(), "big", signed=True)


UNDO_REASON = "undo entry:"  # + the entry's id: the reason of every version undo writes
PUT_BACK = " failed; put back"  # the reason's end on a file a failed undo gave back


def first_word(reason: str | None) -> str | None:
    return None if reason is None else reason.split(" ", 1)[0]


def version_of(row: tuple) -> Version:
    (id_, path_id, lang, path, number, etag, prev, op, actor, reason, at_ms, size, blob, other,
     batch, pending) = row  # fmt: skip
    return Version(
        id_, path_id, lang, path, number, None if etag is None else etag.hex(),
        None if prev is None else prev.hex(), op, actor, reason, at_ms, size, blob, other,
        batch, bool(pending),
    )  # fmt: skip
