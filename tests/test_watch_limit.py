"""The kernel's inotify watch limit (``fs.inotify.max_user_watches``) reached: the
folders past it were left unwatched without a word (no log, ``sync`` "running", results
not partial), and a change saved there was never found until a restart (300 vaults
over a real low limit: an outside note in each of two vaults not found in 35 s).

``inotify_add_watch`` answers ENOSPC here from the test's budget (the limit is the
machine's, shared with every process of this user: not lowered in a test); the rest is
real: watchdog, inotify, the index, its keeper's polls.
"""

from __future__ import annotations

import ctypes
import errno
from collections.abc import Iterator

import pytest
from helpers.indexer_process import wait_for
from helpers.vault_stack import watching_index
from watchdog.observers import inotify_c

from indexer.index import watch_supervisor
from indexer.index.service import NoteIndex
from shared.workspace import Workspace

FOLDERS = 12


class WatchBudget:
    """``inotify_add_watch`` that fails with ENOSPC past ``left`` watches (None: never)."""

    def __init__(self, left: int | None) -> None:
        self.left = left
        self.refused = 0
        self._add = inotify_c.inotify_add_watch

    def __call__(self, fd: int, path: bytes, mask: int) -> int:
        if self.left is not None:
            if self.left <= 0:
                self.refused += 1
                ctypes.set_errno(errno.ENOSPC)
                return -1
            self.left -= 1
        return int(self._add(fd, path, mask))


def put(ws: Workspace, rel: str, text: str) -> None:
    path = ws.vault_dir("en") / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def found(index: NoteIndex, query: str) -> list[str]:
    return sorted(h["path"] for h in index.search("en", query, limit=100)["results"])


@pytest.fixture
def budget(monkeypatch: pytest.MonkeyPatch) -> WatchBudget:
    limit = WatchBudget(6)  # the languages folder, en, its vault, the barrier, 2 more
    monkeypatch.setattr(inotify_c, "inotify_add_watch", limit)
    monkeypatch.setattr(watch_supervisor, "RETRY_SECONDS", 1.0)
    return limit


@pytest.fixture
def live(ws: Workspace, budget: WatchBudget) -> Iterator[NoteIndex]:
    for i in range(FOLDERS):
        put(ws, f"f{i:02d}/start.md", "present at start")
    yield from watching_index(ws)


def test_folders_past_the_watch_limit_are_said_and_polled(
    ws: Workspace, live: NoteIndex, budget: WatchBudget, caplog: pytest.LogCaptureFixture
) -> None:
    assert budget.refused > 0
    watcher = wait_for(
        lambda: (w := live.health()["watcher"])["last_error"] and w, 10, what="the limit said"
    )
    assert "max_user_watches" in watcher["last_error"] and watcher["state"] == "polling"
    assert live.health()["partial"] and live.partial
    assert "max_user_watches" in caplog.text
    for i in range(FOLDERS):  # (a change in each folder: most have no watch)
        put(ws, f"f{i:02d}/later.md", "saved from outside: loquat")
    every = [f"f{i:02d}/later.md" for i in range(FOLDERS)]
    wait_for(lambda: found(live, "loquat") == every, 30, what="the changes, by polling")


def test_every_folder_is_watched_again_once_watches_are_free(
    ws: Workspace, live: NoteIndex, budget: WatchBudget
) -> None:
    wait_for(lambda: live.health()["watcher"]["last_error"], 10, what="the limit said")
    budget.left = None  # (someone raised the limit, or another program let its watches go)
    wait_for(
        lambda: (
            live.health()["watcher"] == {**live.health()["watcher"], "state": "running"}
            and live.health()["watcher"]["last_error"] is None
        ),
        15,
        what="every folder watched again",
    )
    wait_for(lambda: not live.partial, 30, what="the index to catch up")
    put(ws, "f07/now.md", "saved once watched: medlar")
    wait_for(lambda: found(live, "medlar") == ["f07/now.md"], 5, what="the change, by inotify")
