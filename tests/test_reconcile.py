"""Start-up reconcile: files changed while the indexer was down; unchanged files cost a stat."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers.indexer_process import wait_for

from indexer.index import batch_sync, reconcile, whole_pass
from indexer.index.befores import Befores
from indexer.index.reconcile import is_note_path, walk_notes
from indexer.index.service import NoteIndex
from indexer.vault.fsops import etag_of
from shared.workspace import Workspace


def put(ws: Workspace, rel: str, text: str, lang: str = "en") -> Path:
    path = ws.vault_dir(lang) / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def found(index: NoteIndex, query: str, lang: str = "en") -> list[str]:
    return sorted(hit["path"] for hit in index.search(lang, query, limit=100)["results"])


def test_reconcile_after_changes_while_down(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "ws")
    keep = put(ws, "keep.md", "steady")
    edit = put(ws, "dir/edit.md", "before")
    gone = put(ws, "gone.md", "vanishing")
    moved = put(ws, "old/name.md", "traveller")
    put(ws, "other.md", "lang one", lang="ja")
    index = NoteIndex(ws)
    index.open()
    first = index.reconcile()
    assert (first.scanned, first.added) == (5, 5)
    index.close()

    edit.write_text("after")
    gone.unlink()
    (ws.vault_dir("en") / "new").mkdir()
    os.replace(moved, ws.vault_dir("en") / "new" / "name.md")
    put(ws, "added.md", "newcomer")
    (ws.vault_dir("ja") / "other.md").unlink()

    index = NoteIndex(ws)
    index.open()
    stats = index.reconcile()
    assert (stats.scanned, stats.added, stats.updated, stats.removed, stats.unchanged) == (
        4, 2, 1, 3, 1,
    )  # fmt: skip
    assert found(index, "before") == []
    assert found(index, "after") == ["dir/edit.md"]
    assert found(index, "vanishing") == []
    assert found(index, "traveller") == ["new/name.md"]
    assert found(index, "newcomer") == ["added.md"]
    assert index.counts() == {"en": 4}
    assert keep.read_text() == "steady"
    index.close()


def test_unchanged_files_are_skipped_and_hash_decides(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "ws")
    paths = [put(ws, f"n{i}.md", f"note {i}") for i in range(10)]
    index = NoteIndex(ws)
    index.open()
    index.reconcile()
    again = index.reconcile()
    assert (again.scanned, again.unchanged, again.added, again.updated) == (10, 10, 0, 0)
    # Same content, new mtime: read once, hash says unchanged, the stat is remembered.
    stat = paths[0].stat()
    os.utime(paths[0], ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    touched = index.reconcile()
    assert (touched.unchanged, touched.updated) == (10, 0)
    plan = index.grep_plan("en", "note 0", True, False)
    assert plan is not None and plan.indexed["n0.md"][1] == stat.st_mtime_ns + 10**9
    index.close()


def test_a_copied_workspace_reads_each_file_once_and_parses_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``cp -a`` keeps sizes and mtimes but gives every file a new ctime: the start took
    the index for a fresh one (no file unchanged), parsed every note for its fast path,
    then read each again for its row (10,000 notes: 9.8 -> 1.2 s)."""
    ws = Workspace(tmp_path / "ws")
    for i in range(40):
        put(ws, f"d{i % 4}/n{i}.md", f"---\ntitle: T{i}\n---\nbody {i}\n")
    index = NoteIndex(ws)
    index.open()
    index.reconcile()
    index.close()
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-a", str(ws.root), str(copy)], check=True)
    parsed: list[str] = []
    reads: list[str] = []

    def counted(real: Callable, calls: list[str]) -> Callable:
        def call(*args: Any) -> Any:
            calls.append(str(args[-1]))
            return real(*args)

        return call

    parse, read = reconcile.parse_note, reconcile.read_note
    for module in (reconcile, whole_pass):
        monkeypatch.setattr(module, "parse_note", counted(parse, parsed))
    for module in (reconcile, whole_pass, batch_sync):
        monkeypatch.setattr(module, "read_note", counted(read, reads))
    index = NoteIndex(Workspace(copy))
    index.open()
    stats = index.reconcile()
    assert (stats.unchanged, stats.added, stats.updated) == (40, 0, 0)
    assert parsed == [] and sorted(reads) == sorted(set(reads)) and len(reads) == 40
    assert found(index, "T7") == ["d3/n7.md"]
    again = index.reconcile()  # (the new ctimes were kept: a stat each)
    assert again.unchanged == 40 and len(reads) == 40
    index.close()


def test_rebuild_from_scratch_reports_progress(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "ws")
    for i in range(30):
        put(ws, f"d{i % 3}/n{i}.md", f"---\ntitle: T{i}\n---\nbody {i}")
    index = NoteIndex(ws)
    index.open()
    index.reconcile()
    seen: list[tuple[int, int]] = []
    stats = index.rebuild(lambda done, total: seen.append((done, total)))
    assert stats.added == 30
    assert seen[-1] == (30, 30)
    assert index.counts() == {"en": 30}
    assert found(index, "T7") == ["d1/n7.md"]
    index.close()


