"""``python -m agent_client``: the ``agent-client`` command."""

from __future__ import annotations

from agent_client.command import main
from shared.cli_usage import exit_with

if __name__ == "__main__":
    exit_with(main())
