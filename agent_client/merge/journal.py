"""The writes of one knowledge merge: each carries the entry's reason, and a failed merge
is rolled back.

A merge may write several files (a note, its images, a second note). Each write goes
through the journal, which passes ``reason="entry:<id> <title>"`` (so history can tell
what the entry changed) and remembers the paths, in order (the confirmation's
``updated_files``, the staged images to drop), with their etags before and after.

If the merge fails, ``rollback()`` takes its writes back. While no change in the vault
carried the entry's id before the merge (``id_is_new``), that is the server's ``undo``
of the entry: the same ``undo`` as ``agent-client undo``, all or nothing, with the
server's locks; a file someone changed after our write makes it refuse (``conflict``):
then nothing is undone, and the reason is logged and returned. An id that changed the
vault before (an entry submitted again, or one id given to two entries) would have that
undo take back the earlier work too, acknowledged long ago: then each file is put back
on its own, only where it is still as we left it (a file we made is deleted, one we
changed is restored to its version from before our write).
"""

from __future__ import annotations

import contextlib
import logging
import posixpath

from agent_client.reasons import entry_reason
from agent_client.results import WriteResult
from agent_client.vault import Vault
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
        self._before: dict[str, str] = {}  # path -> its etag before our first write
        self._after: dict[str, str] = {}  # path -> its etag after our last write
        # A write was sent: it may have landed even when its answer never came.
        self.attempted = False
        self._unanswered: str | None = None  # a write sent whose answer never came
        self.id_new = True  # undo of the id takes back this merge's writes only

    @property
    def written(self) -> list[str]:
        """Paths written so far, in the order of their first write."""
        return list(self._created)

    async def write(
        self, path: str, content: str, *, if_match: str | None, encoding: str = "utf-8"
    ) -> WriteResult:
        """Write ``content`` with the entry's reason (``if_match`` "": must be new)."""
        self.attempted = True
        self._unanswered = path
        result = await self.vault.write(
            path, content, encoding=encoding, if_match=if_match, reason=self.reason
        )
        self._unanswered = None
        path = result.get("path", path)  # as the vault spells it (NFC)
        self._created.setdefault(path, result["created"])
        if if_match and path not in self._before:
            self._before[path] = if_match
        self._after[path] = result["etag"]
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
        except ConflictError as exc:  # all its changes undone already: new again
            return _all_undone(exc.message)
        return False

    async def rollback(self) -> str | None:
        """Undo every write of this merge (see the module's docstring); None when done or
        when nothing was written, else why something stays."""
        if not self.attempted:
            return None
        # (Forgotten once settled: an indexer gone meanwhile raises, and the merge stays
        # to be taken back on the next session, ``MergeCutShort``.)
        written, unanswered = self.written, self._unanswered
        why: str | None = None
        if not await self.vault.has_history():
            why = "this indexer keeps no history to undo with"
        elif not self.id_new:
            why = await self._put_back_each(written, unanswered)
        else:
            try:
                await self.vault.undo(self.entry_id)
            except ConflictError as exc:  # "entry X cannot be undone, nothing was changed: ..."
                why = "changed since: " + exc.message.partition(": ")[2]
            except NotFoundError:
                pass  # none of its writes landed
        self._created, self.attempted, self._unanswered = {}, False, None
        if why is not None and self.id_new:
            logger.warning("entry %s: the writes to %s stay: %s", self.entry_id, written, why)
        return why

    async def _put_back_each(self, written: list[str], unanswered: str | None) -> str | None:
        """Take back each write of this merge on its own (never by the id), newest first,
        where the file is still as we left it; None when all went back, else why not."""
        kept = [f"{unanswered} (its write's answer never came)"] if unanswered else []
        for path in reversed(written):
            try:
                now = await self.vault.stat(path)
                if not now.get("exists", True) and path not in self._before:
                    continue  # we made it, and it is gone (a put back cut short before)
                if now.get("etag") != self._after.get(path):
                    kept.append(f"{path} (changed since)")
                elif path not in self._before:  # we made it
                    await self.vault.delete(path, reason=self.reason)
                    await self._remove_empty_assets_folder(path)
                else:
                    await self._restore_before(path)
            except ConflictError:
                kept.append(f"{path} (changed since)")
            except NotFoundError as exc:
                kept.append(f"{path} ({exc.message})")
        if not kept:
            return None
        why = "changed since or not in history: " + "; ".join(kept)
        logger.warning("entry %s: the writes to %s stay: %s", self.entry_id, kept, why)
        return why

    async def _restore_before(self, path: str) -> None:
        """Restore ``path`` to its newest version holding the text from before our write."""
        versions = (await self.vault.history(path, limit=100))["versions"]
        before = self._before[path]
        found = next((v["version"] for v in versions if v["etag"] == before), None)
        if found is None:
            raise NotFoundError(f"history no longer holds {path} as it was")
        await self.vault.restore(path, found, if_match=self._after[path], reason=self.reason)

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


def _all_undone(message: str) -> bool:
    """Whether an undo's refusal says only that each file is undone already."""
    parts = message.partition("nothing was changed: ")[2].split("; ")
    return bool(parts) and all(part.endswith("(already undone)") for part in parts)
