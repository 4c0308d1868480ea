"""Links in other notes follow a move, as Obsidian's "update internal links" does.

A move rewrites the moved notes' own links (``relinking``); a link in another note to a
moved file (``[cat](../items/cat.md)``, ``![p](../items/cat.md.assets/p.png)``,
``[[items/cat]]``) pointed where nothing was. After the move, the notes that name a
moved file are found by the index for the name of the moved note or folder (its
trigrams, as grep's plan: a note saved by another program a moment before, which the
index has not seen yet, may be missed; without an index, by grep), and each one's links
to moved files are rewritten by the same rules (``links.rewrite_links``, the note itself
staying where it is), its bytes otherwise as they were (no frontmatter normalization:
only its links change), one write each with the move's reason, so that an ``undo`` of
the move's entry puts them back too.

Best effort, bounded: a name shorter than three characters has no trigram to narrow the
search (every note would be read: not looked for), at most ``MAX_NOTES`` notes are
rewritten and for ``_SECONDS`` at most (a folder named ``project`` is a word many notes
hold, each read to look at its links), a note another program changed meanwhile is left
(each is logged). A link naming a file by its bare name (``[[cat]]``) still finds it
after a move that keeps the name, as Obsidian reads it, and is left.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING
from urllib.parse import quote

from indexer.vault import fsops
from indexer.vault.history.store import Change
from indexer.vault.links import Moving, Relocate, relocate_note, relocate_prefix, rewrite_links
from indexer.vault.relinking import Listings
from shared.errors import VaultError

if TYPE_CHECKING:
    from indexer.vault.vault import Vault

log = logging.getLogger(__name__)

MAX_NOTES = 1000  # other notes rewritten after one move, at most
_GREP_LINES = 10_000  # matching lines looked at to find them (grep's most)
_SECONDS = 10.0  # the search for them and their rewrites, at most
_LEAST_NAME = 3  # characters: a shorter name has no trigram


def relink_after_move(
    vault: Vault, lang: str, moved: dict, reason: str | None, actor: str
) -> list[str]:
    """After ``move`` answered ``moved`` (``path``, ``new_path``; ``files`` for a
    folder), the other notes' links to what moved rewritten; their paths."""
    old, new = moved["path"], moved["new_path"]
    name = old.rpartition("/")[2]
    if "files" in moved:  # a folder, and all it held
        relocate = relocate_prefix(old, new)
        return relink_others(vault, lang, name, relocate, lambda p: p.startswith(old + "/"),
                             reason, actor)  # fmt: skip
    relocate = relocate_note(old, new)  # (a note, and its .assets/ folder)

    def moving(path: str) -> bool:
        return path == old or path.startswith(old + ".assets/")

    return relink_others(vault, lang, name.removesuffix(".md"), relocate, moving, reason, actor)


def relink_others(
    vault: Vault,
    lang: str,
    name: str,
    relocate: Relocate,
    moving: Moving,
    reason: str | None,
    actor: str,
) -> list[str]:
    """Rewrite the links to moved files in the other notes of ``lang`` that hold
    ``name`` (the moved note's name without ``.md``, or the moved folder's); returns the
    paths of the notes rewritten."""
    if len(name) < _LEAST_NAME:
        log.info("links to %s in other notes not looked for: its name is too short", name)
        return []
    listings = Listings(vault, lang)
    rewritten: list[str] = []
    deadline = time.monotonic() + _SECONDS
    for path in sorted(_holding(vault, lang, {name, quote(name)}, deadline)):
        if moving(path) or moving(relocate(path)) or path.startswith("."):
            continue  # (the moved notes' own links were rewritten with them)
        if len(rewritten) == MAX_NOTES or time.monotonic() > deadline:
            log.warning("links to %s: the other notes past %s were left as they were", name, path)
            break
        try:
            if _relink(vault, lang, path, relocate, moving, listings, reason, actor):
                rewritten.append(path)
        except VaultError as err:
            log.warning("links in %s left as they were: %s", path, err)
    return rewritten


def _holding(vault: Vault, lang: str, literals: set[str], deadline: float) -> set[str]:
    """The notes of ``lang`` holding any of ``literals`` (case ignored): the index's
    notes holding it (a grep waits for the watcher to vouch for every file, 35 ms of a
    move at 10,000 notes), and a note changed since it indexed them is looked at too;
    without an index, a grep."""
    if vault.grep_planner is not None:
        plans = [vault.grep_planner(lang, literal, True, True, deadline) for literal in literals]
        if all(plan is not None for plan in plans):
            return {
                path
                for plan in plans
                if plan is not None
                for path in (*plan.candidates, *(plan.changed or ()))
            }
    paths: set[str] = set()
    for literal in literals:
        found = vault.grep(lang, literal, fixed=True, ignore_case=True, limit=_GREP_LINES,
                           deadline=deadline)  # fmt: skip
        paths.update(match["path"] for match in found["matches"])
        if found.get("truncated"):
            log.warning("links to %s: not every note holding the name was looked at", literal)
    return paths


def _relink(
    vault: Vault,
    lang: str,
    path: str,
    relocate: Relocate,
    moving: Moving,
    listings: Listings,
    reason: str | None,
    actor: str,
) -> bool:
    """One note's links to moved files rewritten, under its lock; whether it changed."""
    target = vault.sandbox.resolve(lang, path)
    if not target.is_note:
        return False
    with vault.locked(vault._with_owner(target)), vault.sandbox.open(target) as place:
        existing = vault._existing_bytes(place)
        if existing is None or len(existing) > vault.max_file_bytes:
            return False
        try:
            text = existing.decode("utf-8")
        except UnicodeDecodeError:
            return False
        after = rewrite_links(
            text, path, path, relocate, moving, listings.exists, listings.found
        ).encode("utf-8")
        if after == existing:
            return False
        vault._check_size(len(after))
        key = (target.lang, target.rel)
        before_etag = vault.digests.known_etag(key, existing)
        hashes = vault.digests.of(key, after)
        change = Change(
            target.lang,
            target.rel,
            "write",
            existing,
            after,
            after_etag=hashes.etag,
            after_sha=hashes.sha,
            before_etag=before_etag,
        )
        read = before_etag or fsops.etag_of(existing)
        with vault.recorder.changing([change], actor=actor, reason=reason):
            place.commit(after, if_match=read)
        vault._notify(target, left=hashes.etag)
    return True
