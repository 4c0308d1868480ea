"""The watcher under hostile trees and lost events: it never dies silently, the index
never falls behind without saying so, and it catches up.

Real watchdog observers, real inotify: a tree of 1,100 nested folders moved into a vault
(or lying outside any vault at start-up), and an observer thread that dies. (The
kernel's event queue overflowing is in test_faults_e2e.py.)
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.indexer_process import wait_for
from helpers.vault_stack import watching_index

from indexer.index.service import NoteIndex
from shared.path_names import MAX_DEPTH
from shared.workspace import Workspace

DEPTH = 1100


def put(ws: Workspace, rel: str, text: str, lang: str = "en") -> Path:
    path = ws.vault_dir(lang) / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def deep_tree(top: Path, depth: int = DEPTH) -> None:
    """``top/d/d/.../d/deep.md``, made with relative ``mkdir`` (no path grows too long)."""
    top.mkdir(parents=True)
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            child = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
        with open(os.open("deep.md", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w") as f:
            f.write("# deep\nlost\n")
    finally:
        os.close(fd)


def hits(index: NoteIndex, query: str) -> list[str]:
    return sorted(h["path"] for h in index.search("en", query, limit=100)["results"])


@pytest.fixture
def live(ws: Workspace) -> Iterator[NoteIndex]:
    put(ws, "start.md", "present at start")
    yield from watching_index(ws)


def remove_deep_tree(top: Path) -> None:
    """Remove what ``deep_tree`` made, bottom up with two descriptors at a time (pytest's
    clean-up recurses once per level: past Python's limit it fails, and so does every
    later session's clean-up of old temp folders)."""
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    levels = 0
    while True:
        try:
            child = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        except FileNotFoundError:
            break
        os.close(fd)
        fd, levels = child, levels + 1
    try:
        for _ in range(levels + 1):
            with os.scandir(fd) as entries:
                files = [e.name for e in entries if not e.is_dir(follow_symlinks=False)]
            for name in files:
                os.unlink(name, dir_fd=fd)
            if levels == 0:
                break
            parent = os.open("..", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd, levels = parent, levels - 1
            os.rmdir("d", dir_fd=fd)
    finally:
        os.close(fd)
    os.rmdir(top)


def test_a_deep_tree_moved_in_does_not_kill_the_watcher(
    ws: Workspace, live: NoteIndex, tmp_path: Path
) -> None:
    deep_tree(tmp_path / "staging" / "deep")
    os.rename(tmp_path / "staging" / "deep", ws.vault_dir("en") / "deep")
    try:
        put(ws, "after.md", "written after the deep tree arrived: plum")
        wait_for(lambda: hits(live, "plum") == ["after.md"], 15, what="a note after the deep tree")
        assert live.health()["watcher"]["state"] == "running"
        wait_for(lambda: not live.partial, 15, what="the index to catch up")
    finally:
        remove_deep_tree(ws.vault_dir("en") / "deep")


def test_a_tree_too_deep_to_watch_moved_up_into_range_is_watched_below(
    ws: Workspace, live: NoteIndex
) -> None:
    """watchdog moves the watches of a folder moved within the tree and adds none: the
    folders that were too deep stayed unwatched after one rename brought them in range,
    and saves there were never seen (while grep trusted the watcher)."""
    levels = [f"l{i}" for i in range(MAX_DEPTH + 2)]  # a note at the bottom: too deep
    bottom = ws.vault_dir("en").joinpath(*levels)
    bottom.mkdir(parents=True)
    (bottom / "deep.md").write_text("# Deep\n\nwas too deep\n", encoding="utf-8")
    put(ws, "marker.md", "written after the deep tree: quince")
    wait_for(lambda: hits(live, "quince") == ["marker.md"], 15, what="the marker note")
    assert hits(live, "too deep") == []
    os.rename(ws.vault_dir("en").joinpath(*levels[:10]), ws.vault_dir("en") / "up")
    moved = ws.vault_dir("en").joinpath("up", *levels[10:])
    rel = "/".join(["up", *levels[10:], "deep.md"])
    wait_for(lambda: hits(live, "too deep") == [rel], 15, what="the note moved into range")
    (moved / "later.md").write_text("# Later\n\nsaved after the move: medlar\n", "utf-8")
    (moved / "deep.md").write_text("# Deep\n\nnow edited: loquat\n", encoding="utf-8")
    later = rel.replace("deep.md", "later.md")
    wait_for(lambda: hits(live, "medlar") == [later], 15, what="a save below the moved folder")
    wait_for(lambda: hits(live, "loquat") == [rel], 15, what="an edit below the moved folder")
    assert live.health()["watcher"]["state"] == "running" and not live.partial


def test_a_deep_tree_outside_any_vault_does_not_stop_start_up(ws: Workspace) -> None:
    deep_tree(ws.languages_dir / "notalang")
    put(ws, "start.md", "present at start")
    index = NoteIndex(ws, debounce=0.02)
    index.open()
    try:
        index.start_background()
        wait_for(lambda: index.ready, 15, what="the start-up reconcile")
        put(ws, "later.md", "a later damson")
        wait_for(lambda: hits(index, "damson") == ["later.md"], 15, what="a note written later")
        assert index.health()["watcher"]["state"] == "running"
    finally:
        index.close()
        remove_deep_tree(ws.languages_dir / "notalang")


def test_a_dead_observer_is_restarted_and_the_index_catches_up(
    ws: Workspace, live: NoteIndex
) -> None:
    watcher = live._watcher
    assert watcher is not None and watcher._observer is not None
    observer = watcher._observer._observer
    assert observer is not None
    observer.stop()  # the thread ends, as it would after an unexpected error
    observer.join(10)
    put(ws, "while-dead.md", "written while nobody watched: quince")
    wait_for(lambda: live.health()["watcher"]["restarts"] == 1, 15, what="a restart of the watcher")
    wait_for(lambda: hits(live, "quince") == ["while-dead.md"], 15, what="the missed note")
    put(ws, "after-restart.md", "written after the restart: medlar")
    wait_for(
        lambda: hits(live, "medlar") == ["after-restart.md"], 15, what="a note after the restart"
    )
    assert live.health()["watcher"]["state"] == "running"
    wait_for(lambda: not live.partial, 15, what="the index to catch up")


def test_the_memory_folder_moved_away_is_watched_again_where_it_was(
    ws: Workspace, live: NoteIndex, tmp_path: Path
) -> None:
    """``mv W/memory W.old`` (restoring a backup): inotify followed the folder it
    watched, so nothing at ``W/memory`` was watched any more while the index said it was
    caught up; search kept the moved notes and never found new ones, until a restart."""
    put(ws, "old.md", "before the move: quince")
    wait_for(lambda: hits(live, "quince") == ["old.md"], 15, what="the first note")
    (ws.root / "memory").rename(tmp_path / "memory-old")
    put(ws, "new.md", "after the move: medlar")
    wait_for(lambda: hits(live, "medlar") == ["new.md"], 15, what="the note in the new folder")
    wait_for(lambda: hits(live, "quince") == [], 15, what="the moved note to go")
    put(ws, "later.md", "later still: loquat")  # the new folder is watched, not polled
    wait_for(lambda: hits(live, "loquat") == ["later.md"], 15, what="a later note")
    assert live.health()["watcher"]["state"] == "running"
    wait_for(lambda: not live.partial, 15, what="the index to catch up")


def test_a_lang_folder_swapped_back_and_forth_still_stops_cleanly(
    ws: Workspace, live: NoteIndex, tmp_path: Path
) -> None:
    """watchdog forgot the watch of a lang folder swapped while serving: stopping raised
    KeyError, and ``serve`` exited 1 without its clean-shutdown mark."""
    put(ws, "d/n.md", "# n\nquince\n")
    wait_for(lambda: hits(live, "quince") == ["d/n.md"], 15, what="the note")
    lang = ws.languages_dir / "en"
    for round_ in range(2):
        aside, other = tmp_path / f"aside{round_}", tmp_path / f"other{round_}"
        lang.rename(aside)
        time.sleep(0.3)
        put(ws, "d/n.md", "# another copy\n")
        time.sleep(0.3)
        lang.rename(other)
        aside.rename(lang)
        time.sleep(0.5)
    live.close()  # raised KeyError from watchdog's inotify


def test_a_languages_folder_away_for_a_while_is_watched_again_as_it_comes_back(
    ws: Workspace, live: NoteIndex, tmp_path: Path
) -> None:
    """A restore moved the folder away for more than a second: the watcher's restart
    failed (nothing to watch) and it waited the minute before the next try, polling,
    while searches said ``partial: false`` and missed saves for up to 10 s."""
    languages = ws.vault_dir("en").parent.parent
    languages.rename(tmp_path / "languages-away")
    wait_for(lambda: live.health()["watcher"]["state"] == "polling", 15, what="the watcher to stop")
    # (the reason says the watcher could not start until a reconcile has caught up,
    # then that it is not running: either way, the file watcher)
    assert live.partial and "file watcher" in (live.health()["reason"] or "")
    (tmp_path / "languages-away").rename(languages)
    wait_for(
        lambda: live.health()["watcher"]["state"] == "running",
        10,  # (the retry waited 60 s)
        what="the watcher back on the folder",
    )
    put(ws, "back.md", "after the restore: medlar")
    wait_for(lambda: hits(live, "medlar") == ["back.md"], 5, what="a save after the restore")
    wait_for(lambda: not live.partial, 15, what="the index to catch up")
