"""``Vault``: a lang-bound handle on the indexer, one typed method per Vault MCP tool.

It makes its calls through a session (``connection.VaultSession``, which maps errors and
connects again), seen here only as what a handle asks of it (``ToolCaller``): the tools'
arguments and results are this module's, the connection is not.

History: the changing methods take an optional ``reason`` (kept with the version the
change makes). It is sent only to a server that keeps history (it offers the
``history`` tool): an older one validates its arguments strictly and would refuse it.
"""

from __future__ import annotations

from typing import Any, Protocol, cast

from agent_client.results import (
    AppendResult,
    DeleteResult,
    DiffResult,
    FindResult,
    GrepResult,
    HistoryResult,
    MoveResult,
    ReadResult,
    RecallResult,
    RestoreResult,
    SearchResult,
    StatResult,
    UndoResult,
    WriteResult,
)
from shared.errors import NotFoundError

# The prompts the server serves (``prompts/<name>.md``): what a merge's model is told.
PROMPT_NAMES = ("mem_entry_spec", "envelope_spec", "vault_spec")


class ToolCaller(Protocol):
    """What a ``Vault`` asks of its session (``connection.VaultSession``)."""

    async def call(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        """One tool's JSON result, or the typed error it was refused with."""
        ...

    async def tool_names(self) -> frozenset[str]:
        """The names of the tools the server offers."""
        ...

    async def tool_params(self, name: str) -> frozenset[str]:
        """The parameters of the server's tool ``name`` (none when it has no such tool)."""
        ...

    async def prompt_text(self, name: str) -> str:
        """The text of a served prompt."""
        ...


class Vault:
    """A lang-bound handle: one typed method per Vault MCP tool."""

    def __init__(self, session: ToolCaller, lang: str) -> None:
        self.session = session
        self.lang = lang

    async def _call(self, name: str, **args: Any) -> dict[str, Any]:
        return await self.session.call(name, {"lang": self.lang, **args})

    async def _change(self, name: str, reason: str | None, **args: Any) -> dict[str, Any]:
        """A changing tool call, with ``reason`` when the server keeps history."""
        if reason is not None and await self.has_history():
            args["reason"] = reason
        return await self._call(name, **args)

    async def _historic(self, name: str, **args: Any) -> dict[str, Any]:
        """A call to a history tool; ``NotFoundError`` naming it on an older server."""
        if not await self.has_history():
            raise NotFoundError(
                f"this indexer has no `{name}` tool (it predates history and undo); "
                "upgrade vault-memory on the indexer's side"
            )
        return await self._call(name, **args)

    async def read(
        self, path: str, offset: int = 0, limit: int | None = None, *, version: int | None = None
    ) -> ReadResult:
        """A file (lines ``offset`` to ``offset + limit``); ``version``: an older text from
        ``history`` (read-only). A file that is not UTF-8 comes as base64 (``encoding``)."""
        args: dict[str, Any] = {"path": path}
        if offset:
            args["offset"] = offset
        if limit is not None:
            args["limit"] = limit
        if version is not None:
            return cast(ReadResult, await self._historic("read", version=version, **args))
        return cast(ReadResult, await self._call("read", **args))

    async def write(
        self,
        path: str,
        content: str,
        encoding: str = "utf-8",
        if_match: str | None = None,
        *,
        reason: str | None = None,
    ) -> WriteResult:
        args: dict[str, Any] = {"path": path, "content": content}
        if encoding != "utf-8":
            args["encoding"] = encoding
        if if_match is not None:
            args["if_match"] = if_match
        return cast(WriteResult, await self._change("write", reason, **args))

    async def stat(self, path: str) -> StatResult:
        return cast(StatResult, await self._call("stat", path=path))

    async def append(
        self, path: str, content: str, create: bool = True, *, reason: str | None = None
    ) -> AppendResult:
        return cast(
            AppendResult,
            await self._change("append", reason, path=path, content=content, create=create),
        )

    async def find(
        self,
        pattern: str = "**/*.md",
        path: str = "",
        limit: int = 200,
        dirs: bool = False,
        sizes: bool = False,
    ) -> FindResult:
        """Matching files; with ``dirs``, matching folders too (paths ending in "/");
        with ``sizes``, the files' sizes and notes' body sizes, on a server that has them
        (an older one leaves the keys out)."""
        args: dict[str, Any] = {"pattern": pattern, "path": path, "limit": limit}
        if dirs:
            args["dirs"] = True
        if sizes and "sizes" in await self.session.tool_params("find"):
            args["sizes"] = True
        return cast(FindResult, await self._call("find", **args))

    async def grep(
        self,
        pattern: str,
        path: str = "",
        glob: str = "**/*.md",
        fixed: bool = False,
        ignore_case: bool = False,
        limit: int = 100,
    ) -> GrepResult:
        return cast(
            GrepResult,
            await self._call(
                "grep",
                pattern=pattern,
                path=path,
                glob=glob,
                fixed=fixed,
                ignore_case=ignore_case,
                limit=limit,
            ),
        )

    async def delete(self, path: str, *, reason: str | None = None) -> DeleteResult:
        return cast(DeleteResult, await self._change("delete", reason, path=path))

    async def move(
        self, path: str, new_path: str, if_match: str | None = None, *, reason: str | None = None
    ) -> MoveResult:
        """Move a note (its images follow) or a whole folder; ``conflict`` if
        ``new_path`` exists (servers with history only)."""
        args: dict[str, Any] = {"path": path, "new_path": new_path}
        if if_match is not None:
            args["if_match"] = if_match
        return cast(MoveResult, await self._change("move", reason, **args))

    async def history(self, path: str, limit: int = 20) -> HistoryResult:
        """The versions of a file, newest first (also of a deleted one)."""
        return cast(HistoryResult, await self._historic("history", path=path, limit=limit))

    async def diff(self, path: str, from_version: int, to_version: int | None = None) -> DiffResult:
        """Unified diff from ``from_version`` to ``to_version`` (None: the file now)."""
        args: dict[str, Any] = {"path": path, "from_version": from_version}
        if to_version is not None:
            args["to_version"] = to_version
        return cast(DiffResult, await self._historic("diff", **args))

    async def restore(
        self,
        path: str,
        version: int,
        *,
        if_match: str | None = None,
        reason: str | None = None,
    ) -> RestoreResult:
        """Write version ``version``'s exact bytes back (a deleted note comes back too)."""
        args: dict[str, Any] = {"path": path, "version": version}
        if if_match is not None:
            args["if_match"] = if_match
        if reason is not None:
            args["reason"] = reason
        return cast(RestoreResult, await self._historic("restore", **args))

    async def undo(self, entry_id: str, *, dry_run: bool = False) -> UndoResult:
        """Put back every file memory entry ``entry_id`` changed, all or nothing:
        ``not_found`` when no change carries that entry, ``conflict`` (and nothing
        changed) when anyone changed one of its files since. An ``*.assets/`` folder the
        undo emptied goes too (the server removes it)."""
        args: dict[str, Any] = {"entry_id": entry_id}
        if dry_run:
            args["dry_run"] = True
        return cast(UndoResult, await self._historic("undo", **args))

    async def search(
        self,
        query: str,
        limit: int = 10,
        type: str | None = None,
        tags: list[str] | None = None,
        path: str = "",
        offset: int = 0,
    ) -> SearchResult:
        """Ranked hits ``offset`` to ``offset + limit``; ``total`` when the server gives it.

        ``offset`` is sent only when it is not 0, so servers without paging still answer.
        """
        args: dict[str, Any] = {"query": query, "limit": limit}
        if offset:
            args["offset"] = offset
        if type is not None:
            args["type"] = type
        if tags is not None:
            args["tags"] = tags
        if path:
            args["path"] = path
        return cast(SearchResult, await self._call("search", **args))

    async def recall(self, query: str, budget_tokens: int = 1500, path: str = "") -> RecallResult:
        """What the agent should know at the start of a turn: one block of reference
        context, at most ``budget_tokens`` tokens (resident, recent, on-demand layers)."""
        args: dict[str, Any] = {"query": query, "budget_tokens": budget_tokens}
        if path:
            args["path"] = path
        return cast(RecallResult, await self._call("recall", **args))

    async def has_search(self) -> bool:
        """Whether the server offers ``search`` (it may be absent in early versions)."""
        return "search" in await self.session.tool_names()

    async def has_history(self) -> bool:
        """Whether the server keeps history (``history``, ``undo``..., and ``reason``)."""
        return "history" in await self.session.tool_names()

    async def status(self) -> dict[str, Any]:
        return await self.session.call("status", {})