def test_walk_and_note_paths(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "ws")
    put(ws, "a.md", "x")
    put(ws, "sub/b.md", "x")
    put(ws, ".obsidian/c.md", "x")
    put(ws, "a.md.assets/d.md", "x")
    put(ws, "e.txt", "x")
    put(ws, "sub/.overview.md", "x")  # a folder summary: indexed for search(type="summary")
    put(ws, "sub/.other.md", "x")
    put(ws, ".obsidian/.overview.md", "x")
    put(ws, "sub/..overview.md.tmp.0123", "x")
    put(ws, "f.html", "x")
    put(ws, "sub/g.json", "x")
    put(ws, "a.md.assets/h.txt", "x")
    put(ws, "a.md.assets/.overview.md", "x")  # (no folder summary: none is made there)
    put(ws, "a.md.assets/p.png", "x")
    assert sorted(f.rel for f in walk_notes(ws, "en")) == [
        "a.md",
        "a.md.assets/d.md",  # another program's notes in a note's images folder: notes
        "a.md.assets/h.txt",
        "e.txt",
        "sub/.overview.md",
        "sub/b.md",
        "sub/g.json",
    ]
    assert is_note_path("a/b.md")
    assert is_note_path(".overview.md") and is_note_path("a/.overview.md")
    assert not is_note_path(".a/.overview.md") and not is_note_path("a/.overview.md/b.md")
    for suffix in ("txt", "xml", "json", "yaml", "csv"):
        assert is_note_path(f"memories/a.{suffix}")
    assert not is_note_path("a.yml") and not is_note_path("a.TXT") and not is_note_path("a")
    assert not is_note_path("a/.b.txt")
    assert not is_note_path("a/.b.md")
    assert not is_note_path(".a/b.md")
    assert is_note_path("a.md.assets/b.md") and is_note_path("x.assets/deep/b.txt")
    assert not is_note_path("a.md.assets/.overview.md")
    assert not is_note_path("a//b.md")
    assert not is_note_path("a.png")


def test_files_dated_past_2262_or_before_1970_are_indexed(tmp_path: Path) -> None:
    """A file dated after 2262 has a time in nanoseconds past 64 bits: SQLite refused
    its row, and the reconcile stopped there at every try (no later note was indexed);
    a watcher batch holding it lost its other notes too."""
    ws = Workspace(tmp_path / "ws")
    far = 13569465600 * 10**9  # 2400-01-01
    future = put(ws, "a-future.md", "a note from the future: quokka")
    os.utime(future, ns=(far, far))
    past = put(ws, "b-past.md", "a note before 1970: wombat")
    os.utime(past, ns=(-(10**18), -(10**18)))
    for i in range(5):
        put(ws, f"n{i}.md", f"plain note {i}: numbat")
    index = NoteIndex(ws, debounce=0.02)
    index.open()
    try:
        stats = index.reconcile()
        assert (stats.scanned, stats.added) == (7, 7)
        assert found(index, "quokka") == ["a-future.md"]
        assert found(index, "wombat") == ["b-past.md"]
        assert len(found(index, "numbat")) == 5
        assert index.reconcile().unchanged == 7  # the stored time compares equal
        index.start_background()
        future.write_text("edited while served: dingo")
        os.utime(future, ns=(far + 1, far + 1))
        put(ws, "later.md", "saved in the same moment: bilby")
        wait_for(lambda: found(index, "dingo") == ["a-future.md"], 15, what="the edit")
        wait_for(lambda: found(index, "bilby") == ["later.md"], 15, what="the other note")
        assert not index.partial
    finally:
        index.close()


def test_befores_keep_only_exact_texts_history_lacks_within_their_room(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The texts an outside change replaced are kept for history only when the row held
    the file's exact text (its hash says so), history has no version, and the pass's
    bound of bytes has room (a warning, once, past it)."""
    text = "---\ntitle: A\n---\n# A\n"
    head, body = text[:16], text[16:]
    befores = Befores(lambda lang, path: path != "known.md", room=2 * len(text))
    digest = etag_of(text.encode())
    kept = [
        befores.keep("en", "known.md", head, body, True, digest),
        befores.keep("en", "big.md", "", "", True, etag_of(b"x" * 10)),  # (not indexed)
        befores.keep("en", "a.md", head, body, True, digest),
        befores.keep("en", "whole.md", text, "", False, digest),
        befores.keep("en", "a.md", head, body, True, digest),  # (kept once)
        befores.keep("en", "c.md", head, body, True, digest),
        befores.keep("en", "d.md", head, body, True, digest),
    ]
    assert kept == [None, None, text.encode(), text.encode(), None, None, None]
    assert befores.kept == {("en", "a.md"), ("en", "whole.md")}
    assert caplog.text.count("changed at once from outside") == 1
