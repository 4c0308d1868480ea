"""Undo of a move: the file is renamed back, not written anew and deleted.

An entry that moved a file left two versions: at its old path the departure
(``moved_to``), at its new one the arrival (``moved_from``). Undone file by file, the old
path got the bytes written anew (a temp file, two ``fsync``s) and the new path lost its
file: an undo of a 3,000-note folder move spent most of its time in ``fsync``, and the
note came back under the tools' NFC name, not the one it had on disk (a Mac's NFD: a
sync tool then saw a rename). When the file at the new path still holds exactly the
bytes to put back at the old one, one ``rename`` back does both: the same file, its own
name's spelling (when it still reads as the old name), no data to write. A rename is
atomic; its durability needs both folders synced, which is done once per folder for
the whole undo (``FolderSyncs``) before it answers, not once per file.

History gets the same two versions an undo file by file records (a ``restore`` at the
old path, a ``delete`` at the new), begun with those of the undo's other files (``undo``
records its files in batches, one transaction each). A file the entry rewrote after
moving it (a link that followed), or moved twice, is undone file by file as before.
"""

from __future__ import annotations

import os
import unicodedata
from contextlib import suppress
from types import TracebackType
from typing import TYPE_CHECKING, Any

from indexer.vault import fsops, moves
from indexer.vault.history.store import Change, Version
from indexer.vault.names import needs_lookup
from indexer.vault.recording import Batch
from indexer.vault.sandbox import Target
from shared.errors import ConflictError

if TYPE_CHECKING:
    from indexer.vault.vault import Vault

# A file of an entry to undo: its target, its bytes as checked, the entry's newest version
# of it, the version to go back to (None: the entry made the file), and the entry's
# oldest version of it (how the file came there: a write, or a move from where).
Plan = tuple[Target, bytes | None, Version, Version | None, Version]
MAX_OPEN_FOLDERS = 32  # folders held open to sync at once (descriptors are few)


class FolderSyncs:
    """Folders whose entries changed, each ``fsync``'d once: by ``flush``, before the
    undo answers, or as soon as ``full`` (``MAX_OPEN_FOLDERS`` are waiting)."""

    def __init__(self) -> None:
        self._fds: dict[tuple[int, int], int] = {}

    def add(self, dir_fd: int) -> None:
        info = os.fstat(dir_fd)
        key = (info.st_dev, info.st_ino)
        if key not in self._fds:
            self._fds[key] = os.dup(dir_fd)

    @property
    def full(self) -> bool:
        return len(self._fds) >= MAX_OPEN_FOLDERS

    def flush(self) -> None:
        """Sync every folder waiting (an error is raised once all are closed: a failed
        ``fsync`` is not retried, the caller's change fails)."""
        fds, self._fds = list(self._fds.values()), {}
        try:
            for fd in fds:
                os.fsync(fd)
        finally:
            for fd in fds:
                os.close(fd)

    def __enter__(self) -> FolderSyncs:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None
    ) -> None:
        for fd in self._fds.values():  # (flushed by the caller when all went well)
            os.close(fd)
        self._fds = {}


def pairs(plans: list[Plan]) -> dict[int, int]:
    """For each plan whose file the entry moved away (``moved_to``) and that goes back
    where it was, the plan of the file at its new place when that is to be deleted and
    holds the very bytes to put back (both ways: index -> index)."""
    at = {plan[0].rel: i for i, plan in enumerate(plans)}
    found: dict[int, int] = {}
    for i, (target, current, latest, before, _) in enumerate(plans):
        gone = current is None and latest.etag is None and before is not None
        if not gone or latest.op != "move" or latest.other_path is None:
            continue
        j = at.get(latest.other_path)
        if j is None or j in found:
            continue
        _, there_now, there_latest, there_before, _ = plans[j]
        arrived = there_latest.op == "move" and there_latest.other_path == target.rel
        if arrived and there_before is None and there_now is not None:
            assert before is not None
            if fsops.etag_of(there_now) == before.etag:
                found[i], found[j] = j, i
    return found


