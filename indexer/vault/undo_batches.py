"""An undo's files in batches: the order they are undone in, and the history changes
each batch begins in one transaction (``Recorder.begin_many``). One transaction per
file took most of an undo of a 10,000-note folder move (10,001 transactions, 13.3 s);
a batch's rows are all pending before its first file changes, each made final as its
file changes, the rest dropped when one fails, and ``recover`` settles each against
its file after a crash, as it does one change's.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from indexer.vault import undo_moves
from indexer.vault.history.store import Change
from indexer.vault.undo_moves import Plan

if TYPE_CHECKING:
    from indexer.vault.vault import Vault

BATCH_FILES = 1000  # files whose history rows one transaction begins
# Bytes written back one batch holds in memory at most (with its files' texts in the
# transaction): 1,000 notes at the 4 MiB limit were 4 GiB (a file over it: alone)
BATCH_BYTES = 64 * 1024 * 1024


def units(plans: list[Plan], paired: dict[int, int]) -> list[tuple[int, ...]]:
    """The order the plans are undone in, from the last: one plan, or a pair renamed
    back as one (``undo_moves.pairs``), the plan met first named first (a failure is
    said of it)."""
    order: list[tuple[int, ...]] = []
    met: set[int] = set()
    for index in reversed(range(len(plans))):
        if index in met:
            continue
        other = paired.get(index)
        if other is None:
            order.append((index,))
            met.add(index)
            continue
        order.append((index, other))
        met.update((index, other))
    return order


def home_away(plans: list[Plan], pair: tuple[int, ...]) -> tuple[int, int]:
    """A pair's plans as (the file's old place, its new one): the old one the entry
    left with no file (``undo_moves.pairs``)."""
    first, second = pair
    return (first, second) if plans[first][1] is None else (second, first)


def batches(plans: list[Plan], units: list[tuple[int, ...]]) -> Iterator[list[tuple[int, ...]]]:
    """``units`` in runs of ``BATCH_FILES`` files (a pair is two) and ``BATCH_BYTES`` of
    texts to write back at most (a pair, renamed back, writes none)."""
    run: list[tuple[int, ...]] = []
    files = size = 0
    for unit in units:
        weight = _bytes_back(plans, unit)
        if run and (files + len(unit) > BATCH_FILES or size + weight > BATCH_BYTES):
            yield run
            run, files, size = [], 0, 0
        run.append(unit)
        files += len(unit)
        size += weight
    if run:
        yield run


def _bytes_back(plans: list[Plan], unit: tuple[int, ...]) -> int:
    """The size of the text a lone plan writes back (its version's, as history says)."""
    before = plans[unit[0]][3] if len(unit) == 1 else None
    return (before.size or 0) if before is not None else 0


def datas(vault: Vault, plans: list[Plan], units: list[tuple[int, ...]]) -> dict[int, bytes | None]:
    """The bytes each lone plan of ``units`` goes back to (None: the file goes)."""
    found: dict[int, bytes | None] = {}
    for unit in units:
        if len(unit) == 1:
            before = plans[unit[0]][3]
            found[unit[0]] = vault.recorder.content(before) if before is not None else None
    return found


def changes(
    plans: list[Plan],
    units: list[tuple[int, ...]],
    data_of: dict[int, bytes | None],
    modes: dict[str, int],
) -> list[Change]:
    """History's changes for ``units`` (none for a file that already holds its bytes); a
    file taken away keeps its mode (``modes``, by path) on its row, as a delete's does."""
    found: list[Change] = []
    for unit in units:
        if len(unit) == 2:
            home, away = home_away(plans, unit)
            found += undo_moves.changes(plans[home], plans[away], modes.get(plans[away][0].rel))
            continue
        target, current, *_ = plans[unit[0]]
        data = data_of[unit[0]]
        if data != current:
            op = "restore" if data else "delete"
            mode = modes.get(target.rel) if data is None else None
            found.append(Change(target.lang, target.rel, op, current, data, mode=mode))
    return found
