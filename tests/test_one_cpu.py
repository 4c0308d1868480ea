"""``indexer serve`` keeps its threads on one CPU (``INDEXER_ONE_CPU``): the GIL is
handed over between them hundreds of times a write, and across two CPUs each handover
waited for the other CPU to wake its thread."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time
from pathlib import Path

import pytest
from helpers.indexer_process import RunningIndexer, start_indexer

from indexer.one_cpu import current_cpu, fastest

pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or len(os.sched_getaffinity(0)) < 2,
    reason="a choice of CPUs (Linux, two or more)",
)


def allowed_cpus(pid: int) -> dict[int, str]:
    """Each thread of ``pid`` and the CPUs it may run on (``Cpus_allowed_list``)."""
    found = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        for line in Path(f"/proc/{pid}/task/{tid}/status").read_text().splitlines():
            if line.startswith("Cpus_allowed_list:"):
                found[int(tid)] = line.split(":", 1)[1].strip()
    return found


async def threads_after_a_write(server: RunningIndexer) -> dict[int, str]:
    async with server.client() as client:  # (a write starts worker threads)
        await client.call_tool("write", {"lang": "en", "path": "items/a.md", "content": "# A\n"})
        await client.call_tool("search", {"lang": "en", "query": "a"})
    return allowed_cpus(server.process.pid)


def test_the_cpu_a_process_runs_on_is_read() -> None:
    assert current_cpu() in os.sched_getaffinity(0)


def cpu_files(root: Path, name: str, figures: dict[int, str]) -> Path:
    for cpu, figure in figures.items():
        path = root / f"cpu{cpu}" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(figure + "\n")
    return root


@pytest.mark.parametrize(
    ("name", "figures", "allowed", "kept"),
    [
        # a hybrid chip: two performance cores (one "favored", a little faster), two
        # efficiency cores; the server goes on a performance one
        ("cpu_capacity", {0: "1024", 1: "980", 2: "410", 3: "410"}, {0, 1, 2, 3}, {0, 1}),
        ("cpu_capacity", {0: "1024", 1: "980", 2: "410", 3: "410"}, {2, 3}, {2, 3}),
        ("cpufreq/cpuinfo_max_freq", {0: "2400000", 1: "5000000"}, {0, 1}, {1}),
        ("cpu_capacity", {0: "1024", 1: "1024"}, {0, 1}, {0, 1}),  # (the same: all)
        ("cpu_capacity", {0: "1024"}, {0, 1}, {0, 1}),  # one unknown: all
        ("cpu_capacity", {0: "fast", 1: "1024"}, {0, 1}, {0, 1}),
        ("cpu_capacity", {0: "0", 1: "0"}, {0, 1}, {0, 1}),
    ],
)
def test_the_cpu_is_one_of_the_fastest(
    tmp_path: Path, name: str, figures: dict[int, str], allowed: set[int], kept: set[int]
) -> None:
    """An efficiency core chosen at the start would have been the server's for good."""
    assert fastest(allowed, cpu_files(tmp_path, name, figures)) == kept
    assert fastest(allowed, tmp_path / "none") == allowed


async def test_serve_keeps_every_thread_on_the_cpu_it_started_on(tmp_path: Path) -> None:
    server = start_indexer(tmp_path / "ws")
    try:
        cpus = await threads_after_a_write(server)
    finally:
        server.stop()
    assert len(cpus) > 5, cpus  # (the loop, workers, the watcher's, the index's threads)
    (only,) = set(cpus.values())
    assert only.isdigit() and int(only) in os.sched_getaffinity(0)
    allowed = ",".join(str(cpu) for cpu in sorted(os.sched_getaffinity(0)))
    assert f"; its threads on CPU {only} of {allowed})" in server.log()  # the "serving" line


async def test_with_one_cpu_off_the_kernel_moves_them(tmp_path: Path) -> None:
    server = start_indexer(tmp_path / "ws", env={"INDEXER_ONE_CPU": "0"})
    try:
        cpus = await threads_after_a_write(server)
    finally:
        server.stop()
    mine = allowed_cpus(os.getpid())[threading.get_native_id()]  # (what it was started with)
    assert set(cpus.values()) == {mine}
    assert "serving" in server.log() and "its threads on CPU" not in server.log()


def test_a_scan_runs_on_every_cpu_and_its_thread_returns_to_the_servers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """grep's regex matching and reads run outside the GIL: its scan threads are not
    held to the server's one CPU (each scan thread has a CPU of its own where there are
    enough)."""
    from indexer import one_cpu
    from indexer.scans import ScanPool

    before = os.sched_getaffinity(0)
    monkeypatch.setattr(one_cpu, "_threads", lambda: [0])  # (this thread only: pytest's)
    monkeypatch.setattr(one_cpu, "_pin", None)

    async def in_a_scan() -> set[int]:
        return await ScanPool(1).run(os.sched_getaffinity, 0)

    try:
        cpu = one_cpu.pin_to_one_cpu()
        assert cpu is not None and os.sched_getaffinity(0) == {cpu}
        in_scan = asyncio.run(in_a_scan())
        with one_cpu.on_any_cpu():
            inside = os.sched_getaffinity(0)
        after = os.sched_getaffinity(0)
    finally:
        os.sched_setaffinity(0, before)
    assert in_scan == inside == before and after == {cpu}


