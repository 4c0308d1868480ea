"""The tools' changes reaching the index: appends deferred but never missed by a read,
writes by group commit, hashes of appends from the appended bytes only (real vault,
real index, real history)."""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Callable, Iterator

import pytest
from helpers.indexer_process import wait_for

from indexer.index.service import NoteIndex
from indexer.index.tool_changes import ToolChanges
from indexer.vault import fsops
from indexer.vault.digests import Digests
from indexer.vault.history.store import HistoryStore
from indexer.vault.sandbox import Sandbox
from indexer.vault.vault import Vault
from indexer.wiring import external_change_recorder
from shared.workspace import Workspace

DAY = "---\ntitle: Events\ntype: events\n---\n# Events\n"


def wired(ws: Workspace, flush_delay: float) -> tuple[Vault, NoteIndex, HistoryStore]:
    history = HistoryStore(ws.history_dir, fsops.etag_of)
    history.open()
    vault = Vault(Sandbox(ws), max_file_bytes=4 << 20, history=history)
    index = NoteIndex(ws, flush_delay=flush_delay)
    index.open()
    vault.index_sync = index
    return vault, index, history


@pytest.fixture
def slow(ws: Workspace) -> Iterator[tuple[Vault, NoteIndex]]:
    """A background flush that never comes during a test: only reads flush."""
    vault, index, history = wired(ws, flush_delay=600)
    yield vault, index
    index.close()
    history.close()


def signature(ws: Workspace, rel: str) -> tuple[int, int, int]:
    info = (ws.vault_dir("en") / rel).stat()
    return info.st_size, info.st_mtime_ns, info.st_ctime_ns


def indexed(index: NoteIndex, rel: str) -> tuple[int, int, int] | None:
    """What the index's row says of ``rel`` (through grep's plan, which never flushes)."""
    plan = index.grep_plan("en", "Events", True, False)
    assert plan is not None
    return plan.indexed.get(rel)


def hits(index: NoteIndex, query: str) -> list[str]:
    return [hit["path"] for hit in index.search("en", query)["results"]]


def test_an_append_waits_for_a_read_and_the_read_finds_it(
    ws: Workspace, slow: tuple[Vault, NoteIndex]
) -> None:
    vault, index = slow
    vault.write("en", "events/day.md", DAY)
    vault.append("en", "events/day.md", "\n## Event\n\nzebracorn sighted\n")
    assert indexed(index, "events/day.md") != signature(ws, "events/day.md")  # not yet
    assert hits(index, "zebracorn") == ["events/day.md"]  # the search flushed first
    assert indexed(index, "events/day.md") == signature(ws, "events/day.md")


def test_every_kind_of_read_sees_the_appends_before_it(
    ws: Workspace, slow: tuple[Vault, NoteIndex]
) -> None:
    vault, index = slow
    vault.append("en", "events/a.md", "# A\n\nfirst quokka\n")
    assert index.counts() == {"en": 1}
    vault.append("en", "events/b.md", "# B\n\nsecond quokka\n")
    assert [n["path"] for n in index.recent("en", 5)] == ["events/b.md", "events/a.md"]
    vault.append("en", "events/a.md", "more wombat\n")
    assert [n["path"] for n in index.search_any("en", ["wombat"])] == ["events/a.md"]
    vault.append("en", "events/c.md", "# C\n")
    assert set(index.folder_notes("en", "events")) == {"a.md", "b.md", "c.md"}


def test_appends_are_indexed_in_the_background_without_a_read(ws: Workspace) -> None:
    vault, index, history = wired(ws, flush_delay=0.01)
    try:
        vault.append("en", "events/day.md", "# Day\n\nplatypus\n")
        wait_for(
            lambda: indexed(index, "events/day.md") == signature(ws, "events/day.md"),
            10,
            what="the background flush",
        )
    finally:
        index.close()
        history.close()


def test_closing_indexes_what_is_pending(ws: Workspace) -> None:
    vault, index, history = wired(ws, flush_delay=600)
    vault.append("en", "events/day.md", "# Day\n\nnarwhal\n")
    index.close()
    history.close()
    again = NoteIndex(ws)
    again.open()
    try:
        assert hits(again, "narwhal") == ["events/day.md"]  # no reconcile ran
    finally:
        again.close()


