"""The JSON results of the Vault MCP tools, typed (the SPEC's "Tools" table).

The server returns plain JSON objects; these ``TypedDict``s let the client and its
callers read them with checked keys. They describe data, they validate nothing.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict


class ReadResult(TypedDict):
    path: str
    content: str
    etag: str
    size: int
    mtime: float


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
