"""Keeping the server's threads on one CPU, where the interpreter's lock is handed over.

The server's Python runs one thread at a time (the GIL): the event loop, the tool calls'
worker threads and the watcher's threads take turns. A write hands the lock over a few
hundred times (each file operation and SQLite step lets it go); between threads on two
CPUs each handover waits for the other CPU to wake its thread, and the lock sat idle:
8 clients writing measured 4.6 ms a write spread over both CPUs, 3.6 ms on one (its
CPU time spent waking threads halved), and ``echo`` gained nothing either way. What the
server's threads do outside the lock (SQLite, fsync, hashing) is little beside it.

So ``indexer serve`` keeps its threads on the CPU it starts on (``INDEXER_ONE_CPU=1``,
the default, on Linux with two CPUs or more; ``0`` lets the kernel move them), or on one
of the fastest where the CPUs differ (a hybrid chip's performance cores: an efficiency
core would be the server's for good). The kernel cannot move the server off a CPU another
program keeps busy: ``cpu_review`` does (``move_to``).
A scan (``grep``, ``find``) runs on every CPU the server was allowed (``on_any_cpu``):
its regex matching and reads run outside the lock, one scan thread a CPU.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from pathlib import Path

log = logging.getLogger("indexer")
SYS_CPUS = Path("/sys/devices/system/cpu")
# A CPU within this share of the fastest's capacity counts as one of the fastest (a
# hybrid chip's performance cores differ a little among themselves: "favored" cores)
FAST_SHARE = 0.9
# (the CPUs the process was allowed, the one its threads were pinned to), once pinned
_pin: tuple[set[int], set[int]] | None = None


def pin_to_one_cpu() -> int | None:
    """Keep every thread of this process, and those it starts later, on the CPU this
    one runs on now (or on one of the ``fastest``, where it is not); returns it, or None
    where there is nothing to choose (one CPU allowed, not Linux) or the kernel
    refused."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    allowed = os.sched_getaffinity(0)
    if len(allowed) < 2:
        return None
    fast = fastest(allowed)
    cpu = current_cpu()
    if cpu not in fast:
        cpu = min(fast)
    global _pin
    try:
        for thread in _threads():  # (a thread's CPUs are its own; new ones inherit them)
            os.sched_setaffinity(thread, {cpu})
    except OSError as err:  # (a container's seccomp policy, say)
        log.warning("the server's threads may move between CPUs (%s)", err)
        return None
    _pin = (allowed, {cpu})
    return cpu


def pinned() -> tuple[set[int], set[int]] | None:
    """(the CPUs the process was allowed, the one its threads are on), once pinned."""
    return _pin


def move_to(cpu: int) -> bool:
    """Move every thread of this process to ``cpu`` (``cpu_review``: the one they were
    on is kept busy by other programs); False where the kernel refused."""
    global _pin
    if _pin is None:
        return False
    try:
        for thread in _threads():
            with contextlib.suppress(ProcessLookupError):  # (a thread that just ended)
                os.sched_setaffinity(thread, {cpu})
    except OSError as err:
        log.warning("the server's threads could not move to CPU %d (%s)", cpu, err)
        return False
    _pin = (_pin[0], {cpu})
    return True


def unpin() -> None:
    """This thread back on every CPU the process was allowed, before the server starts
    itself again (``shared.start_again``): an exec keeps the calling thread's CPUs, and
    the new start, allowed one, pinned nothing (no ``cpu_review``, scans on one CPU)."""
    global _pin
    if _pin is None:
        return
    with contextlib.suppress(OSError):
        os.sched_setaffinity(0, _pin[0])
    _pin = None


def where_pinned() -> str:
    """For the "serving" log line: the server's CPU, if its threads were pinned."""
    if _pin is None:
        return ""
    allowed = ",".join(str(cpu) for cpu in sorted(_pin[0]))
    return f"; its threads on CPU {min(_pin[1])} of {allowed}"


@contextlib.contextmanager
def on_any_cpu() -> Iterator[None]:
    """The calling thread on every CPU the process was allowed for the block, then back
    on the server's one (a no-op where ``pin_to_one_cpu`` pinned nothing). A refusal
    (a CPU taken out of the process's set meanwhile) leaves the thread as it is: the
    scan goes on."""
    pin = _pin
    if pin is None:
        yield
        return
    with contextlib.suppress(OSError):
        os.sched_setaffinity(0, pin[0])
    try:
        yield
    finally:
        with contextlib.suppress(OSError):  # (the server's CPU now: ``move_to`` may move it)
            os.sched_setaffinity(0, (_pin or pin)[1])


def fastest(allowed: set[int], cpus: Path = SYS_CPUS) -> set[int]:
    """The ``allowed`` CPUs of (nearly) the highest capacity: by the kernel's
    ``cpu_capacity`` (hybrid and big.LITTLE chips), else by ``cpufreq``'s maximum
    frequency; all of them where a CPU's figure cannot be read."""
    for name in ("cpu_capacity", "cpufreq/cpuinfo_max_freq"):
        speeds = {cpu: _number(cpus / f"cpu{cpu}" / name) for cpu in allowed}
        known = {cpu: speed for cpu, speed in speeds.items() if speed is not None}
        if len(known) == len(allowed) and max(known.values()) > 0:
            top = max(known.values())
            return {cpu for cpu, speed in known.items() if speed >= FAST_SHARE * top}
    return set(allowed)


def _number(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def current_cpu() -> int | None:
    """The CPU the calling thread last ran on (its ``stat``'s 39th field)."""
    try:
        stat = Path("/proc/thread-self/stat").read_text()
    except OSError:
        return None
    fields = stat.rpartition(")")[2].split()
    return int(fields[36]) if len(fields) > 36 and fields[36].isdigit() else None


def _threads() -> list[int]:
    """This process's threads (``0``, the calling one, where they cannot be listed)."""
    try:
        return [int(name) for name in os.listdir("/proc/self/task")]
    except OSError:
        return [0]