def test_an_outside_change_to_a_pending_file_is_told_as_the_watchers(
    ws: Workspace, slow: tuple[Vault, NoteIndex]
) -> None:
    vault, index = slow
    heard: list[tuple[str, str]] = []
    index.change_listeners.append(lambda lang, path, source: heard.append((path, source)))
    vault.append("en", "events/a.md", "# A\n")
    vault.append("en", "events/b.md", "# B\n")
    (ws.vault_dir("en") / "events/b.md").write_text("# B\n\nedited in an editor\n")
    index._apply_changes({("en", "events/b.md")}, set())  # the watcher leaves it pending
    assert indexed(index, "events/b.md") is None
    index.flush()
    assert sorted(heard) == [("events/a.md", "tool"), ("events/b.md", "watcher")]
    assert hits(index, "editor") == ["events/b.md"]


def test_a_pending_file_gone_outside_is_told_as_the_watchers_and_recorded(
    ws: Workspace, slow: tuple[Vault, NoteIndex]
) -> None:
    """An append not indexed yet, then another program deletes (or renames) the file:
    the flush took the missing file for the tool's own change, and history kept the
    append as the note's last version for good."""
    vault, index = slow
    index.batch_listeners.append(external_change_recorder(vault))
    vault.append("en", "events/a.md", "# A\n")
    vault.append("en", "events/b.md", "# B\n")
    vault.append("en", "events/a.md", "more\n")
    vault.append("en", "events/b.md", "more\n")
    (ws.vault_dir("en") / "events/a.md").unlink()
    os.rename(ws.vault_dir("en") / "events/b.md", ws.vault_dir("en") / "events/c.md")
    index.flush()
    for gone in ("events/a.md", "events/b.md"):
        newest = vault.history("en", gone)["versions"][0]
        assert (newest["op"], newest["actor"]) == ("delete", "external"), newest


def test_an_outside_change_right_after_a_write_is_recorded(
    ws: Workspace, slow: tuple[Vault, NoteIndex]
) -> None:
    """Another program edits or renames the note between the write's swap and its sync
    (put there by a hook): the sync took the outside bytes for the tool's, and history
    never heard of them (disk and history disagreed for good)."""
    vault, index = slow
    index.batch_listeners.append(external_change_recorder(vault))
    path = ws.vault_dir("en") / "notes/n.md"

    class OutsideFirst:
        def __init__(self, change: Callable[[], None]) -> None:
            self.change = change

        def note_changed(self, lang: str, rel: str, etag: str | None = None) -> None:
            self.change()
            index.note_changed(lang, rel, etag)

        def note_appended(self, lang: str, rel: str, etag: str) -> None:
            index.note_appended(lang, rel, etag)

    vault.write("en", "notes/n.md", "# N\n\nfirst\n")
    vault.index_sync = OutsideFirst(lambda: path.write_text("# N\n\nan editor's save\n"))
    vault.write("en", "notes/n.md", "# N\n\nsecond\n")  # (returns: no deadlock)
    edited = fsops.etag_of(path.read_bytes())
    wait_for(
        lambda: vault.history("en", "notes/n.md")["versions"][0]["etag"] == edited,
        5,
        what="the editor's save in history",
    )
    assert vault.history("en", "notes/n.md")["versions"][0]["actor"] == "external"
    vault.index_sync = OutsideFirst(lambda: os.rename(path, path.with_name("moved.md")))
    vault.write("en", "notes/n.md", "# N\n\nthird\n")
    wait_for(
        lambda: vault.history("en", "notes/n.md")["versions"][0]["op"] == "delete",
        5,
        what="the rename in history",
    )


def test_concurrent_writes_are_searchable_when_each_returns(
    ws: Workspace, slow: tuple[Vault, NoteIndex]
) -> None:
    vault, index = slow
    commits_before = index._generation
    missed: list[str] = []

    def writer(n: int) -> None:
        for i in range(10):
            token = f"tok{n}x{i}q"
            vault.write("en", f"items/w{n}.md", f"# W{n}\n\n{token}\n")
            if hits(index, token) != [f"items/w{n}.md"]:
                missed.append(token)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert missed == []
    assert index._generation - commits_before <= 80  # never more than one commit a write


