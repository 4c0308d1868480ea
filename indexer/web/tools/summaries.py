"""Summary tool: a folder's abstract and overview (directory summaries, seed 001)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from pydantic import Field

from indexer.core import Core
from indexer.web.tools.params import Lang

if TYPE_CHECKING:
    from indexer.web.mcp import Registrar


def register(tools: Registrar, core: Core) -> None:
    summaries = core.summaries
    if summaries is None:
        return

    @tools.tool(read_only=True)
    def summary(
        lang: Lang,
        path: Annotated[str, Field(description="a folder ('' = the vault root)")] = "",
    ) -> dict:
        """What a folder holds, before you search it: its abstract (≤ 200 chars), an
        overview (Markdown), child_count and categories. path='' is the vault root;
        stale=true while the summary is being brought up to date."""
        return summaries.summary(lang, path)