def test_a_cpu_gone_from_the_set_leaves_a_scan_going(monkeypatch: pytest.MonkeyPatch) -> None:
    """A container's CPU set changed after the start: the kernel refuses both moves; the
    scan runs where it was."""
    from indexer import one_cpu

    before = os.sched_getaffinity(0)
    monkeypatch.setattr(one_cpu, "_pin", ({100_000}, {100_001}))
    with one_cpu.on_any_cpu():
        inside = os.sched_getaffinity(0)
    assert inside == before == os.sched_getaffinity(0)


def proc_stat(ticks: dict[int, tuple[int, int]]) -> str:
    """A ``/proc/stat`` text whose CPUs had (busy, idle) ticks, busy all user time."""
    lines = ["cpu  1 2 3 4 5 6 7 8 0 0"]
    lines += [f"cpu{cpu} {busy} 0 0 {idle} 0 0 0 0 0 0" for cpu, (busy, idle) in ticks.items()]
    return "\n".join([*lines, "intr 1 2 3", "ctxt 5"]) + "\n"


def self_stat(ticks: int) -> str:
    """A ``/proc/self/stat`` text of a process that ran ``ticks`` (user time)."""
    return f"42 (a (strange) name) S 1 1 1 0 -1 0 0 0 0 0 {ticks} 0 0 0 20 0 9 0\n"


def test_the_ticks_are_read_from_proc() -> None:
    from indexer.cpu_review import Ticks, cpu_ticks, own_ticks

    found = cpu_ticks(proc_stat({0: (300, 700), 1: (50, 950)}))
    assert found == {0: Ticks(300, 1000), 1: Ticks(50, 1000)}
    assert own_ticks(self_stat(77)) == 77
    assert set(cpu_ticks(Path("/proc/stat").read_text())) >= os.sched_getaffinity(0)
    assert own_ticks(Path("/proc/self/stat").read_text()) > 0


@pytest.mark.parametrize(
    ("pinned_busy", "own", "other_busy", "moved"),
    [
        (900, 100, 100, True),  # others took 80% of the server's CPU; the other is calm
        (900, 900, 100, False),  # the server itself was the busy one
        (900, 100, 700, False),  # the other CPU is no calmer by 25%
        (500, 0, 0, False),  # others took half: not more than half
        (1000, 0, 740, True),  # calmer by 26%
    ],
)
def test_the_server_moves_only_off_a_cpu_others_keep_busy(
    pinned_busy: int, own: int, other_busy: int, moved: bool
) -> None:
    from indexer.cpu_review import Ticks, better_cpu

    before = {0: Ticks(0, 0), 1: Ticks(0, 0)}
    after = {0: Ticks(pinned_busy, 1000), 1: Ticks(other_busy, 1000)}
    assert better_cpu(before, after, own, 0, {1}) == (1 if moved else None)
    assert better_cpu(before, before, own, 0, {1}) is None  # (no time passed)


def test_a_busy_cpu_is_left_for_a_calm_one(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The review thread reads ``/proc`` (here its files' stand-ins), and once other
    programs keep the server's CPU busy, the server's threads move to the calm one (this
    test's: the review thread's own, ``_threads``) and the log says so."""
    from indexer import cpu_review, one_cpu

    before = os.sched_getaffinity(0)
    stat, own = tmp_path / "stat", tmp_path / "self"
    monkeypatch.setattr(one_cpu, "_threads", lambda: [0])
    monkeypatch.setattr(one_cpu, "_pin", None)
    monkeypatch.setattr(one_cpu, "fastest", lambda allowed: set(allowed))
    monkeypatch.setattr(cpu_review, "PROC_STAT", stat)
    monkeypatch.setattr(cpu_review, "SELF_STAT", own)
    caplog.set_level("INFO", logger="indexer")
    try:
        cpu = one_cpu.pin_to_one_cpu()
        assert cpu is not None
        other = min(before - {cpu})
        stat.write_text(proc_stat({cpu: (100, 900), other: (100, 900)}))
        own.write_text(self_stat(50))
        assert cpu_review.start_review(0.02) is not None
        time.sleep(0.2)  # (rounds in which nothing changed: it stays)
        assert one_cpu.pinned() == (before, {cpu})
        stat.write_text(proc_stat({cpu: (1000, 1000), other: (200, 1800)}))
        own.write_text(self_stat(150))  # (the server's own 100 ticks of the 900)
        deadline = time.monotonic() + 10
        while one_cpu.pinned() != (before, {other}) and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        os.sched_setaffinity(0, before)
    assert one_cpu.pinned() == (before, {other})
    assert f"moved from CPU {cpu} to CPU {other}" in caplog.text
