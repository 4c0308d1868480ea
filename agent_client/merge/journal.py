"""Undo for a failed merge: what each path held before this merge first wrote it.

A knowledge merge may write several files (a note, its images, a second note). If the
merge then fails, ``rollback()`` puts every file back as it was, so nothing
half-written stays in the vault. A file that someone changed after our write is left
alone (their edit wins over our undo) and reported.
"""

from __future__ import annotations

import contextlib
import logging
import posixpath
from dataclasses import dataclass

from agent_client.connection import Vault
from agent_client.results import WriteResult
from shared.errors import NotFoundError, VaultError
from shared.images import ASSETS_SUFFIX

logger = logging.getLogger("agent_client.merge.journal")


@dataclass
class _Touched:
    before: str | None  # text before our first write; None: the file did not exist
    last_etag: str


class WriteJournal:
    """Writes through a ``Vault`` while remembering how to undo them."""

    def __init__(self, vault: Vault) -> None:
        self.vault = vault
        self._touched: dict[str, _Touched] = {}

    @property
    def written(self) -> list[str]:
        """Paths written so far, in the order of their first write."""
        return list(self._touched)

    async def write(
        self,
        path: str,
        content: str,
        *,
        before: str | None,
        if_match: str | None,
        encoding: str = "utf-8",
    ) -> WriteResult:
        """Write ``content``; ``before`` is what the caller read (None: must be new)."""
        result = await self.vault.write(path, content, encoding=encoding, if_match=if_match)
        if path in self._touched:
            self._touched[path].last_etag = result["etag"]
        else:
            self._touched[path] = _Touched(before=before, last_etag=result["etag"])
        return result

    def created(self, path: str) -> bool:
        """Whether this merge created ``path`` (it did not exist before)."""
        touched = self._touched.get(path)
        return touched is not None and touched.before is None

    async def discard(self, path: str) -> None:
        """Delete a file this merge created, as if it had never been written."""
        if not self.created(path):
            raise ValueError(f"{path} was not created by this merge")
        with contextlib.suppress(NotFoundError):
            await self.vault.delete(path)
        del self._touched[path]
        await self._remove_empty_assets_folder(path)

    def rebase(self, path: str, content: str) -> None:
        """Someone else rewrote ``path`` after our write: undo now restores *their* text."""
        if path in self._touched:
            self._touched[path].before = content

    async def rollback(self) -> list[str]:
        """Undo every write, newest first; returns the paths that could not be undone."""
        left: list[str] = []
        for path, touched in reversed(list(self._touched.items())):
            try:
                await self._undo(path, touched)
            except VaultError as exc:
                logger.warning("could not undo the write of %s: %s", path, exc)
                left.append(path)
        self._touched.clear()
        return left

    async def _undo(self, path: str, touched: _Touched) -> None:
        stat = await self.vault.stat(path)
        if not stat["exists"]:
            return  # already gone (e.g. an asset removed with its new note)
        if stat["etag"] != touched.last_etag:
            raise VaultError(f"{path} changed after this merge wrote it; left as it is")
        if touched.before is None:
            with contextlib.suppress(NotFoundError):
                await self.vault.delete(path)
            await self._remove_empty_assets_folder(path)
        else:
            await self.vault.write(path, touched.before, if_match=touched.last_etag)

    async def _remove_empty_assets_folder(self, path: str) -> None:
        """A created image gone: its ``*.assets/`` folder too, if nothing else is in it."""
        folder = posixpath.dirname(path)
        if not folder.endswith(ASSETS_SUFFIX):
            return
        try:
            await self.vault.delete(folder)  # the server never removes a non-empty folder
        except VaultError as exc:
            if exc.code == "indexer_offline":
                raise
