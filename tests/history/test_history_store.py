"""HistoryStore on a real SQLite file: recording, crash recovery, retention, refusals."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from indexer.sqlite_lib import sqlite3
from indexer.vault.fsops import etag_of
from indexer.vault.history import codec, schema
from indexer.vault.history.store import Change, HistoryStore
from shared.errors import HistoryStoreError

NOW = datetime(2026, 11, 29, 20, 0, 0, tzinfo=UTC)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[HistoryStore]:
    history = HistoryStore(tmp_path / "history", etag_of)
    history.open(check=True)
    yield history
    history.close()


def record(store: HistoryStore, path: str, before: bytes | None, after: bytes | None, **kw) -> int:
    change = Change("en", path, kw.pop("op", "write"), before, after)
    at = kw.pop("at", NOW)
    pending = store.begin(
        [change], actor=kw.pop("actor", "tool"), reason=kw.pop("reason", None), at=at
    )
    store.commit(pending)
    store.settle()  # (as the vault does once the file's lock is let go)
    return pending.versions[("en", path)]


def ops(store: HistoryStore, path: str) -> list[tuple[int, str, str]]:
    return [(v.version, v.op, v.actor) for v in store.versions("en", path, 100)]


def test_versions_count_per_path_and_read_back_exactly(store: HistoryStore) -> None:
    assert record(store, "a.md", None, b"one\n", reason="entry:1 A") == 1
    assert record(store, "a.md", b"one\n", b"one\ntwo\n", op="append") == 2
    assert record(store, "b.md", None, b"other\n") == 1
    newest = store.versions("en", "a.md", 10)
    assert [v.version for v in newest] == [2, 1] and newest[1].reason == "entry:1 A"
    assert newest[0].prev_etag == etag_of(b"one\n") and newest[0].etag == etag_of(b"one\ntwo\n")
    assert store.content(newest[0]) == b"one\ntwo\n" and store.content(newest[1]) == b"one\n"
    assert newest[0].public()["at"] == "2026-11-29T20:00:00.000Z"


def test_a_text_not_yet_recorded_is_recorded_before_the_change(store: HistoryStore) -> None:
    record(store, "a.md", b"found on disk\n", b"written\n")
    assert ops(store, "a.md") == [(2, "write", "tool"), (1, "baseline", "external")]
    record(store, "a.md", b"edited in an editor\n", None, op="delete")
    assert ops(store, "a.md")[:2] == [(4, "delete", "tool"), (3, "edit", "external")]
    record(store, "a.md", b"made again outside\n", b"x\n")
    assert ops(store, "a.md")[:2] == [(6, "write", "tool"), (5, "create", "external")]
    record(store, "a.md", None, b"y\n")
    assert ops(store, "a.md")[:2] == [(8, "write", "tool"), (7, "delete", "external")]


def test_identical_texts_are_stored_once(store: HistoryStore) -> None:
    text = b"the same text\n" * 50
    record(store, "a.md", None, text)
    record(store, "b.md", None, text)
    record(store, "a.md", text, b"changed\n")
    record(store, "a.md", b"changed\n", text)
    assert store.stats()["blobs"] == 2 and store.stats()["versions"] == 4


def test_an_aborted_change_leaves_only_what_was_true(store: HistoryStore) -> None:
    record(store, "a.md", None, b"one\n")
    pending = store.begin(
        [Change("en", "a.md", "write", b"edited\n", b"two\n")], actor="tool", reason=None, at=NOW
    )
    store.abort(pending)
    assert ops(store, "a.md") == [(2, "edit", "external"), (1, "write", "tool")]


def test_recover_keeps_changes_that_happened_and_drops_the_others(store: HistoryStore) -> None:
    record(store, "a.md", None, b"one\n")
    record(store, "b.md", None, b"one\n")
    store.begin(
        [Change("en", "a.md", "write", b"one\n", b"two\n")], actor="tool", reason="r", at=NOW
    )
    store.begin(
        [Change("en", "b.md", "write", b"one\n", b"two\n")], actor="tool", reason="r", at=NOW
    )
    on_disk = {"a.md": etag_of(b"two\n"), "b.md": etag_of(b"one\n")}  # only a.md was replaced
    assert store.recover(lambda lang, path: on_disk[path]) == (1, 1)
    assert [(v.version, v.pending, v.reason) for v in store.versions("en", "a.md", 9)] == [
        (2, False, "r"),
        (1, False, None),
    ]
    assert [v.version for v in store.versions("en", "b.md", 9)] == [1]


def test_done_changes_lose_their_pending_mark_before_they_are_answered(
    store: HistoryStore, tmp_path: Path
) -> None:
    """Cleared only at the next write: a crash before it left the version to ``recover``,
    which drops a created note's version when the note is gone by then."""
    record(store, "a.md", None, b"one\n")
    assert not store.latest("en", "a.md").pending  # type: ignore[union-attr]
    pending = store.begin(
        [Change("en", "b.md", "write", None, b"two\n")], actor="tool", reason=None, at=NOW
    )
    assert store.latest("en", "b.md").pending  # type: ignore[union-attr]
    store.commit(pending)
    assert store.latest("en", "b.md").pending  # type: ignore[union-attr]
    store.settle()
    reopened = HistoryStore(tmp_path / "history", etag_of)  # (as after kill -9: not closed)
    reopened.open()
    assert not reopened.versions("en", "b.md", 1)[0].pending
    reopened.close()


