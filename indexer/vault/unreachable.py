"""Entries of a vault no tool can reach, counted for ``status`` (CLI and REST) and ``find``.

A name the vault refuses (``ratio 3:2.md``, ``CON.txt``, a control character) or a
folder too deep, made by another program, is left out of every listing, search and
grep with one log line: a person who never reads the log did not know their note was
invisible. Dot-names are hidden by design (``.obsidian``, ``.git``) and not counted.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from indexer.vault.scan import walk_files
from shared.langs import is_lang
from shared.workspace import Workspace

SAMPLE = 5


@dataclass
class Unreachable:
    """How many entries a walk left out (``walk_files``' ``left_out``), the first few
    (printable), and whether the count was cut short by its time budget; an entry whose
    name ``ignored`` passes is not counted."""

    ignored: Callable[[str], bool] = field(default=lambda name: False, repr=False)
    count: int = 0
    sample: list[str] = field(default_factory=list)
    partial: bool = False

    def add(self, path: str) -> None:
        if self.ignored(path.rstrip("/").rsplit("/", 1)[-1]):
            return
        self.count += 1
        if len(self.sample) < SAMPLE:
            self.sample.append(path)

    def report(self) -> dict[str, Any]:
        return {"count": self.count, "sample": self.sample, "partial": self.partial}


def _dot_name(name: str) -> bool:
    return name.startswith(".")  # hidden by design


def unreachable(vault_dir: Path, seconds: float = 2.0) -> Unreachable:
    """Walk ``vault_dir`` (at most ``seconds``) for the entries no tool can reach."""
    found = Unreachable(_dot_name)
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


def unreachable_vaults(workspace: Workspace, seconds: float = 2.0) -> dict[str, dict[str, Any]]:
    """lang -> ``{count, sample, partial}`` of each vault holding entries no tool can
    reach (each walked for at most ``seconds``); the vaults without any are left out."""
    return {
        lang: found.report()
        for lang in workspace.langs()
        if is_lang(lang) and (found := unreachable(workspace.vault_dir(lang), seconds)).count
    }
