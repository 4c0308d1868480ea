"""A count and its noun as English says it (``1 note``, ``2 notes``): "1 notes" was
printed by the CLI and written in folder summaries' abstracts."""

from __future__ import annotations


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` and ``noun``, in the plural (``plural``, else ``noun`` + s) unless 1."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


def versions_said(shown: int, newest: int) -> str:
    """How many versions of a file a history lists, and of how many when its limit cut the
    list (a file's versions are numbered from 1: the newest one's number is their count);
    ``indexer history`` and ``agent-client history`` say it alike."""
    if newest > shown:
        return f"the newest {shown} of {newest} versions, newest first"
    return f"{counted(shown, 'version')}, newest first"


def file_in_vault(path: str, lang: str) -> str:
    """A file as both history commands name it: its vault-relative path, as typed and as
    the tools take it (``items/go.md``), then its vault (``en/items/go.md`` read as a
    path of a folder ``en/``)."""
    return f"{path} (vault {lang})"
