"""A vault's files by file name, for the page's links (``![[shot.png]]`` kept in
``Attachments/``): one bounded walk of the vault, kept for a while.

The index holds notes and text files only; a picture's path is known from a walk. A
render never walks: it asks this listing, which is walked again only when older than
``NAMES_FRESH_SECONDS``, or when asked for a name it lacks and older than
``NAMES_RETRY_SECONDS`` (a picture just added is found within that time). A walk
stops after ``NAMES_MAX_SECONDS`` or ``MAX_NAMED_FILES`` files (what it saw is kept).
"""

from __future__ import annotations

import contextlib
import threading
import time
import unicodedata
from collections.abc import Collection
from typing import TYPE_CHECKING

from indexer.vault.scan import walk_files
from shared.errors import VaultError

if TYPE_CHECKING:
    from indexer.vault.vault import Vault

NAMES_FRESH_SECONDS = 300.0
NAMES_RETRY_SECONDS = 15.0
NAMES_MAX_SECONDS = 2.0
MAX_NAMED_FILES = 200_000
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def name_key(name: str) -> str:
    """How a file name is compared: NFC (a vault's paths are), ASCII letters in lower
    case (as SQLite's ``lower`` folds them in the index; Obsidian ignores the case)."""
    return unicodedata.normalize("NFC", name).translate(_ASCII_LOWER)


class FileNames:
    """Per vault: file name key -> paths, from a walk at most this old."""

    def __init__(self, vault: Vault) -> None:
        self.vault = vault
        self._lock = threading.Lock()  # one walk at a time (a render waits for it)
        self._listings: dict[str, tuple[float, dict[str, list[str]]]] = {}

    def find(self, lang: str, keys: Collection[str], *, retry: bool = True) -> dict[str, list[str]]:
        """The paths of each of ``keys`` (``name_key`` of a file name) that the vault
        holds; ``retry``: walk again for a missing key if the listing is not recent."""
        with self._lock:
            now = time.monotonic()
            made, names = self._listings.get(lang, (-1e18, {}))
            missing = any(key not in names for key in keys)
            age = now - made
            if age > NAMES_FRESH_SECONDS or (retry and missing and age > NAMES_RETRY_SECONDS):
                names = self._walk(lang)
                self._listings[lang] = (time.monotonic(), names)
            self._drop_stale(now)
        return {key: names[key] for key in keys if key in names}

    def _drop_stale(self, now: float) -> None:
        """Forget the listings no render used while they were fresh (about 250 bytes a
        file: 25 MB for a vault of 100,000; one that old is walked again anyway)."""
        for lang, (made, _) in list(self._listings.items()):
            if now - made > NAMES_FRESH_SECONDS:
                del self._listings[lang]

    def _walk(self, lang: str) -> dict[str, list[str]]:
        return names_in_vault(self.vault, lang, seconds=NAMES_MAX_SECONDS, most=MAX_NAMED_FILES)


def names_in_vault(
    vault: Vault, lang: str, *, seconds: float | None = None, most: int | None = None
) -> dict[str, list[str]]:
    """Every file of ``lang``'s vault that the tools can name, by ``name_key`` (dot names
    left out, as ``find`` leaves them), from one walk: at most ``seconds`` long and
    ``most`` files when given (what it saw is kept)."""
    names: dict[str, list[str]] = {}
    deadline = None if seconds is None else time.monotonic() + seconds
    try:
        target = vault.sandbox.resolve(lang, "", allow_root=True)
        with vault.sandbox.open(target) as place:
            top = place.walk_start()
            if top is None:
                return names
            with contextlib.closing(walk_files(top, "")) as entries:
                for count, entry in enumerate(entries):
                    name = entry.rel.rsplit("/", 1)[-1]
                    names.setdefault(name_key(name), []).append(entry.rel)
                    if (most is not None and count >= most) or (
                        deadline is not None and time.monotonic() > deadline
                    ):
                        break
    except (OSError, VaultError):
        pass  # (no vault yet, or not readable: nothing is found by name)
    return names
