"""Paging a listing by path: ``after=<path>`` lists what sorts after the last path of
the page before, in the order the walk lists (``scan.walk_files``).

A cursor, not an offset: the listings are in path order, so the last path shown marks
the place whatever happened since. An offset counts entries, and a file added or
removed before it between two pages shifts every later one: a file skipped or listed
twice (a vault is written to by agents while a person or a script pages through it).
The path given need not exist any more.
"""

from __future__ import annotations

from indexer.vault.sandbox import clean_relpath
from shared.errors import InvalidArgumentError, VaultError

WalkKey = tuple[tuple[int, str], ...]


def walk_key(rel: str, is_folder: bool) -> WalkKey:
    """Where ``rel`` comes in a walk: depth first, in each folder its files (by name)
    before its subfolders (by name), a folder before what it holds."""
    *parents, last = rel.split("/")
    return (*((1, name) for name in parents), (1 if is_folder else 0, last))


def check_after(after: str | None, start: str, *, own: bool = False) -> str | None:
    """``after`` as the walk spells paths (NFC, no trailing ``/``; a folder of ``find``
    keeps its ``/``), refused unless it lies below ``start`` (``own``: directly in it).
    None: the first page."""
    if after is None:
        return None
    if not isinstance(after, str) or not after.strip("/"):
        raise InvalidArgumentError(
            "after is empty: give the last path of the page before, or leave it out"
        )
    try:
        path = clean_relpath(after)
    except VaultError as err:
        raise InvalidArgumentError(f"after is no path of the vault ({err.message})") from None
    parent = path.rpartition("/")[0]
    inside = parent == start if own else (not start or path.startswith(start + "/"))
    if not inside:
        where = f"in folder {start or '/'}" if own else f"below {start or '/'}"
        raise InvalidArgumentError(
            f"after must be a path {where} (the last path of the page before)"
        )
    return path + "/" if after.endswith("/") and not own else path


def after_key(after: str) -> WalkKey:
    """The walk position of a checked ``after`` (a trailing ``/`` names a folder)."""
    return walk_key(after.rstrip("/"), after.endswith("/"))


def step_in(past: WalkKey | None, prefix: str) -> tuple[int, str] | None:
    """Where the cursor ``past`` lies in the folder ``prefix`` (its vault path and ``/``,
    or ``""``): the key of its entry there when the cursor lies below the folder (what
    sorts up to it was listed by pages before), else None (the folder's entries all come
    after it). A walk uses it to pass over those entries without listing them."""
    if past is None:
        return None
    parts = prefix[:-1].split("/") if prefix else []
    depth = len(parts)
    if len(past) <= depth or any(past[i] != (1, part) for i, part in enumerate(parts)):
        return None
    return past[depth]
