"""The files and folders of a vault no tool can reach, for ``indexer status``.

A name the vault refuses (``ratio 3:2.md``, ``CON.txt``, a control character) or a
folder too deep, made by another program, is left out of every listing, search and
grep with one log line: a person who never reads the log did not know their note was
invisible. Dot-names are hidden by design (``.obsidian``, ``.git``) and not counted.
"""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from indexer.vault.scan import walk_files

SAMPLE = 5


@dataclass
class Unreachable:
    """How many entries of a vault no tool reaches, the first few (printable), and
    whether the count was cut short by its time budget."""

    count: int = 0
    sample: list[str] = field(default_factory=list)
    partial: bool = False

    def add(self, path: str) -> None:
        if path.rstrip("/").rsplit("/", 1)[-1].startswith("."):
            return  # hidden by design
        self.count += 1
        if len(self.sample) < SAMPLE:
            self.sample.append(path)


def unreachable(vault_dir: Path, seconds: float = 2.0) -> Unreachable:
    """Walk ``vault_dir`` (at most ``seconds``) for the entries no tool can reach."""
    found = Unreachable()
    try:
        top = os.open(vault_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return found  # no vault yet, or one the caller reports as unreadable
    deadline = time.monotonic() + seconds
    try:
        walk = walk_files(top, "", folders=True, left_out=found.add)
        with contextlib.closing(walk) as entries:
            for _ in entries:
                if time.monotonic() > deadline:
                    found.partial = True
                    break
    finally:
        os.close(top)
    return found
