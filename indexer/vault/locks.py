"""Who may change what at once in the vaults: one lock per file, and per vault a lock
every change holds shared and a folder move holds alone.

A change locks the files it touches (``VaultLocks.held``). A folder move cannot lock
files that do not exist yet: a write creating a note in the folder while it moved put
the note in the moved folder while history and the answer named the old path. So every
change also holds its vault's ``SharedLock`` shared, and a folder move holds it alone
(waiting for the changes under way to end, at most ``EXCLUSIVE_WAIT_SECONDS``).
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

from shared.errors import ConflictError

EXCLUSIVE_WAIT_SECONDS = 10.0


class SharedLock:
    """Held by many at once (``shared``) or by one thread alone (``exclusive``).

    While a thread waits to hold it alone, new shared takers wait too: under a steady
    stream of writes the holders otherwise never all let go at once (a folder move
    waited 10 s and gave up). A thread already holding it shared takes it again at
    once, and the thread holding it alone may take it shared (it excludes everyone)."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._holders = 0
        self._waiting_alone = 0
        self._owner: int | None = None  # the thread holding it alone
        self._depth = threading.local()

    @contextmanager
    def shared(self) -> Iterator[None]:
        me = threading.get_ident()
        depth: int = getattr(self._depth, "value", 0)
        if depth or self._owner == me:
            self._depth.value = depth + 1
            try:
                yield
            finally:
                self._depth.value = depth
            return
        with self._changed:
            self._changed.wait_for(lambda: self._owner is None and not self._waiting_alone)
            self._holders += 1
        self._depth.value = 1
        try:
            yield
        finally:
            self._depth.value = 0
            with self._changed:
                self._holders -= 1
                if not self._holders:
                    self._changed.notify_all()

    @contextmanager
    def exclusive(self, timeout: float = EXCLUSIVE_WAIT_SECONDS) -> Iterator[None]:
        """Alone; ``ConflictError`` when changes keep it shared for ``timeout`` seconds."""
        me = threading.get_ident()
        if getattr(self._depth, "value", 0):
            raise RuntimeError("a thread holding the lock shared cannot take it alone")
        deadline = time.monotonic() + timeout
        with self._changed:
            self._waiting_alone += 1
            try:
                while self._owner is not None or self._holders:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise ConflictError("the vault is busy with other changes; try again")
                    self._changed.wait(left)
            finally:
                self._waiting_alone -= 1
                if not self._waiting_alone:
                    self._changed.notify_all()  # shared takers held back by this wait
            self._owner = me
        try:
            yield
        finally:
            with self._changed:
                self._owner = None
                self._changed.notify_all()


class VaultLocks:
    """The locks of the files and vaults of one ``Vault``."""

    def __init__(self) -> None:
        self._files: weakref.WeakValueDictionary[tuple[str, str], threading.Lock] = (
            weakref.WeakValueDictionary()
        )
        self._vaults: dict[str, SharedLock] = {}
        self._guard = threading.Lock()

    def file(self, lang: str, rel: str) -> threading.Lock:
        """One lock per file; case-folded so a case-insensitive file system is covered."""
        with self._guard:
            key = (lang, rel.casefold())
            lock = self._files.get(key)
            if lock is None:
                lock = threading.Lock()
                self._files[key] = lock
            return lock

    def vault(self, lang: str) -> SharedLock:
        with self._guard:
            return self._vaults.setdefault(lang, SharedLock())

    @contextmanager
    def held(self, files: list[tuple[str, str]], *, alone: str | None = None) -> Iterator[None]:
        """Hold the vaults of ``files`` shared (the vault ``alone`` alone), then the
        files' locks, each kind in one global order (no deadlock)."""
        with ExitStack() as stack:
            for lang in sorted({lang for lang, _ in files} | ({alone} if alone else set())):
                vault = self.vault(lang)
                stack.enter_context(vault.exclusive() if lang == alone else vault.shared())
            for lang, rel in sorted({(lang, rel.casefold()) for lang, rel in files}):
                stack.enter_context(self.file(lang, rel))
            yield
