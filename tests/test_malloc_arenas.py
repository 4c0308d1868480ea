"""The server's threads share two malloc arenas (``indexer.malloc_arenas``): counted in
glibc's own report (``malloc_info``), in a fresh interpreter whose threads allocate."""

from __future__ import annotations

import ctypes.util
import subprocess
import sys
import textwrap

import pytest

from indexer.malloc_arenas import ARENAS

_COUNT = textwrap.dedent(
    """
    import ctypes, ctypes.util, sys, tempfile, threading
    if sys.argv[1] == "limit":
        from indexer.malloc_arenas import limit_arenas
        assert limit_arenas()
    go = threading.Barrier(16)
    def work():
        go.wait()
        for _ in range(200):
            keep = [bytearray(3000 + n) for n in range(300)]
            del keep
    threads = [threading.Thread(target=work) for _ in range(16)]
    for t in threads: t.start()
    for t in threads: t.join()
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    libc.fopen.restype = ctypes.c_void_p
    libc.malloc_info.argtypes = (ctypes.c_int, ctypes.c_void_p)
    libc.fclose.argtypes = (ctypes.c_void_p,)
    with tempfile.NamedTemporaryFile() as out:
        stream = libc.fopen(out.name.encode(), b"w")
        libc.malloc_info(0, stream)
        libc.fclose(stream)
        print(open(out.name).read().count("<heap nr="))
    """
)


def _arenas(mode: str) -> int:
    done = subprocess.run(
        [sys.executable, "-c", _COUNT, mode], capture_output=True, text=True, check=True
    )
    return int(done.stdout)


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or ctypes.util.find_library("c") is None,
    reason="glibc's malloc_info",
)
def test_threads_share_two_arenas() -> None:
    assert _arenas("default") > ARENAS  # (else the test proves nothing here)
    assert _arenas("limit") <= ARENAS
