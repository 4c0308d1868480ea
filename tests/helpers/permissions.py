"""File-system refusals in tests that run as root: ``chattr +i`` (refused even to root)
and a command prefix that runs a program without root's power over permissions."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest


def immutable(path: Path, on: bool) -> bool:
    """chattr +i/-i: refused even to root (EPERM); False where the tool or flag is missing."""
    if shutil.which("chattr") is None:
        return False
    flag = "+i" if on else "-i"
    return subprocess.run(["chattr", flag, str(path)], capture_output=True).returncode == 0


def need_immutable(path: Path) -> None:
    """Make ``path`` immutable, or skip the test where this system cannot."""
    if not immutable(path, True):
        pytest.skip("chattr +i is not available here (no e2fsprogs, or a file system without it)")


def as_plain_user() -> list[str]:
    """A prefix for a command that must meet file permissions as any user does: as root,
    ``setpriv`` without the capabilities that pass over them (skipped where missing)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("setpriv (util-linux) is not available to run a command as a plain user")
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search,-fowner"]


def chmod(modes: dict[Path, int], path: Path, mode: int) -> None:
    """``os.chmod``, the old mode kept in ``modes`` (the fixture gives it back)."""
    modes.setdefault(path, path.stat().st_mode & 0o7777)
    os.chmod(path, mode)
