"""The grep plan's map of indexed notes (``IndexReads._indexed``) follows the index's
writes by re-reading only the rows they wrote, and always equals a full read."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.vault_stack import reconciled_index

from indexer.index.service import NoteIndex
from indexer.sqlite_lib import sqlite3
from shared.workspace import Workspace

LANGS = ("en", "de")
Statements = list[str]


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    workspace = Workspace(tmp_path / "ws")
    for lang in LANGS:
        for n in range(20):
            put(workspace, lang, f"f{n % 3}/n{n}.md", f"needle {lang} {n}\n")
    return workspace


@pytest.fixture
def index(ws: Workspace) -> Iterator[NoteIndex]:
    yield from reconciled_index(ws)


def put(ws: Workspace, lang: str, rel: str, text: str | bytes) -> Path:
    path = ws.vault_dir(lang) / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def full_read(index: NoteIndex, lang: str) -> dict[str, tuple[int, int, int]]:
    """What the map must hold, read from the file by a connection of its own."""
    with sqlite3.connect(index.path) as conn:
        rows = conn.execute(
            "SELECT path, size, mtime_ns, ctime_ns FROM notes WHERE lang = ? AND exact = 1",
            (lang,),
        )
        return {path: (size, mtime, ctime) for path, size, mtime, ctime in rows}


def plan_map(index: NoteIndex, lang: str) -> dict[str, tuple[int, int, int]]:
    plan = index.grep_plan(lang, "needle", True, False)
    assert plan is not None
    return plan.indexed


def traced(index: NoteIndex) -> Statements:
    """The statements the (one, pooled) reader connection runs from now on."""
    seen: Statements = []
    with index._db.read() as conn:
        conn.set_trace_callback(seen.append)
    return seen


def read_all(seen: Statements) -> bool:
    """Whether the map was read whole (not patched) since ``seen`` was last cleared."""
    whole = any("notes_stat WHERE lang =" in s and "path =" not in s for s in seen)
    seen.clear()
    return whole


def test_the_map_follows_writes_deletes_renames_and_a_rebuild(
    ws: Workspace, index: NoteIndex
) -> None:
    seen = traced(index)
    for lang in LANGS:
        assert plan_map(index, lang) == full_read(index, lang)
    assert read_all(seen)

    def changed(lang: str, *rels: str) -> None:
        for rel in rels:
            index.note_changed(lang, rel)

    steps = [
        lambda: (put(ws, "en", "new.md", "needle new\n"), changed("en", "new.md")),
        lambda: (put(ws, "en", "f0/n0.md", "edited, longer\n"), changed("en", "f0/n0.md")),
        lambda: ((ws.vault_dir("en") / "f1/n1.md").unlink(), changed("en", "f1/n1.md")),
        lambda: (
            (ws.vault_dir("en") / "f2/n2.md").rename(ws.vault_dir("en") / "moved.md"),
            changed("en", "f2/n2.md", "moved.md"),
        ),
        lambda: (  # same bytes, new mtime: only size and mtime are updated
            os.utime(ws.vault_dir("en") / "f0/n3.md", ns=(1, 1_000_000_000)),
            changed("en", "f0/n3.md"),
        ),
        lambda: (put(ws, "en", "f1/n4.md", b"\xff not utf-8\n"), changed("en", "f1/n4.md")),
        lambda: (put(ws, "de", "f0/n0.md", "geändert\n"), changed("de", "f0/n0.md")),
        lambda: (put(ws, "en", "f1/n4.md", "utf-8 again\n"), changed("en", "f1/n4.md")),
        lambda: (
            put(ws, "en", "f2/n5.md", "appended\n"),
            index.note_appended("en", "f2/n5.md", "etag"),
            index.flush(),
        ),
    ]
    for number, step in enumerate(steps):
        step()
        for lang in ("en", "en", "de", "en"):  # the map is kept for one lang at a time
            assert plan_map(index, lang) == full_read(index, lang), number
        index.search("en", "needle")  # a read that is no grep changes nothing
    seen.clear()  # switching langs read the other lang whole
    for step in steps[:2]:
        step()
        assert plan_map(index, "en") == full_read(index, "en")
        assert not read_all(seen)  # one lang asked for again and again: patched
    with index._db.write() as conn:  # any write to the rows is seen, not only a sync's
        conn.execute("UPDATE notes SET mtime_ns = 7 WHERE lang = 'en' AND path LIKE 'f1/%'")
    assert plan_map(index, "en") == full_read(index, "en")
    assert not read_all(seen)
    index.rebuild()
    for lang in LANGS:
        assert plan_map(index, lang) == full_read(index, lang)
        assert read_all(seen)  # a rebuild's clear is too big to log: read whole


def test_a_map_given_out_is_never_changed(ws: Workspace, index: NoteIndex) -> None:
    given = plan_map(index, "en")
    before = dict(given)
    put(ws, "en", "new.md", "needle\n")
    (ws.vault_dir("en") / "f0/n0.md").unlink()
    index.note_changed("en", "new.md")
    index.note_changed("en", "f0/n0.md")
    after = plan_map(index, "en")
    assert after == full_read(index, "en")
    assert after != before
    assert given == before


def test_many_writes_since_the_map_read_it_whole(ws: Workspace, index: NoteIndex) -> None:
    seen = traced(index)
    plan_map(index, "en")
    seen.clear()
    for n in range(70):  # more commits than the log keeps
        put(ws, "en", "f0/n0.md", f"needle {n}\n")
        index.note_changed("en", "f0/n0.md")
    assert plan_map(index, "en") == full_read(index, "en")
    assert read_all(seen)