def changes(home: Plan, away: Plan, mode: int | None) -> list[Change]:
    """History's two versions of a file renamed back (``move_back``): a ``delete`` at
    its new place (``mode``: the file's, there), a ``restore`` at its old one (as an
    undo file by file records)."""
    target, there, data = home[0], away[0], away[1]
    return [
        Change(there.lang, there.rel, "delete", data, None, mode=mode),
        Change(target.lang, target.rel, "restore", None, data),
    ]


def move_back(
    vault: Vault, home: Plan, away: Plan, batch: Batch, syncs: FolderSyncs, told: list[Target]
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """Rename the file of ``away`` (its new place) back to ``home`` (its old one), as
    undo of both; their results as ``undo`` gives them, both paths added to ``told``
    (the index hears the whole undo's files at once); their history rows (``changes``),
    begun pending in ``batch``, are made final. None, with nothing done, when the two
    places are on two file systems now (a disk mounted in the vault since the move: no
    rename goes between them; each file is undone on its own)."""
    target, _, latest, before, _ = home
    there, data, there_latest, _, _ = away
    assert data is not None and before is not None
    with vault.sandbox.open(there) as src, vault.sandbox.open(target) as dst:
        if src.dir_fd is None:
            raise ConflictError(f"{there.rel} changed while the undo ran; nothing was changed")
        home_fd = dst.base_fd  # (the folder it goes back to, or the nearest one above)
        if home_fd is not None and os.fstat(home_fd).st_dev != os.fstat(src.dir_fd).st_dev:
            return None
        # The name it has there, if it is a spelling of this one (a folder moved whole
        # kept its notes' names as they were on disk), and so for its folders.
        same = unicodedata.normalize("NFC", src.name) == target.name
        name = src.name if same else dst.name
        dst_fd = dst.make_parent(_spellings(vault, there, dst.missing))
        try:
            moves.place_file(src.dir_fd, src.name, dst_fd, name, data, data)
        except ConflictError:
            dst.rollback()
            raise ConflictError(
                f"{target.rel} changed while the undo ran; nothing was changed"
            ) from None
        except BaseException:
            dst.rollback()
            raise
        away_version = batch.done(there.lang, there.rel)
        home_version = batch.done(target.lang, target.rel)
        if there.is_note:  # its images' folder, emptied before it (as a delete does)
            with suppress(OSError):
                os.rmdir(src.assets_name, dir_fd=src.dir_fd)
        syncs.add(src.dir_fd)
        syncs.add(dst_fd)
    told += [there, target]
    away_result = _result(there, there_latest, None, gone=True)
    home_result = _result(target, latest, before, gone=False)
    if away_version is not None and home_version is not None:
        away_result["version"] = away_version
        home_result["version"] = home_version
    return home_result, away_result


def _spellings(vault: Vault, there: Target, missing: list[str]) -> list[str]:
    """The names to make the ``missing`` folders of a file's old place under: a folder
    moved whole kept its subfolders' names as spelled on disk (NFD), and those made
    again to bring its files back take them again (else the tools' NFC names)."""
    names, theirs = list(missing), there.folders
    for k in range(1, min(len(missing), len(theirs)) + 1):
        if theirs[-k] != missing[-k]:
            break  # (the folder the move renamed, or above it)
        if needs_lookup(missing[-k]):
            folder = vault.sandbox.resolve(there.lang, "/".join(theirs[: len(theirs) - k + 1]))
            with vault.sandbox.open(folder) as place:
                names[-k] = place.name
    return names


def _result(target: Target, latest: Version, before: Version | None, *, gone: bool) -> dict:
    return {
        "path": target.rel,
        "from_version": latest.version,
        "to_version": None if before is None else before.version,
        "deleted": gone,
        "unchanged": False,
    }
