"""The ``agent-client`` command's entry point, light on purpose.

The CLI imports fastmcp, the MCP SDK and openai (2-3 s on a cold start); a Ctrl-C in
those seconds ended in a traceback. Here the import runs inside the same guard as the
command, so an early Ctrl-C ends as a late one does: one line and exit status 130.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from agent_client.exit_codes import EXIT_INTERRUPTED


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``agent-client`` (``agent_client.cli``), its import included."""
    try:
        from agent_client import cli

        return cli.main(argv)
    except KeyboardInterrupt:
        print("agent-client: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
