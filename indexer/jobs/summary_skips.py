"""Which notes the summaries said they skipped (cannot be read), by path and size.

A note over the size limit (or not UTF-8) is skipped at every pass over its folder,
and every start passes over every folder: its warning came at each start, for a file
nobody changed. It is said once per file and size, kept in the workspace's state (a
small JSON file; when it cannot be written, once per run), then at DEBUG."""

from __future__ import annotations

import json
import logging
import os
import threading
from pathlib import Path

from indexer.vault import atomic, fsops

log = logging.getLogger("indexer.jobs.summaries")

SKIPS_FILE = "summaries-skipped.json"  # in the workspace's state folder
MAX_KEPT = 1000  # files remembered at most (the oldest said are forgotten first)


class SkipsSaid:
    """The (lang/path: size) of the skipped notes already warned of."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._said: dict[str, int] | None = None

    def skipped(self, lang: str, rel: str, size: int) -> None:
        """Say that ``lang``/``rel`` (``size`` bytes, -1 unknown) was skipped: a warning
        the first time for this file and size, DEBUG after."""
        key = f"{lang}/{rel}"
        with self._lock:
            said = self._load()
            new = said.get(key) != size
            if new:
                said.pop(key, None)
                said[key] = size
                while len(said) > MAX_KEPT:
                    del said[next(iter(said))]
                self._save(said)
        level = logging.WARNING if new else logging.DEBUG
        log.log(level, "summaries: %s cannot be read: skipped", key)

    def _load(self) -> dict[str, int]:
        if self._said is None:
            self._said = {}
            if self.path is not None:
                try:
                    data = json.loads(self.path.read_bytes())
                except (OSError, ValueError):
                    data = {}  # (none yet, or unreadable: said again, once)
                if isinstance(data, dict):
                    self._said = {k: v for k, v in data.items() if isinstance(v, int)}
        return self._said

    def _save(self, said: dict[str, int]) -> None:
        if self.path is None:
            return
        data = json.dumps(said, ensure_ascii=False).encode("utf-8")
        try:  # (no fsync: a record lost in a crash is a warning said once more)
            fd = os.open(self.path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            with fsops.opened(fd):
                atomic.replace_at(fd, self.path.name, data, mode=0o600, durable=False)
        except OSError as err:  # (no state folder, a read-only one: for this run only)
            log.debug("summaries: %s not written: %s", self.path, err)
