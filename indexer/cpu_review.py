"""Moving the server's threads off a CPU other programs keep busy (``one_cpu`` keeps
them on one CPU, and the kernel never moves a thread off the CPUs it may use).

Every ``REVIEW_SECONDS`` a thread reads how busy each CPU was (``/proc/stat``) less the
server's own CPU time on its CPU (``/proc/self/stat``): when other programs took more
than ``BUSY_SHARE`` of the server's CPU and another CPU of the fastest it may use was
less busy by ``MARGIN`` at least, the server's threads move there, and the log says so.
A server pinned at start on a CPU a build then kept busy waited behind it for good.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from indexer import one_cpu

log = logging.getLogger("indexer")
REVIEW_SECONDS = 10.0
BUSY_SHARE = 0.5  # of the server's CPU, taken by other programs
MARGIN = 0.25  # how much less busy the CPU moved to must be
PROC_STAT = Path("/proc/stat")
SELF_STAT = Path("/proc/self/stat")


@dataclass(frozen=True)
class Ticks:
    """A CPU's busy and all ticks since boot (``/proc/stat``'s ``cpuN`` line)."""

    busy: int
    total: int


def cpu_ticks(text: str) -> dict[int, Ticks]:
    """Each CPU's ``Ticks`` from ``/proc/stat``'s text (idle and iowait are not busy)."""
    found: dict[int, Ticks] = {}
    for line in text.splitlines():
        name, _, rest = line.partition(" ")
        if not name.startswith("cpu") or not name[3:].isdigit():
            continue
        values = [int(v) for v in rest.split()[:8] if v.isdigit()]
        if len(values) < 5:
            continue
        idle = values[3] + values[4]
        found[int(name[3:])] = Ticks(sum(values) - idle, sum(values))
    return found


def own_ticks(text: str) -> int:
    """This process's user and system ticks from its ``/proc/self/stat`` text."""
    fields = text.rpartition(")")[2].split()
    return int(fields[11]) + int(fields[12]) if len(fields) > 12 else 0


def better_cpu(
    before: dict[int, Ticks],
    after: dict[int, Ticks],
    own: int,
    pinned: int,
    choices: set[int],
) -> int | None:
    """The CPU of ``choices`` to move to, or None: where other programs took more than
    ``BUSY_SHARE`` of ``pinned`` (its busy ticks less ``own``, the server's) and the
    least busy of the others was less busy by ``MARGIN``."""
    shares = {}
    for cpu in choices | {pinned}:
        if cpu not in before or cpu not in after:
            continue
        total = after[cpu].total - before[cpu].total
        if total <= 0:
            return None
        busy = after[cpu].busy - before[cpu].busy - (own if cpu == pinned else 0)
        shares[cpu] = max(0, busy) / total
    others = {cpu: share for cpu, share in shares.items() if cpu != pinned}
    if pinned not in shares or not others or shares[pinned] <= BUSY_SHARE:
        return None
    calmest = min(others, key=lambda cpu: (others[cpu], cpu))
    return calmest if others[calmest] <= shares[pinned] - MARGIN else None


def start_review(seconds: float = REVIEW_SECONDS) -> threading.Thread | None:
    """Review the server's CPU every ``seconds`` on a daemon thread (where its threads
    were pinned and another of the fastest CPUs may take them)."""
    pin = one_cpu.pinned()
    fast = one_cpu.fastest(pin[0]) if pin is not None else set()
    if len(fast) < 2:
        return None
    thread = threading.Thread(target=_review, args=(seconds, fast), name="cpu-review", daemon=True)
    thread.start()
    return thread


def _review(seconds: float, fast: set[int]) -> None:
    """Every ``seconds``, move the server's threads to one of ``fast`` (its fastest
    CPUs, read once) where ``better_cpu`` says so."""
    try:
        before = _ticks()
        while True:
            time.sleep(seconds)
            after = _ticks()
            pin = one_cpu.pinned()
            if pin is None:
                return
            (cpu,) = pin[1]
            own = after[1] - before[1]
            target = better_cpu(before[0], after[0], own, cpu, fast - {cpu})
            if target is not None and one_cpu.move_to(target):
                log.info(
                    "the server's threads moved from CPU %d to CPU %d: other programs kept"
                    " CPU %d busy",
                    cpu,
                    target,
                    cpu,
                )
            before = after
    except (OSError, ValueError) as err:  # (no /proc: nothing to review)
        log.debug("the CPU review stopped: %s", err)


def _ticks() -> tuple[dict[int, Ticks], int]:
    """Each CPU's ticks and this process's own, now."""
    return cpu_ticks(PROC_STAT.read_text()), own_ticks(SELF_STAT.read_text())
