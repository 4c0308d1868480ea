"""The memory folder of one vault, reached only through the Vault MCP tools.

What the SDK's tool gets from its file system, this gets from the tools: what a path is
(``stat``; a path through a file is "blocked", as ``ENOTDIR`` is for the SDK), a file as
the model sees it (``read``, etag kept for ``if_match``), writes that never overwrite a
change made meanwhile (``write`` with ``if_match``), listings (``find`` with ``dirs``,
two levels, and ``sizes``: the sizes the model sees, without a ``read`` per note), deletes
of whole folders (their files, then their folders, deepest first) and moves (``move``).
The vault's own refusals become ``ToolError``s that keep their code. Each change is kept
in the vault's history with ``reason="memory_tool:<command>"``.
"""

from __future__ import annotations

import asyncio
import re
import time
import unicodedata
from collections.abc import Awaitable, Sequence
from enum import Enum
from pathlib import PurePosixPath
from typing import TypeVar

from anthropic.lib.tools import ToolError

from agent_client.claude_memory import bulk, files, texts, waits, way
from agent_client.claude_memory.paths import ROOT as ROOT_SHOWN
from agent_client.claude_memory.paths import MemoryPath, vault_path
from agent_client.claude_memory.texts import ListedItem, Listing
from agent_client.repeats import noting
from agent_client.results import FindResult
from agent_client.vault import Vault
from shared.errors import (
    ConflictError,
    IndexerOfflineError,
    InvalidArgumentError,
    NotFoundError,
    TooLargeError,
    VaultError,
)
from shared.filetypes import is_text_name
from shared.images import ASSETS_SUFFIX, IMAGE_SUFFIXES

MAX_LISTED = 10_000  # the vault's largest find
MAX_DELETE_ROUNDS = 100  # of MAX_LISTED entries each
_ONLY_DOT_NAMES = "**/.*"  # a find that lists nothing (the walk yields no dot-name)
CONCURRENT_READS = 8
# ``find`` again while each asks measures notes the server had no time for (it keeps
# what it measured): a 20,000-note folder took ~18,000 reads (50-127 s); each round
# costs the server its measuring time (``FIND_SIZES_MAX_SECONDS``) per level at most
MAX_SIZE_ROUNDS = 5
_LEVELS = ("*", "*/*")
MOVE_WAITS = 10  # call timeouts a move that gave no answer is waited for (5 min by default)
T = TypeVar("T")


class Kind(Enum):
    FILE = "file"
    DIR = "dir"
    MISSING = "missing"
    BLOCKED = "blocked"  # a folder on the way is a file


class Changed(Exception):
    """A write's ``if_match`` no longer holds: someone changed (or made) the file."""


