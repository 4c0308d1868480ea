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
    return {
        lang: found.report()
        for lang in workspace.langs()
        if is_lang(lang) and (found := unreachable(workspace.vault_dir(lang), seconds)).count
    }


@dataclass
class _KeptWalk:
    """One vault's last walk: what it found (None: nothing unreachable), kept ``until``,
    answered while walked again up to ``recent`` (both 0: never walked, as no monotonic
    time is); the lock is held by the one walking it."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    until: float = 0.0
    recent: float = 0.0
    report: Unreachable | None = None


class RecentWalks:
    """``unreachable_vaults`` walked again only once ``KEPT_WALKS`` times its last walk's
    time went by (REST ``/status``): the page asks for the status at every load, and a
    walk of 100,000 notes took 0.2-0.3 s of the server's one CPU; so a status asked for
    without pause spends at most a tenth of it walking, and one of a vault of 10,000
    notes is at most a second old (below).

    Kept per vault, each walked outside any lock the others need: one lock over the
    whole walk made a first call on N large vaults hold every caller for all N walks.
    A vault whose keep is out but whose walk is recent (as long again) answers its last
    report at once and is walked again behind it, on a thread of its own (the page's
    folder view asks at every click: at 100,000 notes one click in a few waited half a
    second); so a report answered is at most twice its keep old. A vault never walked,
    or walked longer ago (a report of a minute ago showed a name fixed since), is waited
    for (one walk for callers at once). ``walk`` is ``unreachable``: a test may slow it
    down."""

    def __init__(
        self,
        workspace: Workspace,
        seconds: float,
        walk: Callable[[Path, float], Unreachable] = unreachable,
    ) -> None:
        self.workspace = workspace
        self.seconds = seconds  # each vault's walk, at most
        self._walk = walk
        self._lock = threading.Lock()  # (over ``_kept`` only, never over a walk)
        self._kept: dict[str, _KeptWalk] = {}

    def report(self) -> dict[str, dict[str, Any]]:
        """lang -> the vault's last report while it is kept, else a new walk's, for the
        vaults with entries no tool can reach (callers share them: not to be changed)."""
        found: dict[str, dict[str, Any]] = {}
        for lang in self.workspace.langs():
            if is_lang(lang) and (walked := self._vault(lang)) is not None:
                found[lang] = walked.report()
        return found

    def in_folder(self, lang: str, folder: str) -> tuple[dict[str, Any], dict[str, int]]:
        """``Unreachable.in_folder`` of vault ``lang``'s recent walk (the page's folder
        view; that vault alone is walked, when its walk is no longer kept)."""
        found = self._vault(lang) if is_lang(lang) else None
        return found.in_folder(folder) if found is not None else (Unreachable().report(), {})

    def _vault(self, lang: str) -> Unreachable | None:
        with self._lock:
            kept = self._kept.setdefault(lang, _KeptWalk())
        now = time.monotonic()
        if now <= kept.until:
            return kept.report
        if now > kept.recent:  # never walked, or long ago: nothing to answer but its walk
            with kept.lock:  # (one walk for callers at once: the others find it kept)
                if time.monotonic() > kept.until:
                    self._walk_into(kept, lang)
            return kept.report
        if kept.lock.acquire(blocking=False):  # (else it is being walked again already)
            try:
                threading.Thread(
                    target=self._walk_again, args=(kept, lang), name="unreachable", daemon=True
                ).start()
            except RuntimeError:  # no thread to be had: walked again by a later caller
                kept.lock.release()
        return kept.report

    def _walk_again(self, kept: _KeptWalk, lang: str) -> None:
        try:
            self._walk_into(kept, lang)
        finally:
            kept.lock.release()

    def _walk_into(self, kept: _KeptWalk, lang: str) -> None:
        began = time.monotonic()
        walked = self._walk(self.workspace.vault_dir(lang), self.seconds)
        ended = time.monotonic()
        kept.report = walked if walked.count else None
        kept.until = ended + KEPT_WALKS * (ended - began)
        kept.recent = kept.until + KEPT_WALKS * (ended - began)
