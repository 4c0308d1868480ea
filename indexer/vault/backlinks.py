"""Links in other notes follow a move, as Obsidian's "update internal links" does.

A move rewrites the moved notes' own links (``relinking``); a link in another note to a
moved file (``[cat](../items/cat.md)``, ``![p](../items/cat.md.assets/p.png)``,
``[[items/cat]]``) pointed where nothing was. After the move, the notes that name a
moved file are found by the index for the name of the moved note or folder (its
trigrams, as grep's plan, with the notes the watcher saw change and the index has not
applied yet; by grep, which reads those, when the watcher cannot tell them or there is
no index: the start's first index or catch-up still under way, one read of the vault
for all the name's spellings), and each one's links
to moved files are rewritten by the same rules (``links.rewrite_links``, the note itself
staying where it is), its bytes otherwise as they were (no frontmatter normalization:
only its links change), one write each with the move's reason, so that an ``undo`` of
the move's entry puts them back too; the index takes them together once they are all
written, in one transaction (told one by one, each waited for the index's write lock:
while the start's first index held it 0.5 s a batch, 18 notes took the move's 10 s).

A link naming a file by its name or its path's end (``[[cat]]``, ``![](p.png)``, as
Obsidian finds them) still finds it after a move that keeps the name, and is left; after
a move that renames it, so that the name finds nothing, it names the file's new name
(``[[kitten]]``; its full path when that name is not the only one).

Best effort, bounded: a name shorter than three characters has no trigram of its own to
narrow the search, and is looked for with what a link puts around it (``[[ab``, ``/ab]``,
``(ab.``: ``link_spellings``); at most ``MAX_NOTES`` notes are
rewritten and for ``_SECONDS`` at most (a folder named ``project`` is a word many notes
hold, each read to look at its links). A note a write would refuse (read-only, hard
linked, too large) is left and answered in ``relink_skipped`` with why, as are the
notes left past the bounds; a note another program changes between its read and its
rewrite is read again. A grep that ran out of its bounds before it had read every note
(some notes holding the name may not have been looked at) is answered as
``relink_partial``: never silently.
"""

from __future__ import annotations

import logging
import re
import time
import unicodedata
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import quote

from indexer.vault import telling
from indexer.vault.file_names import name_key
from indexer.vault.links import readable_quote, relocate_note, relocate_prefix, rewrite_links
from indexer.vault.relinking import Listings
from shared.errors import ConflictError, VaultError

if TYPE_CHECKING:
    from indexer.vault.vault import Vault

log = logging.getLogger(__name__)

MAX_NOTES = 1000  # other notes rewritten after one move, at most
MAX_SKIPPED = 100  # notes answered as skipped, at most (the rest are logged)
_GREP_LINES = 10_000  # matching lines looked at to find them (grep's most)
_SECONDS = 10.0  # the search for them and their rewrites, at most
_LEAST_NAME = 3  # characters: a shorter name has no trigram (looked for in its links)
# What a link puts before a file or folder name (``[[n``, ``(n``, ``<n``, ``../n``) and
# after it (``n]]``, ``n|x``, ``n#h``, ``n^b``, ``n.md``, ``n)``, ``n>``, ``n/x``,
# ``(n "title")``)
_BEFORE = ("[[", "(", "<", "/")
_AFTER = ("]", "|", "#", "^", ".", ")", ">", "/", " ")
_TRIES = 3  # reads of a note another program keeps changing meanwhile
_PATTERN_CHARS = 1000  # of one grep's pattern joining spellings (grep takes 2,000)
_PATTERN_SPELLINGS = 48  # joined in one pattern, at most (grep_plan.MAX_NODES: narrowed)
_PAST_BOUNDS = (
    f"not looked at: a move rewrites the links of {MAX_NOTES} other notes at most,"
    f" for {_SECONDS:.0f} s at most"
)


def relink_after_move(vault: Vault, lang: str, moved: dict, reason: str | None, actor: str) -> None:
    """After ``move`` answered ``moved`` (``path``, ``new_path``; ``files`` for a
    folder), the other notes' links to what moved rewritten: their paths added to it as
    ``relinked``, the notes left (and why) as ``relink_skipped`` when there are any."""
    old, new = moved["path"], moved["new_path"]
    name = old.rpartition("/")[2]
    folder = "files" in moved  # (a folder, and all it held; else a note and its .assets/)
    move = _Move(old, new, folder)
    name = name if folder else name.removesuffix(".md")
    relinked, skipped, whole = relink_others(vault, lang, name, move, reason, actor)
    moved["relinked"] = relinked
    if skipped:
        moved["relink_skipped"] = skipped
    if not whole:
        moved["relink_partial"] = True