def test_a_settle_marks_the_done_changes_in_one_statement(store: HistoryStore) -> None:
    """The mark after a change is one UPDATE, its own transaction: it was BEGIN
    IMMEDIATE, UPDATE and COMMIT (two calls into SQLite more, at most writes of 8
    clients at once); a settle with nothing to mark runs none."""
    pending = store.begin(
        [Change("en", "b.md", "write", None, b"two\n")], actor="tool", reason=None, at=NOW
    )
    store.commit(pending)
    writer = store._writer
    assert writer is not None
    statements: list[str] = []
    writer.set_trace_callback(statements.append)
    try:
        store.settle()
        store.settle()
    finally:
        writer.set_trace_callback(None)
    assert statements == [f"UPDATE versions SET pending = 0 WHERE id IN ({pending.ids[0]})"]
    assert not writer.in_transaction
    assert not store.latest("en", "b.md").pending  # type: ignore[union-attr]


def test_observe_records_external_changes_and_first_sightings_only_when_asked(
    store: HistoryStore,
) -> None:
    assert store.observe("en", "new.md", b"seen at start-up\n", NOW, unknown=False) is None
    seen = store.observe("en", "new.md", b"seen by the watcher\n", NOW, unknown=True)
    assert seen is not None and (seen.op, seen.actor) == ("baseline", "external")
    assert store.observe("en", "new.md", b"seen by the watcher\n", NOW, unknown=True) is None
    gone = store.observe("en", "new.md", None, NOW, unknown=False)
    assert gone is not None and (gone.version, gone.op, gone.etag) == (2, "delete", None)


def moved(store: HistoryStore, path: str) -> str | None:
    """Where the newest version of ``path`` says it went or came from."""
    shown = store.versions("en", path, 1)[0].public()
    return shown.get("moved_to", shown.get("moved_from"))


