"""The ``agent-client`` command's exit statuses (scripts and service managers read them)."""

from __future__ import annotations

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_OFFLINE = 0, 1, 2, 3
EXIT_INTERRUPTED = 130  # as a shell reports a process stopped by Ctrl-C
