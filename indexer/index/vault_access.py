"""Vaults this user may not read now (a person's ``chmod``): each is warned about once,
and told again when it may be read; meanwhile its notes stay indexed
(``reconcile.keep_below``) and its searches say ``partial`` (what the index holds of it
may be out of date).
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path

from shared.langs import is_lang
from shared.workspace import Workspace

log = logging.getLogger("indexer.index")


class VaultAccess:
    """Which vaults this user is kept out of; ``known_langs`` names the langs the index
    holds (the languages folder itself may be shut)."""

    def __init__(self, workspace: Workspace, known_langs: Callable[[], set[str]]) -> None:
        self.workspace = workspace
        self._known_langs = known_langs
        # The langs whose vault this user may not read now, warned about once; and every
        # lang seen, to tell them when the languages folder itself is shut.
        self._refused: set[str] = set()
        self._langs_seen: set[str] | None = None
        self._lock = threading.Lock()

    def check(self) -> None:
        """Warn once about each vault this user may not read, and say when it may again:
        its notes are missing from search meanwhile (a tool call on it says why)."""
        with self._lock:
            langs = self._langs_seen
            if langs is None:  # the langs indexed before: the languages folder may be shut
                langs = self._known_langs()
            # (the languages folder shut or missing: the langs seen before tell)
            with contextlib.suppress(OSError), os.scandir(self.workspace.languages_dir) as found:
                langs |= {entry.name for entry in found if is_lang(entry.name)}
            self._langs_seen = langs
            refused = {lang: why for lang in langs if (why := self.refused(lang))}
            for lang in sorted(refused.keys() - self._refused):
                log.warning(
                    "the vault %s cannot be read (%s: %s): its notes are missing from search"
                    " until the indexer's user may read that folder again",
                    lang, refused[lang], self._refused_at(lang),
                )  # fmt: skip
            for lang in sorted(self._refused - refused.keys()):
                log.info("the vault %s can be read again", lang)
            self._refused = set(refused)

    def kept_out(self) -> dict[str, str]:
        """Each vault this user may not read now and why, naming the folder that keeps
        it out (looked at now: ``status`` and ``/health`` tell what the log told)."""
        with self._lock:
            langs = set(self._langs_seen or ()) | self._refused
        return {
            lang: f"{why} ({self._refused_at(lang)})"
            for lang in sorted(langs)
            if (why := self.refused(lang))
        }

    def refused(self, lang: str) -> str | None:
        """Why this user may not read ``lang``'s vault folder (None: it may, or there is
        none): a vault kept out is no empty vault."""
        try:
            fd = os.open(
                self.workspace.vault_dir(lang), os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
            )
        except OSError as err:
            return err.strerror if err.errno in (errno.EACCES, errno.EPERM) else None
        os.close(fd)
        return None

    def _refused_at(self, lang: str) -> Path:
        """The folder that keeps this user out of ``lang``'s vault: the parent of the
        first one it may not look at (no search permission), else the vault (no read)."""
        vault = self.workspace.vault_dir(lang)
        for path in (vault.parent.parent, vault.parent, vault):
            try:
                os.stat(path)
            except PermissionError:
                return path.parent
            except OSError:
                break
        return vault