def test_a_deletion_and_a_new_file_of_the_same_bytes_name_each_other(
    store: HistoryStore,
) -> None:
    """A rename by another program is a deletion and a new file, told in either order;
    history links them (ops unchanged), once, within a minute, never an empty file, a
    file with itself, another lang's, or the text an outside change replaced."""
    text = b"# Plan\n\nthe text\n"
    store.observe("en", "a.md", text, NOW, unknown=True)
    store.observe("en", "a.md", None, NOW, unknown=False)  # deleted...
    store.observe("en", "b.md", text, NOW, unknown=True)  # ...then seen at its new name
    assert (moved(store, "a.md"), moved(store, "b.md")) == ("b.md", "a.md")
    assert [v.op for v in store.versions("en", "b.md", 5)] == ["baseline"]
    store.observe("en", "c.md", text, NOW, unknown=True)  # a copy made later: taken once
    assert moved(store, "c.md") is None
    store.observe("en", "d.md", b"# D\n", NOW, unknown=True)  # the new name seen first,
    store.observe("en", "e.md", b"# D\n", NOW, unknown=True, kept=True)  # the old text
    store.observe("en", "e.md", None, NOW, unknown=False)  # (no new file), then its deletion
    assert (moved(store, "e.md"), moved(store, "d.md")) == ("d.md", "e.md")
    store.observe("en", "g.md", b"# G\n", NOW, unknown=True)  # made and deleted: itself
    store.observe("en", "g.md", None, NOW, unknown=False)
    assert moved(store, "g.md") is None
    store.observe("en", "g.md", b"# G\n", NOW + timedelta(minutes=2), unknown=True)
    assert moved(store, "g.md") is None  # (back at its own path, after the window too)
    store.observe("en", "old.md", b"# Old\n", NOW, unknown=True)
    store.observe("en", "old.md", None, NOW, unknown=False)
    store.observe("en", "late.md", b"# Old\n", NOW + timedelta(minutes=2), unknown=True)
    assert moved(store, "late.md") is None
    store.observe("en", "empty.md", b"", NOW, unknown=True)
    store.observe("en", "empty.md", None, NOW, unknown=False)
    store.observe("en", "empty2.md", b"", NOW, unknown=True)
    assert moved(store, "empty2.md") is None
    store.observe("fr", "x.md", b"# X\n", NOW, unknown=True)
    store.observe("fr", "x.md", None, NOW, unknown=False)
    store.observe("en", "x.md", b"# X\n", NOW, unknown=True)
    assert moved(store, "x.md") is None


def test_reasons_are_found_by_entry_without_matching_a_longer_id(store: HistoryStore) -> None:
    record(store, "a.md", None, b"a\n", reason="entry:1 First")
    record(store, "b.md", None, b"b\n", reason="entry:10 Tenth")
    record(store, "c.md", None, b"c\n", reason="entry:1")
    record(store, "d.md", None, b"d\n", reason="undo entry:1")
    assert store.paths_with_reason("en", "entry:1") == ["a.md", "c.md"]
    assert store.paths_with_reason("fr", "entry:1") == []


def test_appends_form_a_bounded_chain_that_rebuilds_every_version(store: HistoryStore) -> None:
    text = b"# Day\n"
    record(store, "day.md", None, text)
    for i in range(codec.MAX_DEPTH + 5):
        added = f"\n## Event {i}\nsomething happened\n".encode()
        record(store, "day.md", text, text + added, op="append")
        text += added
    rows = store.versions("en", "day.md", 1000)
    assert store.content(rows[0]) == text and store.content(rows[-1]) == b"# Day\n"
    depths = [store._blob_depth(row.blob) for row in rows if row.blob is not None]
    assert max(depths) == codec.MAX_DEPTH and depths.count(0) == 2  # one more full copy
    assert store.stats()["blob_bytes"] < len(text)  # the added texts, not copies of the day