def test_group_commit_syncs_queued_changes_in_one_transaction() -> None:
    batches: list[dict] = []
    inside = threading.Event()
    release = threading.Event()

    def sync(batch: dict) -> list[tuple[str, str, str]]:
        batches.append(dict(batch))
        if len(batches) == 1:  # the first leader holds the commit while others queue
            inside.set()
            release.wait(10)
        return [(lang, path, "tool") for lang, path in batch]

    told: list[tuple[str, str, str]] = []
    changes = ToolChanges(sync, told.extend)
    first = threading.Thread(target=changes.changed, args=(("en", "a.md"),))
    first.start()
    assert inside.wait(10)
    others = [
        threading.Thread(target=changes.changed, args=(("en", name),))
        for name in ("b.md", "c.md", "b.md")
    ]
    for thread in others:
        thread.start()
    wait_for(lambda: len(changes._writes) == 2, 10, what="the followers to queue")
    release.set()
    for thread in (first, *others):
        thread.join(10)
    assert batches == [{("en", "a.md"): None}, {("en", "b.md"): None, ("en", "c.md"): None}]
    assert sorted(told) == [("en", "a.md", "tool"), ("en", "b.md", "tool"), ("en", "c.md", "tool")]


def test_a_leader_alone_waits_for_writers_only_while_writes_come_together() -> None:
    """With 8 clients writing, most groups were one write (0.8 transactions a write);
    a leader alone waits ``gather`` for the others while groups of several came of late,
    and a lone writer never waits."""
    batches: list[set] = []
    release = threading.Event()

    def sync(batch: dict) -> list[tuple[str, str, str]]:
        batches.append({path for _, path in batch})
        if ("en", "a.md") in batch:  # this leader holds the commit while others queue
            release.wait(10)
        return []

    changes = ToolChanges(sync, lambda told: None, gather=2.0, together=600)
    began = time.monotonic()
    changes.changed(("en", "solo.md"))
    assert time.monotonic() - began < 1.0  # no group of several yet: no wait
    first = threading.Thread(target=changes.changed, args=(("en", "a.md"),))
    first.start()
    wait_for(lambda: batches[-1] == {"a.md"}, 10, what="the first leader to sync")
    others = [threading.Thread(target=changes.changed, args=(("en", n),)) for n in ("b.md", "c.md")]
    for thread in others:
        thread.start()
    wait_for(lambda: len(changes._writes) == 2, 10, what="the followers to queue")
    release.set()
    for thread in (first, *others):
        thread.join(10)
    assert batches[-1] == {"b.md", "c.md"}  # a group of several: the next leader waits
    leader = threading.Thread(target=changes.changed, args=(("en", "d.md"),))
    leader.start()
    queued_by = time.monotonic() + 1  # (either order: the first to lead waits for the other)
    while ("en", "d.md") not in changes._writes and time.monotonic() < queued_by:
        time.sleep(0.001)
    changes.changed(("en", "e.md"))  # (while the leader waits)
    leader.join(10)
    assert batches[-1] == {"d.md", "e.md"}


def test_the_flush_pause_grows_with_what_a_flush_costs() -> None:
    def sync(batch: dict) -> list[tuple[str, str, str]]:
        time.sleep(0.05)
        return []

    changes = ToolChanges(sync, lambda told: None, min_delay=0.01, max_delay=5)
    changes.appended(("en", "a.md"), "etag")
    wait_for(lambda: changes.delay >= 0.4, 10, what="a longer pause after a 50 ms flush")
    changes.stop()


