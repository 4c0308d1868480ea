"""A folder as the page shows it, from one walk: its own text files, its other files
(pictures: an Obsidian vault keeps them in folders of their own, which listed as
empty), and each of its subfolders with how many text files lie below it
(``*.assets/`` folders left out).

The page listed a folder by calling ``find`` once per text suffix (six walks of the
whole subtree, each cut at 10,000 files) and then ``summary`` once per subfolder; this
walks once, and the REST route adds the subfolders' abstracts (``Summaries.abstracts``).
A walk past ``FOLDER_MAX_SECONDS`` stops counting (``counted: false``, the counts of the
subfolders it did not finish are None); the folder's own entries are then listed by a
second walk, one level deep, so that nothing in the folder is left unreachable.

A server's index counts the subfolders' files instead, while it can vouch for them
(``Vault.folder_counter``, ``indexer.index.folder_counts``): then only that one-level
walk is made, and the few files the index is in doubt about are looked at on disk; the
numbers are the walk's.
"""

from __future__ import annotations

import contextlib
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from indexer.vault.cursor import check_after
from indexer.vault.reading import MAX_LIMIT, below, check_limit
from indexer.vault.sandbox import Target
from indexer.vault.scan import FileEntry, walk_files
from shared.errors import VaultError
from shared.filetypes import is_text_name

if TYPE_CHECKING:
    from indexer.vault.vault import Vault

FOLDER_MAX_SECONDS = 5.0


@dataclass(frozen=True)
class IndexedCounts:
    """What an index says of a folder's subfolders: ``counts``, the text files below each
    (by vault path) but those in ``changed``, which it cannot vouch for (their paths)."""

    counts: dict[str, int]
    changed: tuple[str, ...]


# ``folder_counter(lang, folder)``: the index's counts, or None when it cannot vouch.
FolderCounter = Callable[[str, str], IndexedCounts | None]


def _is_assets(name: str) -> bool:
    return name.endswith(".assets")


class _Listing:
    """What the walk has seen so far. The folder's own files come first in the walk, by
    name: one sequence (text and other files together) that ``after`` and ``limit`` cut
    into pages, ``total`` counts whole."""

    def __init__(self, limit: int, after: str | None) -> None:
        self.limit = limit
        self.after = after
        self.counts: dict[str, int | None] = {}  # direct subfolder -> text files below
        self.own_files()

    def own_files(self) -> None:
        """(Again:) none of the folder's own files seen yet."""
        self.files: list[str] = []
        self.others: list[str] = []  # the folder's own files that are not text
        self.total = 0
        self.last: str | None = None  # the page's last path
        self.truncated = False

    def add(self, entry: FileEntry, rest: str) -> None:
        top, slash, _ = rest.partition("/")
        if entry.is_folder:
            if not slash:
                self.counts.setdefault(entry.rel, 0)
            return
        if not slash:
            self.total += 1
            if self.after is not None and entry.rel <= self.after:
                return
            if len(self.files) + len(self.others) < self.limit:
                (self.files if is_text_name(rest) else self.others).append(entry.rel)
                self.last = entry.rel
            else:
                self.truncated = True
            return
        if not is_text_name(rest):
            return
        folder = entry.rel[: len(entry.rel) - len(rest)] + top
        self.counts[folder] = (self.counts.get(folder) or 0) + 1


def list_folder(
    vault: Vault,
    lang: str,
    path: str = "",
    limit: int = MAX_LIMIT,
    max_seconds: float = 0,
    after: str | None = None,
) -> dict:
    """``{path, files, others, total, folders: [{path, files}], truncated, counted}``:
    a page of the folder's own files, text (``files``) and other (``others``), at most
    ``limit`` of both together, by path, those after the path ``after`` (``cursor``);
    ``truncated`` when more follow, and then ``next_after``, the page's last path;
    ``total`` counts all of them. And every subfolder
    (but ``*.assets/``), each with the count of text files anywhere below it (None when
    the walk ran out of time before counting it: ``counted`` is then false); the
    index's counts when it vouches for them (``Vault.folder_counter``), the same."""
    check_limit(limit)
    deadline = time.monotonic() + (max_seconds or FOLDER_MAX_SECONDS)
    target = vault.sandbox.resolve(lang, path, allow_root=True)
    listing = _Listing(limit, check_after(after, target.rel, own=True))
    counter = vault.folder_counter
    indexed = counter(lang, target.rel) if counter is not None else None
    if indexed is not None:
        _list_level(vault, target, listing, indexed)
        return _result(target, listing, True)
    counted = True
    current: str | None = None  # the subfolder being counted
    with vault.sandbox.open(target) as place:
        top = place.walk_start()
        if top is not None:
            walk = walk_files(top, target.rel, folders=True, skip_folder=_is_assets)
            with contextlib.closing(walk) as entries:
                for entry in entries:
                    rest = below(entry.rel, target.rel)
                    if entry.is_folder and "/" not in rest:
                        current = entry.rel
                    listing.add(entry, rest)
                    if time.monotonic() > deadline:
                        counted = False
                        break
    if not counted:
        if current is not None:
            listing.counts[current] = None
        _list_level(vault, target, listing)
    return _result(target, listing, counted)


def _result(target: Target, listing: _Listing, counted: bool) -> dict:
    folders = [{"path": p, "files": n} for p, n in sorted(listing.counts.items())]
    result = {
        "path": target.rel,
        "files": listing.files,
        "others": listing.others,
        "total": listing.total,
        "folders": folders,
        "truncated": listing.truncated,
        "counted": counted,
    }
    if listing.truncated:
        result["next_after"] = listing.last
    return result


def _list_level(
    vault: Vault, target: Target, listing: _Listing, indexed: IndexedCounts | None = None
) -> None:
    """The folder's own entries, all listed again (the cut walk may have stopped among
    them), and the subfolders it did not reach (their counts None); with ``indexed``,
    every subfolder with the index's count and the files it is in doubt about that are
    on disk."""
    listing.own_files()
    with vault.sandbox.open(target) as place:
        top = place.walk_start()
        if top is None:
            return
        walk = walk_files(top, target.rel, folders=True, skip_folder=_is_assets, max_depth=1)
        with contextlib.closing(walk) as entries:
            for entry in entries:
                if entry.is_folder and indexed is not None:
                    listing.counts[entry.rel] = indexed.counts.get(entry.rel, 0)
                elif entry.is_folder:
                    listing.counts.setdefault(entry.rel, None)
                else:
                    listing.add(entry, below(entry.rel, target.rel))
    if indexed is not None:
        prefix = target.rel + "/" if target.rel else ""
        for path in indexed.changed:
            folder = prefix + below(path, target.rel).partition("/")[0]
            count = listing.counts.get(folder)
            if count is not None and _is_file(vault, target.lang, path):
                listing.counts[folder] = count + 1


def _is_file(vault: Vault, lang: str, path: str) -> bool:
    """Whether ``path`` is a regular file on disk (reached as the walk reaches it: its
    folders by descriptor, its name in any Unicode form; a link is no file)."""
    try:
        with vault.sandbox.open(vault.sandbox.resolve(lang, path)) as place:
            info = place.lstat()
    except (VaultError, OSError):
        return False
    return info is not None and stat.S_ISREG(info.st_mode)
