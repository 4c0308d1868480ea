"""The files a block of code opens, by Python's audit hook: how many reads a change
saves is counted, not timed."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def files_opened() -> Iterator[list[str]]:
    """The names of the files opened inside the block, in order. (An audit hook stays
    for the process's life: each one stops recording when its block ends.)"""
    opened: list[str] = []
    watching = [True]

    def hook(event: str, args: tuple) -> None:
        if watching and event == "open" and isinstance(args[0], str | Path):
            opened.append(Path(args[0]).name)

    sys.addaudithook(hook)
    try:
        yield opened
    finally:
        watching.clear()