def test_append_hashes_are_those_of_the_whole_file(
    ws: Workspace, slow: tuple[Vault, NoteIndex]
) -> None:
    vault, _ = slow
    path = ws.vault_dir("en") / "events/day.md"
    vault.write("en", "events/day.md", DAY)
    for i in range(5):
        etag = vault.append("en", "events/day.md", f"\n## Event {i}\n")["etag"]
        assert etag == fsops.etag_of(path.read_bytes())
    # Changed outside the tools (same size): the next append hashes the whole file.
    text = path.read_bytes()
    path.write_bytes(text.replace(b"Event 0", b"Event X"))
    etag = vault.append("en", "events/day.md", "\n## Event 5\n")["etag"]
    assert etag == fsops.etag_of(path.read_bytes())
    history = vault.recorder.need()
    for version in history.versions("en", "events/day.md", limit=20):
        data = history.content(version)  # checked against its sha256 on the way
        assert fsops.etag_of(data) == version.etag


def test_digests_hash_only_what_was_appended_to_known_bytes() -> None:
    digests = Digests(max_files=2, max_bytes=1 << 20)
    base = os.urandom(1000)
    first = digests.of(("en", "a.md"), base)
    assert first.etag == fsops.etag_of(base)
    assert first.sha == hashlib.sha256(base).digest()
    grown = digests.appended(("en", "a.md"), base, b"tail", base + b"tail")
    assert grown.etag == fsops.etag_of(base + b"tail")
    assert grown.sha == hashlib.sha256(base + b"tail").digest()
    other = bytes(reversed(base))  # not the bytes remembered: hashed whole, still right
    assert digests.appended(("en", "a.md"), other, b"x", other + b"x").etag == fsops.etag_of(
        other + b"x"
    )
    digests.of(("en", "b.md"), b"b")
    digests.of(("en", "c.md"), b"c")  # over max_files: a.md is forgotten
    assert ("en", "a.md") not in digests._entries
    digests.of(("en", "big.md"), b"x" * (1 << 19))  # over a quarter of max_bytes: not kept
    assert ("en", "big.md") not in digests._entries


def test_digests_know_the_etag_of_the_bytes_they_remember_and_hold_few() -> None:
    digests = Digests(max_files=8, max_bytes=4000)
    digests.of(("en", "a.md"), b"one\n")
    assert digests.known_etag(("en", "a.md"), b"one\n") == fsops.etag_of(b"one\n")
    assert digests.known_etag(("en", "a.md"), b"other\n") is None
    assert digests.known_etag(("en", "b.md"), b"one\n") is None
    big = b"x" * 1001  # over a quarter of max_bytes: hashed again, never kept alive
    digests.of(("en", "big.md"), big)
    assert digests.known_etag(("en", "big.md"), big) is None
    parts = [bytes([65 + n]) * 900 for n in range(5)]  # 4,500 bytes in all
    for n, part in enumerate(parts):
        digests.of(("en", f"p{n}.md"), part)
    assert digests.known_etag(("en", "p0.md"), parts[0]) is None  # the oldest went first
    assert digests.known_etag(("en", "p4.md"), parts[4]) == fsops.etag_of(parts[4])


def test_the_notes_in_a_notes_images_folder_move_go_and_come_back_with_it_at_once(
    ws: Workspace, slow: tuple[Vault, NoteIndex]
) -> None:
    """Another program's note in ``a.md.assets/`` is a note (indexed); the tools that
    carry the folder with its note tell the index of it before they answer, as of the
    note itself: search found it at its old path, or after its delete, until the
    watcher came by."""
    vault, index = slow
    vault.write("en", "a.md", "# A\n")
    folder = ws.vault_dir("en") / "a.md.assets"
    folder.mkdir()
    (folder / "x.md").write_text("# X\n\nkinkajou\n")
    (folder / "y.txt").write_text("kinkajou\n")
    index.reconcile()
    assert sorted(hits(index, "kinkajou")) == ["a.md.assets/x.md", "a.md.assets/y.txt"]
    vault.move("en", "a.md", "b.md")
    assert sorted(hits(index, "kinkajou")) == ["b.md.assets/x.md", "b.md.assets/y.txt"]
    vault.delete("en", "b.md")
    assert hits(index, "kinkajou") == []
    deleted = vault.history("en", "b.md")["versions"][0]["version"] - 1
    vault.restore("en", "b.md", deleted)
    assert sorted(hits(index, "kinkajou")) == ["b.md.assets/x.md", "b.md.assets/y.txt"]