class _Move:
    """What moved: each file's new path (``relocate``) and old one (``back``), and
    whether a path is a moved file's before the move (``moving``) or after (``arrived``)."""

    def __init__(self, old: str, new: str, folder: bool) -> None:
        self.old, self.new, self.folder = old, new, folder
        if folder:
            self.relocate, self.back = relocate_prefix(old, new), relocate_prefix(new, old)
        else:
            self.relocate, self.back = relocate_note(old, new), relocate_note(new, old)

    def moving(self, path: str) -> bool:
        return self._below(path, self.old)

    def arrived(self, path: str) -> bool:
        return self._below(path, self.new)

    def _below(self, path: str, top: str) -> bool:
        if self.folder:
            return path.startswith(top + "/")
        return path == top or path.startswith(top + ".assets/")


class _Renamed:
    """What a link naming a moved file by its name or its path's end names now: the
    file's new name (or path end of as many parts), its full path when that is not the
    only file so named; None when the name still finds a file, or found no moved one."""

    def __init__(self, listings: Listings, move: _Move) -> None:
        self.listings, self.move = listings, move
        self._arrived: list[str] | None = None
        self._answers: dict[str, str | None] = {}

    def __call__(self, rel: str) -> str | None:
        if rel not in self._answers:
            self._answers[rel] = self._renamed(rel)
        return self._answers[rel]

    def _renamed(self, rel: str) -> str | None:
        old_name = self.move.old.rpartition("/")[2]
        if old_name == self.move.new.rpartition("/")[2] or name_key(old_name) not in name_key(rel):
            return None  # (a name the move kept still finds its file; the vault is not walked)
        if self.listings.found(rel):
            return None
        if self._arrived is None:  # (the files that moved, where they are now)
            by_name = self.listings.by_name or {}
            self._arrived = [p for paths in by_name.values() for p in paths if self.move.arrived(p)]
        key = name_key(rel)
        named = [p for p in self._arrived if _ends_with(name_key(self.move.back(p)), key)]
        if len(named) != 1:
            return None  # (none; or several, which the name could not tell apart)
        new = named[0]
        parts = rel.count("/") + 1
        end = "/".join(new.split("/")[-parts:])
        return end if self.listings.ending(end) == [new] else new


def _ends_with(path: str, rel: str) -> bool:
    return path == rel or path.endswith("/" + rel)


def relink_others(
    vault: Vault, lang: str, name: str, move: _Move, reason: str | None, actor: str
) -> tuple[list[str], list[dict], bool]:
    """Rewrite the links to moved files in the other notes of ``lang`` that hold
    ``name`` (the moved note's name without ``.md``, or the moved folder's); returns the
    paths of the notes rewritten, the notes left with why, and whether every note
    holding the name was found (False: a grep ran out of its bounds)."""
    listings = Listings(vault, lang)
    relinking = _Relinking(vault, lang, move, listings, _Renamed(listings, move), reason, actor)
    rewritten: list[str] = []
    skipped: list[dict] = []
    deadline = time.monotonic() + _SECONDS
    # (as written, percent-encoded in full or as Obsidian writes it, ``猫%20图片``, and
    # in NFD: typed on a Mac, copied from its files)
    spellings = {name, quote(name), readable_quote(name), unicodedata.normalize("NFD", name)}
    literals = {literal for spelling in spellings for literal in link_spellings(spelling)}
    holding, whole = _holding(vault, lang, literals, deadline)
    try:
        _relink_all(relinking, sorted(holding), name, deadline, rewritten, skipped)
    finally:  # (what was written is told, whatever stopped the rest)
        left = relinking.left
        telling.tell_all(vault.index_sync, vault.listeners, list(left), left)
    return rewritten, skipped, whole


def _relink_all(
    relinking: _Relinking,
    paths: list[str],
    name: str,
    deadline: float,
    rewritten: list[str],
    skipped: list[dict],
) -> None:
    """The links in each of ``paths`` rewritten, within the bounds: those rewritten
    added to ``rewritten``, those left (and why) to ``skipped``."""
    move = relinking.move
    for path in paths:
        if move.moving(path) or move.arrived(path) or _hidden(path):
            continue  # (the moved notes' own links were rewritten with them; a folder's
            # summary, ``.overview.md``, is the summaries job's to make again)
        if len(rewritten) == MAX_NOTES or time.monotonic() > deadline:
            if not any(skip["error"] == _PAST_BOUNDS for skip in skipped):
                log.warning("links to %s: the notes from %s on were left as they were", name, path)
            _skip(skipped, path, _PAST_BOUNDS)
            continue
        try:
            if _relink_again(relinking, path):
                rewritten.append(path)
        except VaultError as err:
            log.warning("links in %s left as they were: %s", path, err)
            _skip(skipped, path, str(err))


def link_spellings(name: str) -> set[str]:
    """Text every link naming ``name`` holds, of three characters at least (what the
    index narrows a search by): the name itself, else the name with what a link puts
    before it, and after it too where that is still short (``ab``: ``[[ab``, ``(ab``,
    ``/ab``; ``x``: ``[[x``, ``(x)``, ``(x.``, ``/x]``, ...)."""
    if len(name) >= _LEAST_NAME:
        return {name}
    found: set[str] = set()
    for before in _BEFORE:
        if len(before + name) >= _LEAST_NAME:
            found.add(before + name)
        else:
            found.update(before + name + after for after in _AFTER)
    return found