def test_prune_keeps_the_newest_the_recent_and_what_undo_needs(store: HistoryStore) -> None:
    old = NOW - timedelta(days=200)
    text = b"v0\n"
    record(store, "a.md", None, text, at=old)
    for i in range(1, 30):  # 30 old versions of a.md, the last 5 by one entry
        reason = "entry:9 Nine" if i >= 25 else None
        record(store, "a.md", text, f"v{i}\n".encode(), at=old, reason=reason)
        text = f"v{i}\n".encode()
    record(store, "b.md", None, b"b0\n", at=old)
    for i in range(1, 30):
        record(store, "b.md", f"b{i - 1}\n".encode(), f"b{i}\n".encode(), at=NOW)
    stats = store.prune(NOW, days=90, keep=20)
    assert [v.version for v in store.versions("en", "a.md", 100)] == list(range(30, 10, -1))
    assert len(store.versions("en", "b.md", 100)) == 29  # only b0, 200 days old, went
    assert stats.versions == 10 + 1 and stats.blobs > 0
    for row in store.versions("en", "a.md", 100) + store.versions("en", "b.md", 100):
        assert store.content(row)  # no kept version lost its text


def test_prune_keeps_the_run_of_a_pending_undo_beyond_keep(store: HistoryStore) -> None:
    old = NOW - timedelta(days=200)
    text = b"0\n"
    record(store, "day.md", None, text, at=old)
    for _ in range(39):  # one entry appended 39 times
        record(store, "day.md", text, text + b"x\n", at=old, op="append", reason="entry:7 Day")
        text += b"x\n"
    store.prune(NOW, days=90, keep=20)
    assert len(store.versions("en", "day.md", 100)) == 40


def test_a_deleted_file_keeps_its_latest_versions(store: HistoryStore) -> None:
    old = NOW - timedelta(days=400)
    record(store, "gone.md", None, b"text\n", at=old)
    record(store, "gone.md", b"text\n", None, op="delete", at=old)
    store.prune(NOW, days=90, keep=20)
    rows = store.versions("en", "gone.md", 9)
    assert [v.op for v in rows] == ["delete", "write"] and store.content(rows[1]) == b"text\n"


# -- refusals ------------------------------------------------------------------------------


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def refused(folder: Path, words: str, *, check: bool = False) -> None:
    path = folder / schema.FILE_NAME
    before = digest(path)
    with pytest.raises(HistoryStoreError) as info:
        HistoryStore(folder, etag_of).open(check=check)
    assert words in str(info.value) and "\n" not in str(info.value)
    assert digest(path) == before, "a refused history file must be left as it is"


def test_a_file_that_is_not_sqlite_is_refused_unchanged(tmp_path: Path) -> None:
    tmp_path.joinpath(schema.FILE_NAME).write_bytes(b"not a database at all" * 100)
    refused(tmp_path, "cannot be read")


def test_a_database_that_is_not_ours_is_refused_unchanged(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / schema.FILE_NAME)
    conn.execute("CREATE TABLE notes (x)")
    conn.commit()
    conn.close()
    refused(tmp_path, "not a vault-memory history file")


def test_a_newer_schema_is_refused_unchanged(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path, etag_of)
    store.open()
    store.close()
    conn = sqlite3.connect(tmp_path / schema.FILE_NAME)
    conn.execute(f"PRAGMA user_version = {schema.SCHEMA_VERSION + 1}")
    conn.close()
    refused(tmp_path, "newer indexer")


def test_a_damaged_page_is_found_by_the_check(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path, etag_of)
    store.open()
    for i in range(300):
        record(store, f"n{i}.md", None, f"note {i}\n".encode() * 40)
    store.close()
    path = tmp_path / schema.FILE_NAME
    data = bytearray(path.read_bytes())
    page = 4096
    assert len(data) > 6 * page
    for number in range(2, 6):  # the b-tree page headers
        data[number * page : number * page + 12] = b"\x07" * 12
    path.write_bytes(bytes(data))
    refused(tmp_path, "damaged", check=True)


def test_reading_a_missing_history_read_only_says_so(tmp_path: Path) -> None:
    with pytest.raises(HistoryStoreError, match="no history"):
        HistoryStore(tmp_path, etag_of, readonly=True).open()
    assert not tmp_path.joinpath(schema.FILE_NAME).exists()


