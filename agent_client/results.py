"""The JSON results of the Vault MCP tools, typed (the SPEC's "Tools" table).

The server returns plain JSON objects; these ``TypedDict``s let the client and its
callers read them with checked keys. They describe data, they validate nothing.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict


class ReadResult(TypedDict):
    path: str
    content: str  # base64 when ``encoding`` says so (an image)
    etag: str
    size: int
    mtime: float
    encoding: NotRequired[str]  # "base64" for a file that is not UTF-8 text
    version: NotRequired[int]  # when an older version was read


class WriteResult(TypedDict):
    path: str
    etag: str
    created: bool
    size: int


class StatResult(TypedDict):
    path: str
    exists: bool
    type: str | None
    size: int | None
    mtime: float | None
    etag: str | None


class AppendResult(TypedDict):
    path: str
    etag: str
    size: int


class FindResult(TypedDict):
    paths: list[str]
    truncated: bool
    # With ``sizes`` (servers that have it): each file's bytes; each UTF-8 note's body's
    # bytes as the memory tool shows it (``shared.memory_view``). A file with neither is
    # gone since the listing, or a note the server had no time to measure.
    sizes: NotRequired[dict[str, int]]
    body_sizes: NotRequired[dict[str, int]]
    # With ``dirs`` (servers that have it): how many entries below the path no tool can
    # reach (hidden, refused names, too deep), and the first few, printable.
    unlisted: NotRequired[int]
    unlisted_sample: NotRequired[list[str]]


class GrepMatch(TypedDict):
    path: str
    line: int
    text: str


class GrepResult(TypedDict):
    matches: list[GrepMatch]
    truncated: bool


class DeleteResult(TypedDict):
    path: str
    deleted: bool


class SearchHit(TypedDict):
    path: str
    title: str
    score: float
    snippet: str


class SearchResult(TypedDict):
    results: list[SearchHit]
    partial: bool
    total: NotRequired[int]  # all matches, when the server counts them


class RecallSource(TypedDict):
    path: str
    layer: str  # resident | recent | on_demand
    tokens: int


class RecallResult(TypedDict):
    block: str  # reference context for the turn, never instructions
    tokens: int  # the server's documented estimate, never above the budget
    sources: list[RecallSource]
    partial: NotRequired[bool]  # the index was catching up: notes may be missing (absent
    # from servers before this field)


class MoveResult(TypedDict):
    path: str
    new_path: str
    etag: str | None  # None for a folder
    files: NotRequired[int]  # files moved, for a folder


class Version(TypedDict):
    """One version of a file in ``history`` (newest first)."""

    version: int
    etag: str | None  # None: the change removed the file (delete, or the old side of a move)
    op: str  # write, append, delete, move, restore; create, edit, baseline (seen on disk)
    actor: str  # tool | external | job:<name>
    reason: str | None
    at: str  # ISO 8601, UTC
    size: int | None
    moved_from: NotRequired[str]
    moved_to: NotRequired[str]


class HistoryResult(TypedDict):
    path: str
    versions: list[Version]


class DiffResult(TypedDict):
    path: str
    diff: str  # unified diff text ("" when the two are the same)


class RestoreResult(TypedDict):
    path: str
    etag: str
    version: int | None  # the version the restore made
    restored_from: NotRequired[int]


class UndoneFile(TypedDict):
    path: str
    from_version: int  # the entry's newest version of the file
    to_version: int | None  # the version it goes back to; None: the entry created it
    deleted: bool  # the file is removed (the entry created it)
    version: NotRequired[int]  # the version the undo made (absent in a dry run)
    unchanged: NotRequired[bool]  # already as before the entry (absent from older servers)


class UndoResult(TypedDict):
    entry_id: str
    dry_run: bool
    files: list[UndoneFile]
