"""Replace the running command by itself, started again with the same arguments.

Both uses keep the process id (a supervisor sees no exit) and the argument bytes as they
came: ``shared.utf8_mode`` starts a command again in Python's UTF-8 mode, and
``indexer serve`` starts again after it found its index damaged while serving (the next
start rebuilds it before serving: ``indexer.index.late_check``).
"""

from __future__ import annotations

import contextlib
import os
import sys


def start_again(options: tuple[str, ...] = ()) -> None:
    """Replace the process by its own command line, with the interpreter's ``options``
    added (``("-X", "utf8")``). ``sys.orig_argv`` holds the interpreter's options and
    ``-m module`` or the script (a console script is one), decoded as the file system
    encoding decodes: ``os.fsencode`` gives the bytes back as they came. Returns only
    where it cannot (not POSIX, no interpreter path, the exec failed)."""
    if os.name != "posix" or not sys.executable or len(sys.orig_argv) < 2:
        return
    executable = os.fsencode(sys.executable)
    argv = [executable, *map(os.fsencode, options), *map(os.fsencode, sys.orig_argv[1:])]
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(AttributeError, OSError, ValueError):
            stream.flush()
    with contextlib.suppress(OSError):
        os.execv(executable, argv)