def test_a_history_this_user_may_not_write_stops_the_start_and_is_not_called_damaged(
    tmp_path: Path,
) -> None:
    """SQLite opens a file it may not write (another user's: one ``sudo indexer serve``)
    read-only without a word: the server said it was fine and refused every change as
    ``internal``. The write probe finds it; the message does not say "damaged" (moving a
    good history aside loses it). Tests run as root, so the read-only open is made here."""
    store = HistoryStore(tmp_path / "h", etag_of)
    store.open()
    store.close()
    path = tmp_path / "h" / schema.FILE_NAME
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
    with pytest.raises(sqlite3.OperationalError) as caught:
        schema._check_writable(conn)
    conn.close()
    message = str(schema._damaged(path, caught.value))
    assert "cannot be opened for writing by this user" in message and "damaged" not in message
    writable = schema.open_history(tmp_path / "h")  # the probe changes nothing it can write
    writable.close()
    assert (
        schema.open_history(tmp_path / "h", readonly=True)
        .execute("PRAGMA user_version")
        .fetchone()[0]
        == schema.SCHEMA_VERSION
    )


def test_an_etag_the_caller_knows_is_not_hashed_again(tmp_path: Path) -> None:
    hashed: list[bytes] = []

    def counting_etag(data: bytes) -> str:
        hashed.append(data)
        return etag_of(data)

    store = HistoryStore(tmp_path / "history", counting_etag)
    store.open()
    try:
        record(store, "a.md", None, b"one\n")
        hashed.clear()
        change = Change("en", "a.md", "write", b"one\n", b"two\n", before_etag=etag_of(b"one\n"))
        store.commit(store.begin([change], actor="tool", reason=None, at=NOW))
        assert b"one\n" not in hashed  # the vault knew the etag of the bytes it replaced
        assert store.versions("en", "a.md", 1)[0].prev_etag == etag_of(b"one\n")
        record(store, "a.md", b"two\n", b"three\n")
        assert b"two\n" in hashed  # not given: hashed
    finally:
        store.close()


def test_a_close_the_disk_refuses_still_closes_and_the_next_start_keeps_the_versions(
    tmp_path: Path,
) -> None:
    """The disk filled after a change's file was written and before its pending mark
    was cleared: the stop's close raised StorageError ("... nothing was changed"), left
    the SQLite connections open, and ``indexer serve`` ended with that error. Now close
    finishes; the row stays pending and the next start's recover keeps it."""
    store = HistoryStore(tmp_path / "history", etag_of)
    store.open(check=True)
    pending = store.begin(
        [Change("en", "a.md", "write", None, b"one\n")], actor="tool", reason=None, at=NOW
    )
    store.commit(pending)  # the file is written; the mark waits for the next transaction
    for conn in store._connections:  # SQLite refuses every write from here on
        conn.execute("PRAGMA query_only = 1")
    store.close()
    assert store._connections == [] and store._writer is None
    reopened = HistoryStore(tmp_path / "history", etag_of)
    reopened.open(check=True)
    try:
        assert [v.pending for v in reopened.versions("en", "a.md", 9)] == [True]
        assert reopened.recover(lambda lang, path: etag_of(b"one\n")) == (1, 0)
        assert [(v.version, v.pending) for v in reopened.versions("en", "a.md", 9)] == [(1, False)]
    finally:
        reopened.close()


def test_a_burst_of_reads_leaves_a_few_readers_open(store: HistoryStore) -> None:
    """Twelve reads at once open twelve readers; once done, four stay open (each kept
    its page cache for the process's life: up to 40, one per pool thread)."""
    import threading

    from indexer.vault.history.reads import IDLE_READERS

    inside = threading.Barrier(12)
    opened: list[sqlite3.Connection] = []

    def read() -> None:
        with store._read() as conn:
            opened.append(conn)
            inside.wait(10)

    threads = [threading.Thread(target=read) for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert len(set(map(id, opened))) == 12
    assert len(store._connections) == IDLE_READERS + 1  # (and the writer)
    assert store.latest("en", "x.md") is None  # (the readers kept still read)
