"""The ``agent-client`` command's entry point, light on purpose.

The CLI once imported fastmcp, the MCP SDK and openai as it started (2-3 s; now they
come as a session opens and as a model merge begins), and a Ctrl-C in those seconds
ended in a traceback. Here the import runs inside the same guard as the command, so an
early Ctrl-C ends as a late one does: one line and exit status 130; and SIGTERM is taken
as Ctrl-C from the start (it killed the process outright, status 143, while the command
imported). Once the command is done, the process ends at once with
its status: the interpreter's wind-down (0.6 s of freeing what the SDKs built) had
SIGTERM back to its default, so a stop in it ended a command that had printed its
result with status 143.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Sequence
from typing import NoReturn

from agent_client.exit_codes import EXIT_INTERRUPTED
from agent_client.interrupts import terminate_as_interrupt
from shared.cli_usage import exit_with
from shared.utf8_mode import in_utf8_mode


def run() -> NoReturn:
    """The ``agent-client`` command: ``main``, then the end at once (see the module);
    with a thread still at work (one the command left running), the usual exit, which
    waits for it."""
    in_utf8_mode()  # first: a locale that is not UTF-8 starts it again in UTF-8 mode
    code = main()
    if any(not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        exit_with(code)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``agent-client`` (``agent_client.cli``), its import included."""
    for name in ("stdout", "stderr"):  # (started with it closed, ``>&-``: print failed)
        if getattr(sys, name) is None:
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115
    try:
        with terminate_as_interrupt():
            from agent_client import cli

            return cli.main(argv)
    except KeyboardInterrupt:
        print("agent-client: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
