"""History tools: history, diff, restore, move, undo (see ``indexer.vault.timeline``,
``moves`` and ``undo``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from pydantic import Field

from indexer.core import Core
from indexer.web.tools.params import IfMatch, Lang, Reason, RelPath

if TYPE_CHECKING:
    from indexer.web.mcp import Registrar

Version = Annotated[int, Field(description="a version number from `history`")]


def register(tools: Registrar, core: Core) -> None:
    vault = core.vault

    @tools.tool(read_only=True)
    def history(lang: Lang, path: RelPath, limit: int = 20) -> dict:
        """Versions of a file, newest first: {version, etag, op, actor, reason, at, size}
        (also of a deleted note; a move shows moved_from / moved_to)."""
        return vault.history(lang, path, limit)

    @tools.tool(read_only=True)
    def diff(
        lang: Lang,
        path: RelPath,
        from_version: Version,
        to_version: Annotated[
            int | None, Field(description="a later version; omitted: the current file")
        ] = None,
    ) -> dict:
        """Unified diff of a file between two versions (or a version and now)."""
        return vault.diff(lang, path, from_version, to_version)

    @tools.tool(annotations={"destructiveHint": True})
    def restore(
        lang: Lang, path: RelPath, version: Version, if_match: IfMatch = None, reason: Reason = None
    ) -> dict:
        """Write a version's exact bytes back (also brings back a deleted note and its
        images). The restore is itself a new version; returns {path, etag, version}."""
        return vault.restore(lang, path, version, if_match, reason)

    @tools.tool(annotations={"destructiveHint": True})
    def move(
        lang: Lang,
        path: Annotated[str, Field(description="file or folder to move")],
        new_path: Annotated[str, Field(description="where to; must not exist yet")],
        if_match: IfMatch = None,
        reason: Reason = None,
    ) -> dict:
        """Move a note (its .assets/ folder follows, its relative links are rewritten), an
        image, or a whole folder, inside the vault; conflict if new_path exists. Links
        to what moved in other notes follow (their paths: `relinked`; those a write
        would refuse, as read-only, are left: `relink_skipped`, {path, error};
        `relink_partial`: true when not every note could be looked at)."""
        return vault.move(lang, path, new_path, if_match, reason)

    @tools.tool(annotations={"destructiveHint": True})
    def undo(
        lang: Lang,
        entry_id: Annotated[str, Field(description="the id of a memory entry")],
        dry_run: Annotated[bool, Field(description="only say what would be undone")] = False,
    ) -> dict:
        """Undo what one memory entry wrote (versions with reason 'entry:<id> ...'): each
        file goes back to before the entry, all or nothing; conflict if anyone changed
        one of them since."""
        return vault.undo(lang, entry_id, dry_run)
