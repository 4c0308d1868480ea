"""A frontmatter block dumped one top-level entry at a time, each entry's text kept.

Why: every write dumps its note's whole block again (the representer is Python even
with libyaml's emitter: about 0.1 ms for a block of ten keys), though from one write of
a note to the next only ``updated`` changes. A block mapping's entries are written each
on its own lines from column 0 with nothing carried from one to the next (no anchors:
``NoteDumper`` ignores aliases; no document markers for a mapping), so the block is the
entries' dumps one after another; the tests compare this with the whole dump over
generated frontmatter. An entry's text is kept under its key and a typed copy of its
value (``1``, ``1.0`` and ``True`` are equal in Python, and so are ``0.0`` and ``-0.0``,
and two datetimes at the same instant in other zones), so what is kept is exactly what
the dumper writes for that value.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from datetime import date, datetime
from typing import Any

import yaml

from shared.timestamps import format_timestamp
from shared.yaml_dialect import NoteDumper

DUMP_OPTIONS: dict[str, Any] = {
    "sort_keys": False,
    "allow_unicode": True,
    "default_flow_style": False,
    "width": 1_000_000,
}
MAX_KEPT_CHARS = 4096  # an entry written longer is not kept (the cache stays small)
MAX_KEPT_ENTRIES = 1024  # then the kept texts are dropped and kept afresh
MAX_JOINED_BLOCKS = 64  # the last blocks written, each with its entries' texts

_kept: dict[tuple[str, Hashable], str] = {}
_joined: dict[str, tuple[str, ...]] = {}


def dump_entries(meta: dict[str, Any]) -> str | None:
    """``yaml.dump(meta, Dumper=NoteDumper, **DUMP_OPTIONS)``, from the entries' kept
    texts; None when it must be dumped whole: no entries, a value not of the plain types
    a block holds, or one the dumper refuses (the whole dump then says why)."""
    if not meta:
        return None
    parts = []
    try:
        for key, value in meta.items():
            if type(key) is not str:
                return None
            typed = _typed(value)
            if typed is None:
                return None
            parts.append(_entry(key, typed, value))
    except Exception:  # (refused by the dumper, or nested too deep to walk)
        return None
    block = "".join(parts)
    if len(parts) > 1:
        if len(_joined) >= MAX_JOINED_BLOCKS:
            _joined.clear()
        _joined[block] = tuple(parts)
    return block


def read_entries(block: str, parse: Callable[[str], dict[str, Any]]) -> dict[str, Any] | None:
    """A block ``dump_entries`` wrote of late, read entry by entry with ``parse`` (the
    strict loader, whose last texts are kept): what reading it whole gives, as its
    entries are written each from column 0 with nothing carried to the next (the tests
    compare the two over generated frontmatter). Why: a write reads its block back, and
    from one second to the next only ``updated`` is new (a block of 11 keys read whole:
    114 us; its ``updated`` alone: 12). None: not such a block, or an entry read alone is
    refused or not one key (read whole, it says why)."""
    parts = _joined.get(block)
    if parts is None:
        return None
    merged: dict[str, Any] = {}
    for part in parts:
        try:
            entry = parse(part)
        except Exception:
            return None
        if len(entry) != 1 or next(iter(entry)) in merged:
            return None
        merged.update(entry)
    return merged


def _entry(key: str, typed: Hashable, value: Any) -> str:
    found = _kept.get((key, typed))
    if found is not None:
        return found
    dumped: str = yaml.dump({key: value}, Dumper=NoteDumper, **DUMP_OPTIONS)
    if len(dumped) <= MAX_KEPT_CHARS:
        if len(_kept) >= MAX_KEPT_ENTRIES:
            _kept.clear()
        _kept[(key, typed)] = dumped
    return dumped


def _typed(value: Any) -> Hashable | None:
    """A hashable copy of ``value`` equal only to one that is dumped the same, or None
    for a type the block does not hold (a subclass too: its representer may differ)."""
    kind = type(value)
    if kind is str:
        return value
    if kind is list:
        items = [_typed(item) for item in value]
        return None if any(item is None for item in items) else ("list", tuple(items))
    if kind is dict:
        pairs = [(key, _typed(item)) for key, item in value.items()]
        if any(type(key) is not str or item is None for key, item in pairs):
            return None
        return ("map", tuple(pairs))
    if value is None:
        return ("null",)
    if kind is bool or kind is int:
        return (kind.__name__, value)
    if kind is float:
        return ("float", repr(value))  # (0.0 and -0.0 are equal, and written apart)
    if kind is datetime:
        return ("datetime", format_timestamp(value))  # what the dumper writes
    if kind is date:
        return ("date", value.isoformat())
    return None
