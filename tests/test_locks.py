"""The vault's shared lock: changes hold it together, a folder move alone."""

from __future__ import annotations

import threading
import time

import pytest

from indexer.vault.locks import SharedLock, VaultLocks
from shared.errors import ConflictError


def test_shared_holders_do_not_wait_for_each_other_and_may_nest() -> None:
    lock = SharedLock()
    inside = threading.Barrier(2, timeout=5)

    def holder() -> None:
        with lock.shared(), lock.shared():  # again, nested: no deadlock
            inside.wait()

    threads = [threading.Thread(target=holder) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(5)
        assert not thread.is_alive()


def test_alone_waits_for_the_shared_holders_and_gives_up_saying_conflict() -> None:
    lock = SharedLock()
    taken, release = threading.Event(), threading.Event()

    def holder() -> None:
        with lock.shared():
            taken.set()
            release.wait(5)

    thread = threading.Thread(target=holder)
    thread.start()
    taken.wait(5)
    with pytest.raises(ConflictError, match="busy"), lock.exclusive(timeout=0.05):
        pass
    release.set()
    thread.join(5)
    with lock.exclusive(timeout=1), lock.shared():  # alone, it may also take it shared
        pass


def test_shared_waits_while_one_holds_it_alone() -> None:
    lock = SharedLock()
    order: list[str] = []
    alone, done = threading.Event(), threading.Event()

    def change() -> None:
        alone.wait(5)
        with lock.shared():
            order.append("change")
        done.set()

    thread = threading.Thread(target=change)
    thread.start()
    with lock.exclusive():
        alone.set()
        assert not done.wait(0.1)
        order.append("move")
    thread.join(5)
    assert order == ["move", "change"]


def test_a_shared_holder_cannot_take_it_alone() -> None:
    lock = SharedLock()
    with lock.shared(), pytest.raises(RuntimeError), lock.exclusive():
        pass


def test_held_locks_files_case_folded_and_the_vault_alone_when_asked() -> None:
    locks = VaultLocks()
    with locks.held([("en", "A.md")]):
        assert locks.file("en", "a.md").locked()
    assert not locks.file("en", "a.md").locked()
    held = locks.held([], alone="en")  # an empty folder's move still holds its vault
    with held, pytest.raises(ConflictError), locks.vault("en").exclusive(timeout=0):
        pass


def test_steady_shared_holders_do_not_starve_one_waiting_alone() -> None:
    """Four threads taking it shared back to back, overlapping: the holders never all let
    go at once, and a folder move waited 10 s and gave up with ``conflict``."""
    lock = SharedLock()
    stop = threading.Event()

    def writer() -> None:
        while not stop.is_set():
            with lock.shared():
                time.sleep(0.002)

    threads = [threading.Thread(target=writer) for _ in range(4)]
    for thread in threads:
        thread.start()
    try:
        time.sleep(0.05)
        started = time.monotonic()
        with lock.exclusive(timeout=2):
            waited = time.monotonic() - started
    finally:
        stop.set()
        for thread in threads:
            thread.join(5)
    assert waited < 1.0
