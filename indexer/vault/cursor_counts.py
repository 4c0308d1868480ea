"""What a walk ``after`` a cursor passed over, counted only when a page needs it.

A page of ``find`` after a cursor no longer walks what the pages before listed: the
files before the cursor in its folders are passed over by name, and the folders wholly
before it are not opened. Only the last page says ``total`` (the matches before the
cursor too), so only then are those counted: the files passed over by their paths, and
the folders passed over by walking each of them now.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from indexer.vault.names import MAX_DEPTH, MAX_PATH_BYTES
from indexer.vault.scan import walk_files
from shared.errors import VaultError

if TYPE_CHECKING:
    import re2

    from indexer.vault.globs import SpelledGlob, SuffixGlob
    from indexer.vault.sandbox import Target
    from indexer.vault.vault import Vault


class Passed:
    """The files (by folder) and the whole folders a walk passed over (``walk_files``'s
    ``passed``)."""

    def __init__(self) -> None:
        self.files: list[tuple[str, list[str]]] = []
        self.folders: list[str] = []

    def add(self, prefix: str, names: list[str] | None) -> None:
        if names is None:
            self.folders.append(prefix[:-1])
        else:
            self.files.append((prefix, names))

    def matches(
        self,
        vault: Vault,
        target: Target,
        regex: re2._Regexp | SuffixGlob | SpelledGlob,
        max_depth: int | None,
    ) -> int:
        """How many files passed over match ``regex`` (on their paths below ``target``),
        as the walk from ``target`` with ``max_depth`` would have found them."""
        cut = len(target.rel) + 1 if target.rel else 0
        found = 0
        for prefix, names in self.files:
            below = prefix[cut:]
            found += sum(1 for n in names if fits(prefix, n) and regex.fullmatch(below + n))
        for folder in self.folders:
            depth = folder[cut:].count("/") + 1  # (levels below ``target``)
            left = None if max_depth is None else max_depth - depth
            try:
                place_target = vault.sandbox.resolve(target.lang, folder)
                with vault.sandbox.open(place_target) as place:
                    top = place.walk_start()
                    if top is None:
                        continue
                    walk = walk_files(top, folder, max_depth=left)
                    with contextlib.closing(walk) as entries:
                        found += sum(1 for e in entries if regex.fullmatch(e.rel[cut:]))
            except (OSError, VaultError):  # gone since, or now a file: nothing in it
                continue
        return found


def fits(prefix: str, name: str) -> bool:
    """Whether a walk yields file ``name`` of folder ``prefix`` (``scan._usable``'s
    rule: its depth, its path's length in bytes)."""
    return prefix.count("/") < MAX_DEPTH and len((prefix + name).encode()) <= MAX_PATH_BYTES
