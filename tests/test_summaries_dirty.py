"""Dirty folders: which summaries a change makes stale, and the debounced wake-up."""

from __future__ import annotations

import asyncio
import threading

import pytest

from indexer.jobs.dirty import DirtyFolders, affected_folders


@pytest.mark.parametrize(
    ("rel", "folders"),
    [
        ("a/b/c.md", ["a/b", "a", ""]),
        ("c.md", [""]),
        ("a/b", ["a", ""]),  # a folder deleted: its parent lost a child
        ("a/b/.overview.md", ["a", ""]),  # a summary changed: its parent reads it, not itself
        ("a/.overview.md", [""]),
        (".overview.md", []),  # the root's summary: nothing above it
        ("a/go.md.assets/x.png", []),
        (".hidden/x.md", []),
    ],
)
def test_a_change_makes_its_ancestors_stale(rel: str, folders: list[str]) -> None:
    assert affected_folders(rel) == folders


def test_a_summary_file_changed_by_hand_is_stale_itself() -> None:
    assert affected_folders("a/b/.overview.md", by_others=True) == ["a/b", "a", ""]
    assert affected_folders(".overview.md", by_others=True) == [""]


async def test_a_batch_comes_once_marks_stop_for_the_debounce() -> None:
    dirty = DirtyFolders(debounce=0.15)
    loop = asyncio.get_running_loop()
    waiting = asyncio.ensure_future(dirty.next_batch())
    await asyncio.sleep(0.05)
    started = loop.time()
    wakes = []
    hop = loop.call_soon_threadsafe

    def counted(callback, *args):  # type: ignore[no-untyped-def]
        wakes.append(callback)
        return hop(callback, *args)

    loop.call_soon_threadsafe = counted  # type: ignore[method-assign]

    def marks() -> None:  # from another thread, like the watcher or a tool call
        for i in range(3):
            dirty.mark("en", [f"f{i}", ""])
            threading.Event().wait(0.05)

    await asyncio.to_thread(marks)
    batch = await waiting
    assert batch == {"en": {"f0", "f1", "f2", ""}}
    assert loop.time() - started >= 0.25  # 2 x 0.05 s of marks, then 0.15 s of quiet
    # The first mark wakes the pass; it sees the later ones itself.
    assert [c.__name__ for c in wakes].count("set") == 1
    assert dirty.is_dirty("en", "f1") and not dirty.is_dirty("en", "f9")
    dirty.done()
    assert not dirty.is_dirty("en", "f1")
    assert dirty.take() == {}


async def test_a_steady_stream_of_marks_waits_at_most_max_delay() -> None:
    dirty = DirtyFolders(debounce=0.2, max_delay=0.3)
    stop = threading.Event()

    def stream() -> None:
        while not stop.wait(0.02):
            dirty.mark("ja", ["x"])

    thread = threading.Thread(target=stream)
    thread.start()
    try:
        loop = asyncio.get_running_loop()
        started = loop.time()
        batch = await asyncio.wait_for(dirty.next_batch(), 2)
        assert batch == {"ja": {"x"}} and loop.time() - started < 0.6
    finally:
        stop.set()
        thread.join()


def test_no_folders_mark_nothing() -> None:
    dirty = DirtyFolders()
    dirty.mark("en", [])
    assert dirty.take() == {}
