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
"""

from __future__ import annotations

import contextlib
import time
from typing import TYPE_CHECKING

from indexer.vault.cursor import check_after
from indexer.vault.reading import MAX_LIMIT, below, check_limit
from indexer.vault.sandbox import Target
from indexer.vault.scan import FileEntry, walk_files
from shared.filetypes import is_text_name

if TYPE_CHECKING:
    from indexer.vault.vault import Vault

FOLDER_MAX_SECONDS = 5.0


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
    the walk ran out of time before counting it: ``counted`` is then false)."""
    check_limit(limit)
    deadline = time.monotonic() + (max_seconds or FOLDER_MAX_SECONDS)
    target = vault.sandbox.resolve(lang, path, allow_root=True)
    listing = _Listing(limit, check_after(after, target.rel, own=True))
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


def _list_level(vault: Vault, target: Target, listing: _Listing) -> None:
    """The folder's own entries, all listed again (the cut walk may have stopped among
    them), and the subfolders it did not reach (their counts None)."""
    listing.own_files()
    with vault.sandbox.open(target) as place:
        top = place.walk_start()
        if top is None:
            return
        walk = walk_files(top, target.rel, folders=True, skip_folder=_is_assets, max_depth=1)
        with contextlib.closing(walk) as entries:
            for entry in entries:
                if entry.is_folder:
                    listing.counts.setdefault(entry.rel, None)
                else:
                    listing.add(entry, below(entry.rel, target.rel))
