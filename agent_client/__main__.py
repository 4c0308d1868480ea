"""``python -m agent_client``: the ``agent-client`` command."""

from __future__ import annotations

from agent_client.command import run

if __name__ == "__main__":
    run()
