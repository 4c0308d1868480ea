"""The writes of one knowledge merge: each carries the entry's reason, and a failed merge
is rolled back by the server's ``undo`` of the entry.

A merge may write several files (a note, its images, a second note). Each write goes
through the journal, which passes ``reason="entry:<id> <title>"`` (so history can tell
what the entry changed) and remembers the paths, in order (the confirmation's
``updated_files``, the staged images to drop). If the merge fails, ``rollback()`` asks
the server to undo the entry: the same ``undo`` as ``agent-client undo``, all or nothing,
with the server's locks. A file someone changed after our write makes it refuse
(``conflict``): then nothing is undone, and the reason is logged and returned. An edit
made between two writes of the merge is kept by the server's undo (their text wins).
"""

from __future__ import annotations

import contextlib
import logging
import posixpath

from agent_client.connection import Vault
from agent_client.reasons import entry_reason
from agent_client.results import WriteResult
from shared.errors import ConflictError, NotFoundError, VaultError
from shared.images import ASSETS_SUFFIX
from shared.models import MemoryEntry, is_made_id

logger = logging.getLogger("agent_client.merge.journal")


class WriteJournal:
    """Writes through a ``Vault`` for one entry, remembering which paths it wrote."""

    def __init__(self, vault: Vault, entry: MemoryEntry) -> None:
        self.vault = vault
        self.entry_id = entry.id
        self.reason = entry_reason(entry)
        self._created: dict[str, bool] = {}  # path -> whether this merge created it
        # A write was sent: it may have landed even when its answer never came.
        self.attempted = False

    @property
    def written(self) -> list[str]:
        """Paths written so far, in the order of their first write."""
        return list(self._created)

    async def write(
        self, path: str, content: str, *, if_match: str | None, encoding: str = "utf-8"
    ) -> WriteResult:
        """Write ``content`` with the entry's reason (``if_match`` "": must be new)."""
        self.attempted = True
        result = await self.vault.write(
            path, content, encoding=encoding, if_match=if_match, reason=self.reason
        )
        self._created.setdefault(path, result["created"])
        return result

    def created(self, path: str) -> bool:
        """Whether this merge created ``path`` (it did not exist before)."""
        return self._created.get(path, False)

    async def discard(self, path: str) -> None:
        """Delete a file this merge created (it is no longer part of the merge)."""
        if not self.created(path):
            raise ValueError(f"{path} was not created by this merge")
        with contextlib.suppress(NotFoundError):
            await self.vault.delete(path, reason=self.reason)
        del self._created[path]
        await self._remove_empty_assets_folder(path)

    async def id_is_new(self) -> bool:
        """Whether no change in the vault carries the entry's id yet: then undo of the
        id takes back this merge's writes and nothing else (else it would also take
        back what an earlier entry with this id did, acknowledged long ago)."""
        if is_made_id(self.entry_id) or not await self.vault.has_history():
            return True
        try:
            await self.vault.undo(self.entry_id, dry_run=True)
        except NotFoundError:
            return True
        except ConflictError:  # changes that cannot be undone: there are some
            return False
        return False

    async def rollback(self) -> str | None:
        """Undo every write of this merge (the server's undo of the entry); None when
        done or when nothing was written, else why nothing was undone."""
        if not self._created:
            return None
        written, self._created = self.written, {}
        if not await self.vault.has_history():
            why = "this indexer keeps no history to undo with"
        else:
            try:
                await self.vault.undo(self.entry_id)
                return None
            except ConflictError as exc:  # "entry X cannot be undone, nothing was changed: ..."
                why = "changed since: " + exc.message.partition(": ")[2]
            except NotFoundError as exc:
                why = exc.message
        logger.warning("entry %s: the writes to %s stay: %s", self.entry_id, written, why)
        return why

    async def _remove_empty_assets_folder(self, path: str) -> None:
        """A created image gone: its ``*.assets/`` folder too, if nothing else is in it."""
        folder = posixpath.dirname(path)
        if not folder.endswith(ASSETS_SUFFIX):
            return
        try:
            # the server never removes a non-empty folder
            await self.vault.delete(folder, reason=self.reason)
        except VaultError as exc:
            if exc.code == "indexer_offline":
                raise
