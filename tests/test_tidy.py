"""The full-text index's segments are merged while the index is idle (``index/tidy``),
on a real NoteIndex: one segment a table afterwards, every search answering as before,
and a write coming between two steps stops the merge."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from indexer.index import tidy
from indexer.index.service import NoteIndex
from indexer.index.tidy import TABLES, Tidier
from shared.workspace import Workspace

QUERIES = ("alpha", '"beta gamma"', "数据", "ภาษา", "gam*")


def segments(index: NoteIndex) -> dict[str, int]:
    with index._db.read() as conn:
        return {t: conn.execute(f"SELECT count(DISTINCT segid) FROM {t}_idx").fetchone()[0]
                for t in TABLES}  # fmt: skip


def answers(index: NoteIndex) -> list[list[str]]:
    return [[hit["path"] for hit in index.search("en", q, limit=50)["results"]] for q in QUERIES]


@pytest.fixture
def written(ws: Workspace, index: NoteIndex) -> NoteIndex:
    """An index of 40 notes written one transaction at a time (a segment each)."""
    root = ws.vault_dir("en")
    root.mkdir(parents=True)
    for n in range(40):
        text = f"# Note {n}\n\nalpha {n} beta gamma 数据{n} ภาษา{n % 3} word{n}\n"
        (root / f"n{n}.md").write_text(text, encoding="utf-8")
        index.reconcile()
    return index


def test_a_merge_leaves_one_segment_and_the_same_answers(written: NoteIndex) -> None:
    before = answers(written)
    assert all(count > 1 for count in segments(written).values())
    assert Tidier(written._db).merge()
    assert segments(written) == {table: 1 for table in TABLES}
    assert answers(written) == before


def test_the_merge_runs_once_the_index_is_idle(written: NoteIndex) -> None:
    tidier = Tidier(written._db, idle_seconds=0.05)
    tidier.start()
    try:
        deadline = time.monotonic() + 10
        while tidier.tidied == -1 and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        tidier.stop()
    assert tidier.tidied == written._db.generation
    assert segments(written) == {table: 1 for table in TABLES}


def test_a_write_between_two_steps_stops_the_merge(
    written: NoteIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tidy, "STEP_PAGES", 1)  # (many steps)
    db = written._db
    real = db.write
    steps: list[int] = []

    @contextmanager
    def write() -> Iterator[object]:
        with real() as conn:
            yield conn
        steps.append(db.generation)
        if len(steps) == 1:  # another write, between the merge's first two steps
            with real() as conn:
                conn.execute("INSERT OR REPLACE INTO state (key, value) VALUES ('x', 'y')")

    monkeypatch.setattr(db, "write", write)
    assert not Tidier(db).merge()
    assert len(steps) == 1


def test_the_index_serving_runs_a_tidier_and_stops_it(ws: Workspace) -> None:
    ws.vault_dir("en").mkdir(parents=True)
    index = NoteIndex(ws)
    index.open()
    index.start_background()  # (as ``indexer serve`` does)
    keeper = index._keeper
    assert keeper is not None
    tidier = keeper._tidier
    assert isinstance(tidier, Tidier)
    thread = tidier._thread
    assert thread is not None and thread.is_alive()
    index.close()
    assert not thread.is_alive() and tidier._thread is None
