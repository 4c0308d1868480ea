"""Fewer glibc malloc arenas for the server's threads (``MALLOC_ARENA_MAX=2`` in-process).

glibc gives each thread that finds the heap busy an arena of its own, up to 8 per CPU;
memory freed in one arena serves no other, and SQLite's page caches, note texts and
answers, allocated and freed by 20-60 threads, left each arena's freed pages in the
process. Over a mixed 7-minute load at 30,000 notes the server's RSS rose 161 -> 596 MB
(still rising) while 82 MB was in use and 383 MB lay freed inside the arenas; with two
arenas it rose 155 -> 291 MB and stayed there, for the same calls. Set before the
server's threads start (an arena is made when a thread first needs one); a no-op where
the C library is not glibc.
"""

from __future__ import annotations

import ctypes
from typing import Any

__all__ = ["ARENAS", "c_function", "limit_arenas"]

ARENAS = 2
_M_ARENA_MAX = -8  # (glibc's malloc.h)


def c_function(name: str) -> Any | None:
    """The C library's function ``name`` among the symbols the process has loaded, or
    None where it has none (musl and macOS have no ``malloc_trim``). No
    ``ctypes.util.find_library``: it imports ``subprocess`` and runs ``ldconfig``, 8 ms
    of every start."""
    try:
        return getattr(ctypes.CDLL(None), name)
    except (OSError, AttributeError):
        return None


def limit_arenas(arenas: int = ARENAS) -> bool:
    """Cap the number of malloc arenas; whether the C library took it."""
    mallopt = c_function("mallopt")
    if mallopt is None:
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(_M_ARENA_MAX, arenas))
