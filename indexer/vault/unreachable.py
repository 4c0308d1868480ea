"""Entries of a vault no tool can reach, counted for ``status`` (CLI and REST) and ``find``.

A name the vault refuses (``ratio 3:2.md``, ``CON.txt``, a control character) or a
folder too deep, made by another program, is left out of every listing, search and
grep with one log line: a person who never reads the log did not know their note was
invisible. Dot-names are hidden by design (``.obsidian``, ``.git``) and not counted.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from indexer.vault.scan import walk_files
from shared.langs import is_lang
from shared.workspace import Workspace

SAMPLE = 5
KEPT_PATHS = 10_000  # each vault's left-out paths kept for the folder view (``in_folder``)
KEPT_WALKS = 10  # a walk's report is kept ten times as long as it took (``RecentWalks``)


@dataclass
class Unreachable:
    """How many entries a walk left out (``walk_files``' ``left_out``), the first few
    (printable), and whether the count was cut short by its time budget; an entry whose
    name ``ignored`` passes is not counted."""

    ignored: Callable[[str], bool] = field(default=lambda name: False, repr=False)
    count: int = 0
    sample: list[str] = field(default_factory=list)
    partial: bool = False
    paths: list[str] = field(default_factory=list, repr=False)  # the first KEPT_PATHS

    def add(self, path: str) -> None:
        if self.ignored(path.rstrip("/").rsplit("/", 1)[-1]):
            return
        self.count += 1
        if len(self.sample) < SAMPLE:
            self.sample.append(path)
        if len(self.paths) < KEPT_PATHS:
            self.paths.append(path)

    def report(self) -> dict[str, Any]:
        return {"count": self.count, "sample": self.sample, "partial": self.partial}

    def in_folder(self, folder: str) -> tuple[dict[str, Any], dict[str, int]]:
        """What of it lies in ``folder`` (a vault path, "" the vault's top): its own
        entries (``report``'s form) and, per subfolder path, the count of those below
        it. (A folder of only such names was listed as "0 notes inside", and opened as
        "No notes here.", while the status named them.) ``partial`` when the walk or the
        kept paths were cut short."""
        prefix = folder + "/" if folder else ""
        own = Unreachable(partial=self.partial or self.count > len(self.paths))
        below: dict[str, int] = {}
        for path in self.paths:
            if not path.startswith(prefix):
                continue
            top, slash, rest = path[len(prefix) :].partition("/")
            if slash and rest:  # (a folder too deep is said as "a/b/": its own name)
                below[prefix + top] = below.get(prefix + top, 0) + 1
            else:
                own.add(path)
        return own.report(), below


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
    return {lang: found.report() for lang, found in _walked(workspace, seconds).items()}


def _walked(workspace: Workspace, seconds: float) -> dict[str, Unreachable]:
    return {
        lang: found
        for lang in workspace.langs()
        if is_lang(lang) and (found := unreachable(workspace.vault_dir(lang), seconds)).count
    }


class RecentWalks:
    """``unreachable_vaults`` walked again only once ``KEPT_WALKS`` times its last walk's
    time went by (REST ``/status``): the page asks for the status at every load, and a
    walk of 100,000 notes took 0.2-0.3 s of the server's one CPU; so a status asked for
    without pause spends at most a tenth of it walking, and one of a vault of 10,000
    notes is at most half a second old."""

    def __init__(self, workspace: Workspace, seconds: float) -> None:
        self.workspace = workspace
        self.seconds = seconds  # each vault's walk, at most
        self._lock = threading.Lock()
        self._walked: tuple[float, dict[str, Unreachable]] | None = None  # (until, found)

    def _recent(self) -> dict[str, Unreachable]:
        """The last walk's finds while they are kept, else a new walk's (callers share
        them: not to be changed)."""
        with self._lock:  # (two pages at once: one walk)
            walked = self._walked
            if walked is None or time.monotonic() > walked[0]:
                began = time.monotonic()
                found = _walked(self.workspace, self.seconds)
                ended = time.monotonic()
                walked = self._walked = (ended + KEPT_WALKS * (ended - began), found)
            return walked[1]

    def report(self) -> dict[str, dict[str, Any]]:
        """lang -> ``{count, sample, partial}`` (``unreachable_vaults``), kept a while."""
        return {lang: found.report() for lang, found in self._recent().items()}

    def in_folder(self, lang: str, folder: str) -> tuple[dict[str, Any], dict[str, int]]:
        """``Unreachable.in_folder`` of vault ``lang``'s recent walk (the page's folder
        view)."""
        found = self._recent().get(lang)
        return found.in_folder(folder) if found is not None else (Unreachable().report(), {})
