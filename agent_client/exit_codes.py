"""The ``agent-client`` command's exit statuses (scripts and service managers read them)."""

from __future__ import annotations

from shared.cli_usage import EXIT_INTERRUPTED

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_OFFLINE = 0, 1, 2, 3
__all__ = ["EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_OFFLINE", "EXIT_OK", "EXIT_USAGE"]
