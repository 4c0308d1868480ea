"""The heap trimmed once the server goes idle after work, and never while it works."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest

from indexer.idle_trim import IdleTrim

PERIOD = 0.01


class Clock:
    """Process CPU seconds read from a script: each period uses the next amount."""

    def __init__(self, used: list[float]) -> None:
        self._used = iter(used)
        self._now = 0.0
        self.done = threading.Event()

    def __call__(self) -> float:
        try:
            self._now += next(self._used)
        except StopIteration:  # (past the script: busy, so that nothing trims after it)
            self.done.set()
            self._now += 1.0
        return self._now

    def spend(self, seconds: float) -> None:
        self._now += seconds


def trims_for(used: list[float], *, trims: bool = True, walk: float = 0.0) -> int:
    """How many times the heap is trimmed over periods that used ``used`` CPU seconds."""
    made: list[int] = []

    clock = Clock([0.0, *used])

    def trim() -> bool:
        made.append(1)
        clock.spend(walk)
        return trims

    trimming = IdleTrim(period=PERIOD, cpu_seconds=clock, trim=trim)
    trimming.start()
    try:
        for _ in range(1000):
            if clock.done.wait(0.01) or not trimming.running:
                break
        assert trimming.running is trims  # (one without malloc_trim stops looking)
    finally:
        trimming.stop()
    return len(made)


BUSY = PERIOD  # a whole period's CPU
IDLE = 0.0


@pytest.mark.parametrize(
    ("used", "expected"),
    [
        ([IDLE] * 6, 0),  # idle from the start: nothing freed, nothing walked
        ([BUSY, BUSY, BUSY], 0),  # working all along: never walked while it works
        ([BUSY, IDLE, IDLE, IDLE, IDLE], 1),  # once after the work, not at each idle period
        ([BUSY, IDLE, BUSY, BUSY, IDLE, IDLE], 2),  # once after each spell of work
    ],
)
def test_trims_at_the_first_idle_period_after_work(used: list[float], expected: int) -> None:
    assert trims_for(used) == expected


def test_the_walks_own_cpu_is_not_work() -> None:
    """A trim that took a whole period's CPU itself: the next period is still idle (else
    an idle server would be walked every other period)."""
    assert trims_for([BUSY, IDLE, IDLE, IDLE, IDLE], walk=BUSY) == 1


def test_a_library_without_malloc_trim_stops_asking() -> None:
    assert trims_for([BUSY, IDLE, BUSY, IDLE, BUSY, IDLE], trims=False) == 1


def test_freed_memory_goes_back_to_the_system() -> None:
    """Real glibc: 100 MB of freed small blocks under a live one stay resident until the
    trim hands them back (a child process, so the test run's own heap does not count)."""
    script = """
from indexer.idle_trim import give_memory_back, resident_bytes
blocks = [bytes(1000 + i % 7) for i in range(100_000)]
pinned = bytes(2000)  # (above them on the heap: free() alone cannot shrink it)
del blocks
before = resident_bytes()
print(give_memory_back(), before, resident_bytes())
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    could, before, after = done.stdout.split()
    if could != "True":
        pytest.skip("the C library has no malloc_trim (not glibc)")
    assert int(before) - int(after) > 50 * 2**20
