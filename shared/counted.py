"""A count and its noun as English says it (``1 note``, ``2 notes``): "1 notes" was
printed by the CLI and written in folder summaries' abstracts."""

from __future__ import annotations


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` and ``noun``, in the plural (``plural``, else ``noun`` + s) unless 1."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"
