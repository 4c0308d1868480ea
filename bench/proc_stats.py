"""A server process's CPU time and context switches (all its threads), from /proc.

The latency figures of a loaded, shared machine move with the load (echo p50 with 8
clients 6.5 ms on a quiet run, 25-90 ms at load 10-14 on 2 cores); what the server
spends a call moves much less: its CPU time and how often its threads gave the CPU up
(voluntary: waits for a lock, the GIL, a disk; involuntary: preempted). Read around a
phase and divided by its calls, they say where a change moved the cost when the p50s
cannot (Linux only; elsewhere nothing is measured)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Use:
    """Totals since the process started: CPU seconds (user + system), switches."""

    cpu: float = 0.0
    voluntary: float = 0.0
    involuntary: float = 0.0

    def per_call(self, before: Use, calls: int) -> Use:
        """What each of ``calls`` cost between ``before`` and this reading."""
        n = max(1, calls)
        return Use(
            (self.cpu - before.cpu) / n,
            (self.voluntary - before.voluntary) / n,
            (self.involuntary - before.involuntary) / n,
        )


def use_of(pid: int) -> Use | None:
    """The process's totals now, or None where /proc has no such process."""
    proc = Path(f"/proc/{pid}")
    try:
        fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    voluntary = involuntary = 0.0
    for task in (proc / "task").glob("*/status"):
        try:
            lines = task.read_text().splitlines()
        except OSError:  # (a thread that ended meanwhile)
            continue
        for line in lines:
            name, _, value = line.partition(":")
            if name == "voluntary_ctxt_switches":
                voluntary += int(value)
            elif name == "nonvoluntary_ctxt_switches":
                involuntary += int(value)
    return Use(cpu, voluntary, involuntary)