class MemoryStore:
    """The memory folder ``folder`` of the vault behind ``vault`` (one command's worth)."""

    def __init__(
        self, vault: Vault, folder: str, *, reason: str | None = None, call_timeout: float = 30.0
    ) -> None:
        self.vault = vault
        self.folder = folder
        self.call_timeout = call_timeout  # the client's, for one call
        self.move_wait = MOVE_WAITS * call_timeout  # and more for a move (``waits``)
        self.reason = reason  # kept in history with each change ("memory_tool:<command>")
        self.changed = False  # whether this command already changed something
        # whether a change was sent (or may have been) and its answer never came (the
        # indexer went offline meanwhile): it may have been made
        self.unsure = False
        self.deleted = 0  # files a folder's delete deleted so far (said if it fails)
        self.unanswered = 0  # changes sent whose answer never came: they may have landed

    def _vp(self, parts: tuple[str, ...]) -> str:
        return vault_path(self.folder, parts)

    async def _changing(self, call: Awaitable[T]) -> T:
        """Await a call that changes the vault; one the indexer did not answer, gone
        offline, leaves ``unsure`` set if a request of it left this client (or nothing
        is known of its requests): it may have landed (the tool says so). One none of
        whose requests connected was not made."""
        with noting() as sending:
            try:
                return await call
            except IndexerOfflineError:
                self.unsure = self.unsure or sending.sent > 0
                self.unanswered += sending.sent > 0
                raise

    async def kind(self, parts: tuple[str, ...], shown: str) -> Kind:
        """What ``parts`` is; the folder itself is always a folder (made on first write)."""
        if not parts:
            return Kind.DIR
        try:
            found = await self.vault.stat(self._vp(parts))
        except VaultError as err:
            # The vault refuses a path through a file; anything else is a real refusal.
            if err.code == "forbidden_path" and await self._blocked(parts, shown):
                return Kind.BLOCKED
            raise self._refusal(err, shown) from None
        if found["type"] == "file":
            return Kind.FILE
        return Kind.DIR if found["type"] == "dir" else Kind.MISSING

    async def _blocked(self, parts: tuple[str, ...], shown: str) -> bool:
        try:
            return await way.through_file(self.vault, self.folder, parts)
        except VaultError as err:
            raise self._refusal(err, shown) from None

    async def load(self, path: MemoryPath) -> files.MemoryFile | Kind:
        """The file as the model sees it, or what the path is instead."""
        if path.is_root:
            return Kind.DIR
        try:
            got = await self.vault.read(self._vp(path.parts))
        except NotFoundError:
            return Kind.MISSING
        except VaultError as err:
            # A folder (invalid_argument) or a path through a file (forbidden_path)?
            if err.code in ("invalid_argument", "forbidden_path"):
                kind = await self.kind(path.parts, path.shown)
                if kind is not Kind.FILE:
                    return kind
            raise self._refusal(err, path.shown) from None
        if got.get("encoding", "utf-8") != "utf-8":
            raise ToolError(f"invalid_argument: {path.shown} is not a UTF-8 text file")
        return files.seen(path.name, got["content"], got["etag"])

    async def save(self, path: MemoryPath, text: str, meta: dict, etag: str) -> None:
        """Write what the model sees as ``text``; ``etag`` "" when it must not exist yet.
        ``Changed`` when the file is no longer the one read (nothing written then)."""
        try:
            content = files.stored(path.name, text, meta)
            write = self.vault.write(
                self._vp(path.parts), content, if_match=etag, reason=self.reason
            )
            await self._changing(write)
        except ConflictError:
            raise Changed from None
        except VaultError as err:
            raise self._refusal(err, path.shown) from None
        self.changed = True

    async def create(self, path: MemoryPath, text: str) -> Kind | None:
        """Write a new file; None when done, else what is already at ``path`` (a file, a
        folder, or a file on the way): then nothing was written."""
        try:
            content = files.stored(path.name, text)
            write = self.vault.write(self._vp(path.parts), content, if_match="", reason=self.reason)
            await self._changing(write)
        except ConflictError:
            return Kind.FILE
        except VaultError as err:
            # A folder there (invalid_argument), or a file on the way (forbidden_path)?
            if err.code in ("invalid_argument", "forbidden_path"):
                kind = await self.kind(path.parts, path.shown)
                if kind is not Kind.MISSING:
                    return kind
            raise self._refusal(err, path.shown) from None
        self.changed = True
        return None

    async def listing(self, path: MemoryPath) -> Listing:
        """The folder's files and folders two levels deep, hidden ones left out, in the
        SDK's order, with the sizes the model would see; past the vault's largest
        ``find`` on a level, the first ``MAX_LISTED`` of it (``cut``)."""
        base = self._vp(path.parts)
        try:
            levels = await self._find_levels(base, _LEVELS)
        except NotFoundError:
            if path.is_root:
                return Listing([])  # the folder appears with the first file written
            raise ToolError(
                f"The path {path.shown} does not exist. Please provide a valid path."
            ) from None
        except VaultError as err:
            raise self._refusal(err, path.shown) from None
        prefix = unicodedata.normalize("NFC", base) + "/"  # the vault answers in NFC
        found = [p.removeprefix(prefix) for level in levels for p in level["paths"]]
        cut = any(level["truncated"] for level in levels)
        if cut:  # a level's walk gives its folders after all its files: one cut off may
            # hold items the next level lists, shown under a folder the model can view
            parents = {rel.split("/", 1)[0] + "/" for rel in found if "/" in rel.rstrip("/")}
            found.extend(sorted(parents.difference(found)))
        sizes: dict[str, int | None] = {**_given_sizes(levels, prefix, found)}
        sizes.update(await self._sized_again(base, prefix, found, sizes, levels))
        # A server without find's sizes gives none; today's leaves out a file gone since
        # it listed it and the notes it had no time to measure even when asked again:
        # each is measured by a call of its own (a file gone is then left out).
        unsized = [rel for rel in found if rel not in sizes]
        gate = asyncio.Semaphore(CONCURRENT_READS)
        measured = await asyncio.gather(*(self._size(path, rel, gate) for rel in unsized))
        sizes.update(zip(unsized, measured, strict=True))
        items = [
            ListedItem(rel, size)
            for rel in texts.listing_order(found)
            if (size := sizes[rel]) is not None
        ]
        return Listing(items, cut=cut)

    async def _find_levels(self, base: str, patterns: Sequence[str]) -> list[FindResult]:
        finds = (self.vault.find(p, base, MAX_LISTED, dirs=True, sizes=True) for p in patterns)
        return list(await asyncio.gather(*finds))

    async def _sized_again(
        self,
        base: str,
        prefix: str,
        found: list[str],
        sizes: dict[str, int | None],
        levels: Sequence[FindResult],
    ) -> dict[str, int]:
        """The sizes of the notes ``find`` had no time to measure, from ``find`` asked
        again (only the levels that lack some) while each round measures more: the
        server keeps what it measured and goes on past it. Stops after
        ``MAX_SIZE_ROUNDS``, or at a round that measured none of them (notes changed
        within the server's settling time are never kept: measured again, from the
        start, each round); the caller measures what is left."""
        more: dict[str, int] = {}
        if not all("sizes" in level for level in levels):
            return more  # a server without find's sizes
        if not any(level.get("body_sizes") for level in levels):
            return more  # no time for even one note: none the next round either
        for _ in range(MAX_SIZE_ROUNDS):
            unsized = [rel for rel in found if rel not in sizes and rel not in more]
            if not unsized:
                break
            patterns = {_LEVELS[min(rel.count("/"), 1)] for rel in unsized}
            try:
                levels = await self._find_levels(base, sorted(patterns))
            except VaultError:
                break  # (gone meanwhile, or offline): the caller's reads say so
            measured = _given_sizes(levels, prefix, unsized)
            if not measured:
                break
            more.update(measured)
        return more

    async def _size(self, path: MemoryPath, rel: str, gate: asyncio.Semaphore) -> int | None:
        """What the listing shows: a folder's constant, a file's size as the model sees it
        (UTF-8 bytes; a note's body); None when it vanished meanwhile. A refusal keeps
        its code: one file must not turn the whole listing into a bare exception."""
        if rel.endswith("/"):
            return texts.DIRECTORY_SIZE
        vp = self._vp((*path.parts, *rel.split("/")))
        async with gate:
            try:
                if files.is_note(rel):
                    size = await self._note_size(vp, rel)
                    if size is not None:
                        return size
                found = await self.vault.stat(vp)
            except (NotFoundError, InvalidArgumentError):
                return None
            except VaultError as err:
                raise self._refusal(err, f"{path.shown.rstrip('/')}/{rel}") from None
        return found["size"] if found["type"] == "file" else None

    async def _note_size(self, vp: str, rel: str) -> int | None:
        """A note's size as the model sees it (its body's UTF-8 bytes); None for a note
        too large to read (over the vault's limit, made by another program), whose size
        on disk ``stat`` gives instead, as the SDK's listing shows it."""
        try:
            got = await self.vault.read(vp)
        except TooLargeError:
            return None
        if got.get("encoding", "utf-8") == "utf-8":
            seen = files.seen(rel, got["content"], got["etag"])
            return len(seen.text.encode("utf-8"))
        return int(got["size"])

    async def delete(self, path: MemoryPath, kind: Kind) -> tuple[int, list[str]]:
        """Delete a file, or a folder with everything in it (files first, then the
        folders, deepest first; the memory folder itself stays). A folder holding a file
        the vault does not manage is refused before anything is deleted. Returns how many
        entries no tool reaches stay, and the first few (emptying the memory folder leaves
        them, and so their folders)."""
        vp = self._vp(path.parts)
        if kind is Kind.FILE:
            await self._quietly(self._changing(self.vault.delete(vp, reason=self.reason)), path)
            self.changed = True
            return 0, []
        rounds = 0
        while True:
            try:
                found = await self.vault.find("**", vp, MAX_LISTED, dirs=True)
            except NotFoundError:
                if path.is_root:
                    return 0, []
                raise ToolError(f"The path {path.shown} does not exist") from None
            except VaultError as err:
                raise self._refusal(err, path.shown) from None
            rounds += 1
            if rounds == 1 and found["truncated"] and not path.is_root:
                found = await self._whole_count(path, found)
            entries = found["paths"]
            file_paths = [p for p in entries if not p.endswith("/")]
            self._check_deletable(path, found, file_paths)
            await self._delete_each(path, file_paths)
            folders = [p.rstrip("/") for p in entries if p.endswith("/")]
            # emptying the memory folder: a folder holding what no tool reaches (another
            # program's) stays, as those files do; a listing cut short lists a folder
            # before all it holds: the next round takes it
            may_stay = path.is_root or found["truncated"]
            for depth in sorted({p.count("/") for p in folders}, reverse=True):
                level = [p for p in folders if p.count("/") == depth]  # deepest first
                await self._delete_each(path, level, folders=True, may_stay=may_stay)
            if not found["truncated"] or rounds >= MAX_DELETE_ROUNDS:
                break
        if not path.is_root:
            deleting = self._changing(self.vault.delete(vp, reason=self.reason))
            await self._quietly(deleting, path, missing_ok=True)
            self.changed = True
        below = unicodedata.normalize("NFC", vp) + "/"
        sample = [f"{path.shown}/{p.removeprefix(below)}" for p in found.get("unlisted_sample", [])]
        return found.get("unlisted", 0), sample

    async def _delete_each(
        self, path: MemoryPath, entries: list[str], *, folders: bool = False, may_stay: bool = False
    ) -> None:
        """Delete ``entries`` (vault paths of files, or of ``folders``, below ``path``), a
        few at once (``bulk``); one gone meanwhile is no fault (a note's images go with
        it), nor with ``may_stay`` a folder that is not empty. On a failure no more are
        started, and the answer says how many files were deleted (``deleted``)."""

        async def delete_one(entry: str) -> None:
            try:
                await self._changing(self.vault.delete(entry, reason=self.reason))
            except NotFoundError:
                return
            except VaultError as err:
                if may_stay and err.code == "invalid_argument":
                    return
                raise
            self.changed = True
            self.deleted += 0 if folders else 1

        try:
            await bulk.each(delete_one, entries)
        except VaultError as err:
            raise self._refusal(err, path.shown, partly=self.changed) from None

    async def _whole_count(self, path: MemoryPath, found: FindResult) -> FindResult:
        """A first listing cut short counts what no tool reaches only as far as it went:
        count it below the whole folder (a walk that lists nothing, as no name it yields
        is a dot-name) before anything is deleted."""
        try:
            whole = await self.vault.find(_ONLY_DOT_NAMES, self._vp(path.parts), 1, dirs=True)
        except VaultError as err:
            raise self._refusal(err, path.shown) from None
        if "unlisted" not in whole:
            return found  # (a server without the count)
        return {
            **found,
            "unlisted": whole["unlisted"],
            "unlisted_sample": whole.get("unlisted_sample", []),
        }

    def _check_deletable(self, path: MemoryPath, found: FindResult, file_paths: list[str]) -> None:
        """Refuse a folder's delete before anything in it is deleted when it holds what
        the vault does not delete (a PDF) or cannot reach (a hidden file, a name it
        refuses, a folder too deep: made by another program): its folders would stay."""
        below = unicodedata.normalize("NFC", self._vp(path.parts)) + "/"
        done = "" if not self.changed else "; the files before it were deleted"
        alien = [p for p in file_paths if not _deletable(p)]
        if alien:
            raise ToolError(
                f"forbidden_path: {path.shown} holds files the vault does not delete "
                f"(only notes, text files and images): {alien[0].removeprefix(below)}{done}"
            )
        unlisted = found.get("unlisted", 0)
        if unlisted and not path.is_root:  # (emptying the memory folder leaves them)
            sample = ", ".join(
                f"'{p.removeprefix(below)}'" for p in found.get("unlisted_sample", [])
            )
            raise ToolError(
                f"forbidden_path: {path.shown} holds {unlisted} file(s) or folder(s) no tool"
                f" can reach (hidden, named as the vault refuses, or too deep: {sample});"
                f" a person can remove them with another program{done}"
            )

    async def move(self, old: MemoryPath, new: MemoryPath) -> None:
        """``move`` a file or folder; ``Changed`` if ``new`` appeared meanwhile."""
        sent = time.monotonic()
        try:
            move = self.vault.move(self._vp(old.parts), self._vp(new.parts), reason=self.reason)
            await self._changing(move)
        except IndexerOfflineError as err:
            if not waits.timed_out(err):
                raise
            # no answer in time: the server goes on with the move; wait to see it made
            if not await waits.until(lambda: self._moved(old, new), self.move_wait):
                raise ToolError(  # (the time waited: the move's call and every look after it)
                    f"timeout: the indexer gave no answer to the rename within"
                    f" {time.monotonic() - sent:.1f} s, though it answers other"
                    f" calls: it may still be moving {old.shown} (a large folder takes long)"
                    f" or have refused it; view {old.shown} and {new.shown} later to see"
                    " whether it was renamed"
                ) from None
            self.unsure = False  # seen made
        except ConflictError as err:
            if await self.kind(new.parts, new.shown) in (Kind.FILE, Kind.DIR):
                raise Changed from None
            raise self._refusal(err, f"{old.shown} -> {new.shown}") from None  # (its images)
        except NotFoundError:
            raise ToolError(f"The path {old.shown} does not exist") from None
        except VaultError as err:
            raise self._refusal(err, f"{old.shown} -> {new.shown}") from None
        self.changed = True

    async def _moved(self, old: MemoryPath, new: MemoryPath) -> bool:
        """Whether a move is seen made: ``old`` gone, ``new`` there."""
        gone = await self.kind(old.parts, old.shown) is Kind.MISSING
        return gone and await self.kind(new.parts, new.shown) in (Kind.FILE, Kind.DIR)

    def _refusal(self, err: VaultError, shown: str, *, partly: bool = False) -> Exception:
        """A vault refusal for the model: its code, the path as the model wrote it, why,
        with the vault's paths in the message spelled as the model's (``/memories/...``).
        An unreachable indexer stays ``IndexerOfflineError`` (the tool words it once)."""
        if isinstance(err, IndexerOfflineError):
            return err
        tail = f" ({self.progress()} before this)" if partly else ""
        # The folder as a path: before a "/", or quoted (a bare word may be prose: with
        # folder "notes", "only .md notes and text files" read "only .md /memories and...")
        folder = re.escape(self.folder)
        inside = re.compile(rf"(?<![\w./-]){folder}(?=/)|(?<=['\"]){folder}(?=['\"])")
        message = inside.sub(ROOT_SHOWN, err.message)
        return ToolError(f"{err.code}: {shown}: {message}{tail}")

    def progress(self) -> str:
        """What a command stopped part way did: a folder's delete, how many files."""
        if self.deleted:
            maybe = f", {self.unanswered} more may have been" if self.unanswered else ""
            done = f"{self.deleted} file(s) of the folder were deleted{maybe}"
            return f"{done}, the others are still there"
        return "part of the command was done"

    async def has_tool(self, name: str) -> bool:
        return name in await self.vault.session.tool_names()

    async def _quietly(
        self, call: Awaitable[T], path: MemoryPath, *, missing_ok: bool = False
    ) -> T | None:
        try:
            return await call
        except NotFoundError:
            if missing_ok:
                return None  # e.g. a note's .assets folder, deleted with the note
            raise ToolError(f"The path {path.shown} does not exist") from None
        except VaultError as err:
            raise self._refusal(err, path.shown, partly=self.changed) from None


def _given_sizes(levels: Sequence[FindResult], prefix: str, found: list[str]) -> dict[str, int]:
    """What the listing shows, from ``find``'s sizes: a folder's constant, a note's body
    as the model sees it (its size on disk when the vault gives none: not UTF-8, too
    large to read), another file's size. A file the vault gave no size is not in it."""
    files: dict[str, int] = {}
    bodies: dict[str, int] = {}
    for level in levels:
        files.update(level.get("sizes", {}))
        bodies.update(level.get("body_sizes", {}))
    sizes: dict[str, int] = {}
    for rel in found:
        if rel.endswith("/"):
            sizes[rel] = texts.DIRECTORY_SIZE
        elif (size := bodies.get(prefix + rel, files.get(prefix + rel))) is not None:
            sizes[rel] = size
    return sizes


def _deletable(vault_rel: str) -> bool:
    """What the vault's ``delete`` removes: notes, text files, images in ``*.assets/``."""
    folder, _, name = vault_rel.rpartition("/")
    in_assets = folder.endswith(ASSETS_SUFFIX)
    return is_text_name(name) or (
        in_assets and PurePosixPath(name).suffix.lower() in IMAGE_SUFFIXES
    )