def _hidden(path: str) -> bool:
    """A dot-file or a file in a dot-folder: the tools refuse to write it (a relink
    listed every folder summary as skipped, with a warning at each move)."""
    return any(part.startswith(".") for part in path.split("/"))


def _skip(skipped: list[dict], path: str, why: str) -> None:
    if len(skipped) < MAX_SKIPPED:
        skipped.append({"path": path, "error": why})


def _holding(vault: Vault, lang: str, literals: set[str], deadline: float) -> tuple[set[str], bool]:
    """The notes of ``lang`` holding any of ``literals`` (case ignored), and whether
    every one was found: the index's notes holding it (a grep waits for the watcher to
    vouch for every file, 35 ms of a move at 10,000 notes), and a note changed since it
    indexed them is looked at too; without an index, or a watcher vouching for what it
    has not indexed yet (the start's first index or catch-up under way), a grep."""
    if vault.grep_planner is not None:
        plans = [vault.grep_planner(lang, literal, True, True, deadline) for literal in literals]
        if all(plan is not None and plan.changed is not None for plan in plans):
            indexed = {
                path
                for plan in plans
                if plan is not None
                for path in (*plan.candidates, *(plan.changed or ()))
            }
            return indexed, True
        # (the watcher cannot vouch for the files: grep reads those whose stat differs)
    paths: set[str] = set()
    whole = True
    for pattern, fixed in _greps(literals):
        found = vault.grep(lang, pattern, fixed=fixed, ignore_case=True, limit=_GREP_LINES,
                           deadline=deadline)  # fmt: skip
        paths.update(match["path"] for match in found["matches"])
        if found.get("truncated"):
            log.warning("links to %s: not every note holding the name was looked at", pattern)
            whole = False
    return paths, whole


def _greps(literals: set[str]) -> list[tuple[str, bool]]:
    """(pattern, fixed) of the greps finding every note that holds any of ``literals``:
    as many as one pattern holds joined (``a|b``), so that the vault is read once for
    all of them, not once each (a one-letter name's 28 spellings were 28 reads of every
    note while the start's first index ran: 15,000 notes took the move's 10 s, and the
    spellings looked for last found nothing, answered as no note to relink)."""
    groups: list[list[str]] = []
    chars = 0
    for literal in sorted(literals):
        size = len(_escaped(literal)) + 1
        if not groups or len(groups[-1]) == _PATTERN_SPELLINGS or chars + size > _PATTERN_CHARS:
            groups.append([])
            chars = 0
        groups[-1].append(literal)
        chars += size
    return [
        (group[0], True) if len(group) == 1 else ("|".join(map(_escaped, group)), False)
        for group in groups
    ]


def _escaped(literal: str) -> str:
    """``literal`` as a pattern matching it, with ``[`` as ``\\x5b``: a pattern holding
    ``[[`` is one grep's index plan does not read (``grep_plan._RISKY``), and would read
    every file rather than those the index does not vouch for."""
    return re.escape(literal).replace("\\[", "\\x5b")


@dataclass
class _Relinking:
    """One move's rewrite of other notes' links: what moved, what the vault holds now,
    the write's actor and reason, and the etag each rewrite left (told at the end)."""

    vault: Vault
    lang: str
    move: _Move
    listings: Listings
    renamed: _Renamed
    reason: str | None
    actor: str
    left: dict[tuple[str, str], str] = field(default_factory=dict)


def _relink_again(relinking: _Relinking, path: str) -> bool:
    """``_relink``, read again while another program changes the note in between."""
    for attempt in range(_TRIES):
        try:
            return _relink(relinking, path)
        except ConflictError:
            if attempt == _TRIES - 1:
                raise
    raise AssertionError("unreachable")


def _relink(relinking: _Relinking, path: str) -> bool:
    """One note's links to moved files rewritten, under its lock; whether it changed.
    Refused as a write refuses it: a hard-linked or read-only note, one too large."""
    vault, move, listings = relinking.vault, relinking.move, relinking.listings
    target = vault.sandbox.resolve(relinking.lang, path)
    if not target.is_note:
        return False
    with vault.locked(vault._with_owner(target)), vault.sandbox.open(target) as place:
        existing = vault._existing_bytes(place)
        if existing is None:
            return False  # (deleted meanwhile)
        try:
            text = existing.decode("utf-8")
        except UnicodeDecodeError:
            return False  # (not a note the tools read: its links are not read either)
        after = rewrite_links(
            text,
            path,
            path,
            move.relocate,
            move.moving,
            listings.exists,
            listings.found,
            relinking.renamed,
        ).encode("utf-8")
        if after == existing:
            return False
        vault._check_size(len(after))
        hashes = vault.digests.of((target.lang, target.rel), after)
        vault._commit_recorded(
            place, existing, after, hashes.etag, hashes.sha, relinking.actor, relinking.reason
        )
        telling.writing(vault.index_sync, target.lang, target.rel)
        relinking.left[(target.lang, target.rel)] = hashes.etag
    return True
