"""Why a change was made, as history keeps it with the version (``reason``).

The Memory Writer passes ``entry:<entry id> <title>`` on every change it makes for an
entry: the server's ``undo(entry_id)`` finds an entry's changes by that first word, and
a person reading ``history`` sees which entry caused each one. The server takes one line
of at most 500 characters without control characters or characters that hide or reorder
it (``shared.invisible.hides_in_line``); a title may hold a tab or a bidi override, so
those become spaces (a joiner in an emoji or a Persian word stays).
"""

from __future__ import annotations

from shared.invisible import hides_in_line
from shared.models import MemoryEntry

MAX_REASON_CHARS = 500


def entry_reason(entry: MemoryEntry) -> str:
    """``entry:<id> <title>``, the title on one line, cut to 500 characters."""
    title = " ".join("".join(" " if hides_in_line(c) else c for c in entry.title).split())
    return f"entry:{entry.id} {title}"[:MAX_REASON_CHARS].rstrip()


def undo_command(entry_id: str) -> str:
    """The ``agent-client undo`` of ``entry_id`` that a message suggests: an id may start
    with ``-`` (its characters need no quoting), taken for an option unless after ``--``."""
    guard = "-- " if entry_id.startswith("-") else ""
    return f"agent-client undo {guard}{entry_id}"
