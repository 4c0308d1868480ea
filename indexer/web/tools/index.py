"""Index tools: status and search."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from pydantic import Field

from indexer.core import Core
from indexer.vault.sandbox import clean_relpath
from indexer.web.tools.params import Lang

if TYPE_CHECKING:
    from indexer.web.mcp import Registrar


def register(tools: Registrar, core: Core) -> None:
    @tools.tool(name="status", read_only=True)
    def status_() -> dict:
        """Version, workspace, notes per lang, whether the index is ready and caught up
        with disk (index_partial; sync says why not and how the file watcher runs)."""
        return core.status()

    index = core.index
    if index is None:
        return

    @tools.tool(read_only=True, quick=True)  # (on the event loop while it is quick)
    def search(
        lang: Lang,
        query: Annotated[
            str,
            Field(
                description='words (all must match) and "phrases"; OR in capitals between'
                " them for alternatives (cat food OR dog food); a word ending in * is a"
                " prefix of 3+ characters (datab* finds database); -word or NOT word"
                ' leaves out the notes holding it (python -java; quote "ls -la" to find'
                " it); empty with a type or tags filter: every note it keeps, latest first"
            ),
        ],
        limit: int = 10,
        type: str | None = None,
        tags: list[str] | None = None,
        path: Annotated[str, Field(description="folder prefix")] = "",
        offset: Annotated[int, Field(description="skip this many results (paging)")] = 0,
    ) -> dict:
        """Ranked full-text search (BM25, CJK aware) with highlighted snippets; `total`
        counts all matches, page with `offset`."""
        folder = clean_relpath(path, allow_root=True)  # `..` above the root is refused
        core.vault.sandbox.check_case(lang)
        return index.search(lang, query, limit, type, tags, folder, offset)
