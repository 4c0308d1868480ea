"""File tools: read, write, stat, append, find, grep, delete (the vault's behaviour).

The changing ones take an optional ``reason``, kept in history with the version they
make; ``read`` takes an optional ``version`` from history."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Annotated

from pydantic import Field

from indexer.core import Core
from indexer.web.tools.params import Folder, IfMatch, Lang, Reason, RelPath, SearchedPath

if TYPE_CHECKING:
    from indexer.web.mcp import Registrar


def register(tools: Registrar, core: Core) -> None:
    vault = core.vault

    @tools.tool(quick=True, read_only=True)
    def read(
        lang: Lang,
        path: RelPath,
        offset: int = 0,
        limit: int | None = None,
        version: Annotated[
            int | None, Field(description="an older version from `history` (read-only)")
        ] = None,
    ) -> dict:
        """Read a file. offset/limit select lines. Returns content, etag, size, mtime."""
        return vault.read(lang, path, offset, limit, version)

    @tools.tool(annotations={"destructiveHint": True})
    def write(
        lang: Lang,
        path: RelPath,
        content: str,
        encoding: Annotated[str, Field(description="'utf-8' or 'base64' (images)")] = "utf-8",
        if_match: IfMatch = None,
        reason: Reason = None,
    ) -> dict:
        """Write a whole .md note (frontmatter normalized), a text file (.txt .xml .json .yaml
        .csv, written as sent) or an image in *.assets/ (base64)."""
        return vault.write(lang, path, content, encoding, if_match, reason)

    @tools.tool(name="stat", quick=True, read_only=True)
    def stat_(lang: Lang, path: RelPath) -> dict:
        """Whether a path exists, its type ('file'/'dir'), size, mtime and etag."""
        return vault.stat(lang, path)

    @tools.tool(annotations={"destructiveHint": False})  # (it only adds; unmarked means destroys)
    def append(
        lang: Lang, path: RelPath, content: str, create: bool = True, reason: Reason = None
    ) -> dict:
        """Append text at the end of a .md or text file without rewriting it (serialized per
        file).

        A note created by an append whose text starts with a --- block is normalized like
        a write (invalid frontmatter refused)."""
        return vault.append(lang, path, content, create, reason)

    @tools.tool(read_only=True)
    async def find(
        lang: Lang,
        pattern: Annotated[
            str,
            Field(
                description="glob; ** spans folders, \\ escapes a character ([ { * ?);"
                " a pattern spelling a path finds that path too (notes [draft]/a.md)"
            ),
        ] = "**/*.md",
        path: Folder = "",
        limit: int = 200,
        dirs: Annotated[
            bool,
            Field(
                description="also list matching folders, as paths ending in '/', and give"
                " `unlisted`: how many entries below `path` no tool can reach (dot-files,"
                " names the vault refuses, links), with `unlisted_sample`, the first few"
            ),
        ] = False,
        sizes: Annotated[
            bool,
            Field(
                description="also `sizes` {path: bytes} of the files and `body_sizes`"
                " {path: bytes} of the notes' bodies without frontmatter (as the memory"
                " tool shows them); a note not measured in the call's time has neither"
            ),
        ] = False,
        after: Annotated[
            str | None,
            Field(
                description="a path: list only what comes after it in the listing's order"
                " (the last path of a truncated answer, for the next page)"
            ),
        ] = None,
    ) -> dict:
        """List files whose path (below `path`) matches a glob; dot-files are skipped."""
        return await core.scans.run(vault.find, lang, pattern, path, limit, dirs, sizes, after)

    @tools.tool(read_only=True)
    async def grep(
        lang: Lang,
        pattern: Annotated[
            str,
            Field(
                description="RE2 regex (\\w, \\d, \\b are ASCII: a word of any script is"
                " [\\pL\\pM\\pN]+), or a literal with fixed=true"
            ),
        ],
        path: SearchedPath = "",
        glob: str = "**/*.md",
        fixed: bool = False,
        ignore_case: Annotated[
            bool,
            Field(description="case-insensitive in every script; the Turkish İ and ı are i"),
        ] = False,
        limit: int = 100,
    ) -> dict:
        """Lines matching a pattern (linear-time regex), as {path, line, text}; files too
        large to read (past 8 MiB) are counted in `unsearched`, the first few named in
        `unsearched_sample` (only when there are any)."""
        deadline = time.monotonic() + vault.grep_max_seconds  # waiting for a turn counts
        args = (lang, pattern, path, glob, fixed, ignore_case, limit)
        return await core.scans.run(vault.grep, *args, deadline=deadline)

    @tools.tool(annotations={"destructiveHint": True})
    def delete(lang: Lang, path: RelPath, reason: Reason = None) -> dict:
        """Delete a file (a note's .assets/ folder goes with it) or an empty folder.
        A deleted note stays in `history` and comes back with `restore`."""
        return vault.delete(lang, path, reason)
