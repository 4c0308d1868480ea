"""``python -m agent_client``: the ``agent-client`` command."""

from __future__ import annotations

import sys

from agent_client.command import main

if __name__ == "__main__":
    sys.exit(main())
