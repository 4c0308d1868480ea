"""What a crash left pending in history: which changes happened, which never did.

A row is pending from ``begin`` (before the file changes) until its change is answered.
After a crash, a row is dropped only when its file still holds the bytes from before the
change; any other state means the change happened (perhaps edited again since), and a
change that happened keeps its version, with its actor and reason.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from indexer.vault.history.rows import Version

CurrentEtag = Callable[[str, str], str | bool | None]  # False: the file cannot be looked at
FinishMove = Callable[[Version, str], bool]


def settle(
    rows: Sequence[Version], current_etag: CurrentEtag, finish_move: FinishMove | None
) -> tuple[list[tuple[int]], list[tuple[int]]]:
    """The ids of the pending ``rows`` to keep and to drop (as statement parameters).

    A folder move renames the folder, then rewrites the links of the notes in it: a note
    left at its new path with its old bytes (a crash between the two) is handed to
    ``finish_move``, which writes the bytes its row recorded."""
    moved_from = {(r.batch, r.lang, r.path): r for r in rows if r.op == "move" and not r.etag}
    keep: list[tuple[int]] = []
    drop: list[tuple[int]] = []
    for row in rows:
        now = current_etag(row.lang, row.path)
        if now is False:  # its vault is missing: a change that happened is never dropped
            keep.append((row.id,))
            continue
        source = moved_from.get((row.batch, row.lang, row.other_path or ""))
        if (
            finish_move is not None
            and row.op == "move"
            and row.etag is not None
            and now is not None
            and now != row.etag
            and source is not None
            and now == source.prev_etag
            and finish_move(row, now)
        ):
            now = row.etag
        happened = now != row.prev_etag or now == row.etag
        (keep if happened else drop).append((row.id,))
    return keep, drop
