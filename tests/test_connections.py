"""The writer's log of changed ``notes`` rows (``Connections.changes``), on a real file."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from indexer.index.connections import IDLE_READERS, LOGGED_COMMITS, MAX_LOGGED_ROWS, Connections
from indexer.sqlite_lib import sqlite3

_INSERT = (
    "INSERT INTO notes (lang, path, title, abstract, tags, tag_keys, frontmatter, body, head,"
    " hash, exact, size, mtime_ns) VALUES (?, ?, '', '', '[]', '[]', '{}', '', '', '', 1, 1, 1)"
)
# The same row under a given id: replaces the row that has it, whatever its path.
_REPLACE = _INSERT.replace("INSERT", "REPLACE").replace("(lang", "(id, lang").replace("(?", "(?, ?")


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Connections]:
    """Writing an index file that exists (a new one is made on another connection)."""
    maker = Connections(tmp_path / "index.sqlite")
    maker.open_writer(check=False)
    maker.close()
    connections = Connections(tmp_path / "index.sqlite")
    connections.open_writer(check=False)
    yield connections
    connections.close()


def test_each_commit_logs_the_rows_it_wrote(db: Connections) -> None:
    start = db.generation
    assert db.changes(start - 1, start) is None  # opening: the file may be new
    with db.write() as conn:
        conn.executemany(_INSERT, [("en", "a.md"), ("en", "b.md"), ("de", "a.md")])
    with db.write() as conn:
        conn.execute("UPDATE notes SET size = 2 WHERE path = 'b.md'")
    with db.write() as conn:
        conn.execute("UPDATE notes SET path = 'c.md' WHERE lang = 'de'")  # a rename
        conn.execute("DELETE FROM notes WHERE lang = 'en' AND path = 'a.md'")
    db.set_state("k", "v")
    g = db.generation
    assert g == start + 4
    assert db.changes(start, start + 1) == {("en", "a.md"), ("en", "b.md"), ("de", "a.md")}
    assert db.changes(start + 1, start + 2) == {("en", "b.md")}
    assert db.changes(start + 2, start + 3) == {("de", "a.md"), ("de", "c.md"), ("en", "a.md")}
    assert db.changes(start + 3, g) == frozenset()
    assert db.changes(start + 1, g) == {
        ("en", "a.md"), ("en", "b.md"), ("de", "a.md"), ("de", "c.md")
    }  # fmt: skip
    assert db.changes(g, g) == frozenset()
    assert db.changes(g, start) is None


def test_a_rolled_back_write_logs_nothing(db: Connections) -> None:
    start = db.generation
    with pytest.raises(RuntimeError), db.write() as conn:
        conn.execute(_INSERT, ("en", "gone.md"))
        raise RuntimeError("the write fails")
    assert db.generation == start
    with db.write() as conn:
        conn.execute(_INSERT, ("en", "kept.md"))
    assert db.changes(start, db.generation) == {("en", "kept.md")}


def test_a_replace_logs_the_row_it_deletes(db: Connections) -> None:
    with db.write() as conn:
        conn.execute(_INSERT, ("en", "a.md"))
    with db.read() as conn:
        (rowid,) = conn.execute("SELECT id FROM notes WHERE path = 'a.md'").fetchone()
    start = db.generation
    with db.write() as conn:
        conn.execute(_REPLACE, (rowid, "en", "b.md"))
    assert db.changes(start, db.generation) == {("en", "a.md"), ("en", "b.md")}


def test_too_many_rows_or_commits_are_unknown(db: Connections) -> None:
    start = db.generation
    with db.write() as conn:
        conn.executemany(_INSERT, [("en", f"{n}.md") for n in range(MAX_LOGGED_ROWS + 1)])
    assert db.changes(start, db.generation) is None
    with db.write() as conn:
        conn.execute("DELETE FROM notes")  # a clear, as a rebuild does
    assert db.changes(start + 1, db.generation) is None
    half = MAX_LOGGED_ROWS // 2 + 1
    middle = db.generation
    for first in (0, half):
        with db.write() as conn:
            conn.executemany(_INSERT, [("en", f"{n}.md") for n in range(first, first + half)])
    assert db.changes(middle, middle + 1) is not None
    assert db.changes(middle, db.generation) is None  # together, too many
    since = db.generation
    for n in range(LOGGED_COMMITS + 1):
        db.set_state("k", str(n))
    assert db.changes(since, db.generation) is None  # forgotten
    assert db.changes(since + 1, db.generation) == frozenset()
    assert db.changes(since, since + 2) is None


def test_the_reader_used_last_is_handed_out_first(db: Connections) -> None:
    """Readers keep their own page caches: one after another, reads share the warm one;
    at once, each gets a reader of its own."""
    with db.read() as first, db.read() as second:
        assert first is not second
    with db.read() as again:
        assert again is first  # first went back last
    with db.read() as again:
        assert again is first


def _is_open(conn: sqlite3.Connection) -> bool:
    try:
        conn.execute("SELECT 1")
    except sqlite3.ProgrammingError:  # "Cannot operate on a closed database."
        return False
    return True


def test_a_burst_of_reads_leaves_a_few_readers_open(db: Connections) -> None:
    """Each reader keeps its page cache (up to 16 MB) while open: a burst of reads at
    once opened one each, and all of them stayed open for the process's life."""
    burst = 3 * IDLE_READERS
    held = threading.Barrier(burst + 1)
    done = threading.Event()
    used: list[sqlite3.Connection] = []

    def reader() -> None:
        with db.read() as conn:
            conn.execute("SELECT count(*) FROM notes").fetchone()
            used.append(conn)
            held.wait()
            done.wait()

    threads = [threading.Thread(target=reader) for _ in range(burst)]
    for thread in threads:
        thread.start()
    try:
        held.wait(timeout=30)  # every one holds its own reader
        assert len({id(conn) for conn in used}) == burst
    finally:
        done.set()
        for thread in threads:
            thread.join()
    kept = [conn for conn in used if _is_open(conn)]
    assert len(kept) == IDLE_READERS
    assert db.open_readers == IDLE_READERS
    with ExitStack() as stack:  # the ones kept still serve, one each at once
        readers = [stack.enter_context(db.read()) for _ in range(IDLE_READERS)]
        assert {id(conn) for conn in readers} == {id(conn) for conn in kept}
    assert db.open_readers == IDLE_READERS
    db.close()
    assert db.open_readers == 0
    assert not any(_is_open(conn) for conn in kept)
