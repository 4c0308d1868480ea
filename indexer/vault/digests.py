"""The hashes of a file after an append, in the time of the appended bytes only.

An append's etag (blake2b) and history's content address (sha256) are hashes of the
whole file: 1.7 ms and 0.7 ms for a 1 MiB day file, on every event. Both are
streaming hashes, so the vault keeps, for the last files it wrote, their bytes and the
two hash states after them; when the bytes an append starts from are exactly those
(one ``memcmp``, never a trust in size or mtime), the states are copied and fed only
the appended bytes. Anything else (a file changed outside the tools, an old entry) is
hashed whole, as before.

``etag_of_file`` is the same etag read in chunks from an open file: ``stat`` and the
move of a file over ``max_file_bytes`` (put there by another program) hash it without
holding it in memory, and give the etag a ``read`` would.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

MAX_FILES = 16
MAX_BYTES = 16 << 20  # what the kept bytes may take in all (a day file is far smaller)
CHUNK_BYTES = 1 << 20  # what ``etag_of_file`` holds at once


def _etag_state(data: bytes) -> Any:
    return hashlib.blake2b(data, digest_size=16)  # fsops.etag_of's hash


def etag_of_file(fd: int) -> str:
    """``fsops.etag_of`` of the bytes of the open regular file ``fd`` from its current
    offset, hashed a chunk at a time: a file of any size gets the etag ``read`` gives
    it, without the size limit that keeps a whole read from filling memory."""
    state = _etag_state(b"")
    while chunk := os.read(fd, CHUNK_BYTES):
        state.update(chunk)
    return str(state.hexdigest())


@dataclass(frozen=True, slots=True)
class Hashes:
    """A file's etag (as ``fsops.etag_of``) and sha256 (history's content address)."""

    etag: str
    sha: bytes


@dataclass(frozen=True, slots=True)
class _Entry:
    data: bytes
    etag: Any  # hashlib states after ``data``
    sha: Any


class Digests:
    """Hash states of the last ``max_files`` files written, ``max_bytes`` of them at most
    (thread-safe; callers hold the file's lock, so one path is never hashed by two calls
    at once)."""

    def __init__(self, max_files: int = MAX_FILES, max_bytes: int = MAX_BYTES) -> None:
        self._max = max_files
        self._max_bytes = max_bytes
        self._bytes = 0
        self._lock = threading.Lock()
        self._entries: OrderedDict[tuple[str, str], _Entry] = OrderedDict()

    def of(self, key: tuple[str, str], data: bytes) -> Hashes:
        """The hashes of ``data``, the new content of ``key`` (remembered)."""
        return self._keep(key, _Entry(data, _etag_state(data), hashlib.sha256(data)))

    def known_etag(self, key: tuple[str, str], data: bytes) -> str | None:
        """The etag of ``data`` when they are the bytes remembered for ``key`` (what a
        tool's next change of the file replaces), without hashing; else None."""
        with self._lock:
            entry = self._entries.get(key)
        if entry is None or not (entry.data is data or entry.data == data):
            return None
        return str(entry.etag.hexdigest())

    def appended(self, key: tuple[str, str], before: bytes, added: bytes, after: bytes) -> Hashes:
        """The hashes of ``after`` (= ``before + added``), the content of ``key`` after an
        append; only ``added`` is hashed when ``before`` is what was remembered."""
        with self._lock:
            entry = self._entries.get(key)
        if entry is None or len(entry.data) != len(before) or entry.data != before:
            return self.of(key, after)
        etag, sha = entry.etag.copy(), entry.sha.copy()
        etag.update(added)
        sha.update(added)
        return self._keep(key, _Entry(after, etag, sha))

    def _keep(self, key: tuple[str, str], entry: _Entry) -> Hashes:
        hashes = Hashes(entry.etag.hexdigest(), entry.sha.digest())
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= len(old.data)
            if len(entry.data) * 4 <= self._max_bytes:  # larger files: hashed whole
                self._entries[key] = entry
                self._bytes += len(entry.data)
            while self._entries and (
                len(self._entries) > self._max or self._bytes > self._max_bytes
            ):
                _, dropped = self._entries.popitem(last=False)
                self._bytes -= len(dropped.data)
        return hashes
