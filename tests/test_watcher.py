"""External edits picked up by the real watchdog observer (polling with deadlines)."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from indexer.index.service import NoteIndex
from shared.workspace import Workspace

DEADLINE = 10.0


def eventually(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def put(ws: Workspace, rel: str, text: str, lang: str = "en") -> Path:
    path = ws.vault_dir(lang) / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def save_like_an_editor(path: Path, text: str) -> None:
    """Write a temp file beside the note and rename it over (vim, VS Code, our writer)."""
    tmp = path.with_name(f".{path.name}.tmp.abc123")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def hits(index: NoteIndex, query: str, lang: str = "en") -> list[str]:
    return sorted(h["path"] for h in index.search(lang, query, limit=100)["results"])


@pytest.fixture
def live(ws: Workspace) -> Iterator[NoteIndex]:
    put(ws, "start.md", "present at start")
    index = NoteIndex(ws, debounce=0.02)
    index.open()
    index.start_background()
    eventually(lambda: index.ready, "the start-up reconcile")
    yield index
    index.close()


def test_create_edit_delete(ws: Workspace, live: NoteIndex) -> None:
    assert hits(live, "present") == ["start.md"]
    path = put(ws, "items/new.md", "fresh apricot")
    eventually(lambda: hits(live, "apricot") == ["items/new.md"], "a created note")
    path.write_text("now a blueberry")
    eventually(lambda: hits(live, "blueberry") == ["items/new.md"], "an edited note")
    assert hits(live, "apricot") == []
    path.unlink()
    eventually(lambda: hits(live, "blueberry") == [], "a deleted note")


def test_editor_save_via_temp_file_and_rename(ws: Workspace, live: NoteIndex) -> None:
    path = ws.vault_dir("en") / "start.md"
    save_like_an_editor(path, "saved cranberry")
    eventually(lambda: hits(live, "cranberry") == ["start.md"], "a temp+rename save")
    assert hits(live, "present") == []
    assert live.counts() == {"en": 1}  # the temp file itself is never indexed


def test_rename_and_folder_moves(ws: Workspace, live: NoteIndex) -> None:
    vault = ws.vault_dir("en")
    put(ws, "a/one.md", "damson one")
    put(ws, "a/b/two.md", "damson two")
    eventually(lambda: hits(live, "damson") == ["a/b/two.md", "a/one.md"], "new notes")
    os.replace(vault / "a" / "one.md", vault / "a" / "uno.md")
    eventually(lambda: hits(live, "damson") == ["a/b/two.md", "a/uno.md"], "a renamed note")
    os.replace(vault / "a", vault / "z")
    eventually(lambda: hits(live, "damson") == ["z/b/two.md", "z/uno.md"], "a moved folder")
    shutil.rmtree(vault / "z")
    eventually(lambda: hits(live, "damson") == [], "a deleted folder")


def test_many_files_at_once_like_git_checkout(
    ws: Workspace, live: NoteIndex, tmp_path: Path
) -> None:
    staging = tmp_path / "staging"
    for i in range(120):
        (staging / f"d{i % 6}").mkdir(parents=True, exist_ok=True)
        (staging / f"d{i % 6}" / f"n{i}.md").write_text(f"elderberry {i}")
    shutil.move(str(staging / "d0"), ws.vault_dir("en") / "d0")  # a folder moved in whole
    for i in range(1, 6):
        shutil.copytree(staging / f"d{i}", ws.vault_dir("en") / f"d{i}")
    eventually(lambda: live.counts().get("en") == 121, "120 new notes")
    assert len(hits(live, "elderberry")) == 100  # the search limit


def test_ignores_dot_files_assets_and_new_langs_work(ws: Workspace, live: NoteIndex) -> None:
    put(ws, ".hidden.md", "fig")
    put(ws, ".obsidian/workspace.md", "fig")
    put(ws, "x.md.assets/y.md", "fig")
    put(ws, "x.md.assets/y.txt", "fig")
    put(ws, "notes.html", "fig")
    put(ws, "new.md", "fig in a new lang", lang="ja")
    eventually(lambda: hits(live, "fig", lang="ja") == ["new.md"], "a new lang's note")
    put(ws, "memories/notes.txt", "fig")  # text files are indexed like notes
    eventually(lambda: hits(live, "fig") == ["memories/notes.txt"], "a text file")


def test_close_stops_everything(ws: Workspace) -> None:
    index = NoteIndex(ws)
    index.open()
    index.start_background()
    index.close()
    put(ws, "after.md", "late")
    assert index._keeper is None and index._watcher is None
