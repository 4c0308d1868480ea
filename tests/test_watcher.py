"""External edits picked up by the real watchdog observer (polling with deadlines)."""

from __future__ import annotations

import itertools
import os
import shutil
import sys
import threading
import time
import unicodedata
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from watchdog.events import FileSystemEvent, FileSystemEventHandler

from indexer.index.service import NoteIndex
from indexer.index.watch_supervisor import Supervisor
from indexer.index.watcher import COST_SHARE, VaultWatcher
from indexer.vault import atomic
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


def test_a_note_named_in_nfd_in_a_watched_folder_is_indexed(ws: Workspace, live: NoteIndex) -> None:
    """As a Mac (or its rsync) names it: the watcher knows the note by its NFC name, which
    is not on disk; the note was dropped as gone, and search never found it."""
    put(ws, "items/plain.md", "plain grapefruit")
    eventually(lambda: hits(live, "grapefruit") == ["items/plain.md"], "a folder watched")
    path = put(ws, "items/" + unicodedata.normalize("NFD", "café.md"), "decomposed mango")
    eventually(lambda: hits(live, "mango") == ["items/café.md"], "a note named in NFD")
    path.write_text("decomposed papaya")
    eventually(lambda: hits(live, "papaya") == ["items/café.md"], "its edit")
    path.unlink()
    eventually(lambda: hits(live, "papaya") == [], "its deletion")


def test_search_is_partial_while_a_copied_tree_is_indexed(ws: Workspace, live: NoteIndex) -> None:
    """SPEC: partial is true while the index is still catching up with disk. A copy of
    thousands of notes was reported complete (partial false) while half indexed."""
    staged = ws.root / "staged"
    for n in range(2000):
        put_at = staged / f"d{n % 20}" / f"n{n}.md"
        put_at.parent.mkdir(parents=True, exist_ok=True)
        put_at.write_text(f"copied kiwifruit {n}\n")
    os.rename(staged, ws.vault_dir("en") / "copied")  # the whole tree at once
    seen: list[tuple[int, bool]] = []
    deadline = time.monotonic() + 60
    while not seen or seen[-1] != (2000, False):
        assert time.monotonic() < deadline, seen[-5:]
        found = live.search("en", "kiwifruit", limit=1)
        seen.append((found["total"], found["partial"]))
        time.sleep(0.005)
    incomplete = [partial for total, partial in seen if total < 2000]
    assert any(incomplete), "the copy was being indexed, and search said partial: false"
    assert not any(0 < total < 2000 and not partial for total, partial in seen)


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


def test_a_folder_moved_into_new_folders_stays_watched(ws: Workspace, live: NoteIndex) -> None:
    """``Q/a`` moved to ``R/x/a`` with ``R/x`` made just before (as the ``move`` tool
    does): the walk of the new ``R/`` watched ``R/x/a`` before the move was read (the
    kernel gives a folder one watch), and the move then removed that watch with the old
    place's: edits below the moved folder were never seen (watchdog 7.1.1)."""
    vault = ws.vault_dir("en")
    put(ws, "Q/a/top.md", "quince top")
    put(ws, "Q/a/sub/low.md", "quince low")
    eventually(lambda: hits(live, "quince") == ["Q/a/sub/low.md", "Q/a/top.md"], "new notes")
    (vault / "R" / "x").mkdir(parents=True)
    os.replace(vault / "Q" / "a", vault / "R" / "x" / "a")
    moved = ["R/x/a/sub/low.md", "R/x/a/top.md"]
    eventually(lambda: hits(live, "quince") == moved, "the moved folder")
    time.sleep(1.0)  # (the unpaired move out, held back 0.5 s by watchdog, is read)
    for rel, word in (("top.md", "medlar"), ("sub/low.md", "loquat")):
        with open(vault / "R/x/a" / rel, "a", encoding="utf-8") as note:
            note.write(f"\n{word}\n")
        eventually(lambda w=word, r=rel: hits(live, w) == [f"R/x/a/{r}"], f"the edit {word}")


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


def test_ignores_dot_files_and_new_langs_work(ws: Workspace, live: NoteIndex) -> None:
    put(ws, ".hidden.md", "fig")
    put(ws, ".obsidian/workspace.md", "fig")
    put(ws, "x.md.assets/.overview.md", "---\ntype: summary\n---\nfig\n")
    put(ws, "notes.html", "fig")
    put(ws, "new.md", "fig in a new lang", lang="ja")
    eventually(lambda: hits(live, "fig", lang="ja") == ["new.md"], "a new lang's note")
    put(ws, "memories/notes.txt", "fig")  # text files are indexed like notes
    eventually(lambda: hits(live, "fig") == ["memories/notes.txt"], "a text file")
    put(ws, "x.md.assets/y.md", "fig")  # a note in a note's images folder: a note
    put(ws, "x.md.assets/y.txt", "fig")
    want = ["memories/notes.txt", "x.md.assets/y.md", "x.md.assets/y.txt"]
    eventually(lambda: sorted(hits(live, "fig")) == want, "the notes in *.assets/")


def test_close_stops_everything(ws: Workspace) -> None:
    index = NoteIndex(ws)
    index.open()
    index.start_background()
    index.close()
    put(ws, "after.md", "late")
    assert index._keeper is None and index._watcher is None


class _Recorder(FileSystemEventHandler):
    def __init__(self) -> None:
        self.events: list[tuple[str, str, str]] = []

    def on_any_event(self, event: FileSystemEvent) -> None:
        dest = getattr(event, "dest_path", "") or ""
        self.events.append((event.event_type, os.path.basename(event.src_path), dest))


@pytest.mark.skipif(sys.platform != "linux", reason="the filter is in the inotify observer")
def test_our_temp_files_reach_the_watcher_only_as_their_rename(ws: Workspace) -> None:
    """A write's temp file makes 5 events; the 3 that are not its rename are dropped
    before watchdog builds them. An editor's temp file of another name still gets all."""
    vault = ws.vault_dir("en")
    vault.mkdir(parents=True)
    recorder = _Recorder()
    supervisor = Supervisor(ws.languages_dir, recorder, lambda reason: None)
    supervisor.start()
    try:
        fd = os.open(vault, os.O_RDONLY | os.O_DIRECTORY)
        try:
            atomic.replace_at(fd, "ours.md", b"written by a tool")
        finally:
            os.close(fd)
        save_like_an_editor(vault / "theirs.md", "saved by an editor")
        eventually(lambda: any(e[0] == "moved" and "theirs" in e[2] for e in recorder.events), "")
    finally:
        supervisor.stop()
    ours = [e for e in recorder.events if e[1].startswith(".ours.md.tmp.")]
    assert [kind for kind, _, dest in ours] == ["moved"]
    assert ours[0][2].endswith("/ours.md")
    theirs = {kind for kind, name, _ in recorder.events if name == ".theirs.md.tmp.abc123"}
    assert {"created", "modified", "closed", "moved"} <= theirs


@pytest.mark.skipif(sys.platform != "linux", reason="the direct path is in the inotify observer")
def test_file_events_go_straight_to_on_path_and_folder_events_to_the_handler_too(
    ws: Workspace,
) -> None:
    """Created, written, closed, deleted and moved files reach ``on_path`` from the
    reader thread only (a move as its two halves, each naming its path: watchdog's
    pairing of them, a delayed queue and two more threads, cost more CPU than a write's
    own work); folders reach it too, and still come as watchdog events (their watches
    move with them); a file's attributes changed (``chmod``) count as a change (a note
    the indexer could not read is seen once it can)."""
    vault = ws.vault_dir("en")
    vault.mkdir(parents=True)
    recorder = _Recorder()
    told: list[tuple[str, str]] = []

    def on_path(kind: str, path: str, is_folder: bool) -> None:
        if not is_folder:
            told.append((kind, path))

    supervisor = Supervisor(ws.languages_dir, recorder, lambda reason: None, on_path)
    supervisor.start()
    try:
        note = vault / "a.md"
        note.write_text("one")
        os.chmod(note, 0o600)
        (vault / "sub").mkdir()
        eventually(lambda: ("created", "sub", "") in recorder.events, "the folder")
        os.replace(note, vault / "sub" / "b.md")
        (vault / "sub" / "b.md").unlink()
        (vault / "sub").rename(vault / "moved")
        eventually(lambda: ("deleted", str(vault / "sub" / "b.md")) in told, "the deletion")
        eventually(lambda: any(e[0] == "moved" for e in recorder.events), "the folder's move")
    finally:
        supervisor.stop()
    assert told == [
        ("created", str(note)),
        ("modified", str(note)),
        ("closed", str(note)),
        ("modified", str(note)),  # the chmod
        ("moved", str(note)),
        ("moved", str(vault / "sub" / "b.md")),
        ("deleted", str(vault / "sub" / "b.md")),
    ]
    assert {kind for kind, _, _ in recorder.events} <= {"moved", "created"}
    assert ("created", "sub", "") in recorder.events  # the folder
    assert ("moved", "sub", str(vault / "moved")) in recorder.events
    assert not [e for e in recorder.events if e[1] == "a.md"]  # (the file's move: on_path)


def test_the_watcher_sorts_direct_file_events_like_watchdog_events(ws: Workspace) -> None:
    applied: list[tuple[set, set]] = []
    watcher = VaultWatcher(ws, lambda files, folders: applied.append((files, folders)))
    vault = str(ws.vault_dir("en"))
    watcher.path_changed("modified", f"{vault}/a.md", False)
    watcher.path_changed("closed", f"{vault}/memories/n.txt", False)
    watcher.path_changed("created", f"{vault}/.a.md.tmp.0123456789abcdef", False)  # dot-file
    watcher.path_changed("modified", f"{vault}/x.md.assets/y.md", False)
    watcher.path_changed("modified", f"{vault}/x.md.assets/.overview.md", False)
    watcher.path_changed("modified", f"{vault}/page.html", False)
    watcher.path_changed("created", vault, False)  # a file where the vault folder was
    watcher.path_changed("modified", vault, False)  # written, not created: nothing to re-sync
    assert watcher._files == {("en", "a.md"), ("en", "memories/n.txt"), ("en", "x.md.assets/y.md")}
    assert watcher._folders == {("en", "")}


def test_a_linked_vault_is_watched_through_its_link_and_followed_when_relinked(
    ws: Workspace, tmp_path: Path
) -> None:
    """An operator may link ``<lang>/vault`` elsewhere (the sandbox follows it): edits
    there are seen, and a link pointed at another folder is followed."""
    first, second = tmp_path / "first", tmp_path / "second"
    for real in (first, second):
        (real / "sub").mkdir(parents=True)
    (first / "a.md").write_text("apricot in the first\n")
    (second / "b.md").write_text("blueberry in the second\n")
    link = ws.vault_dir("en")
    link.parent.mkdir(parents=True)
    link.symlink_to(first)
    index = NoteIndex(ws, debounce=0.02)
    index.open()
    index.start_background()
    try:
        eventually(lambda: index.ready, "the start-up reconcile")
        assert hits(index, "apricot") == ["a.md"]
        (first / "sub" / "new.md").write_text("cranberry added behind the link\n")
        eventually(lambda: hits(index, "cranberry") == ["sub/new.md"], "a note in the target")
        temp = link.with_name("vault.new")
        temp.symlink_to(second)
        os.replace(temp, link)  # pointed elsewhere at once, as `ln -sfn` does
        eventually(lambda: hits(index, "blueberry") == ["b.md"], "the new target's notes")
        assert hits(index, "apricot") == [] and hits(index, "cranberry") == []
        (second / "sub" / "late.md").write_text("damson in the second\n")
        eventually(lambda: hits(index, "damson") == ["sub/late.md"], "an edit in the new target")
        (first / "c.md").write_text("elderberry in the old target\n")
        time.sleep(0.3)
        assert hits(index, "elderberry") == []  # the old target is not watched any more
    finally:
        index.close()


@pytest.mark.skipif(sys.platform != "linux", reason="inotify")
def test_the_barrier_answers_at_once_and_no_once_its_folder_is_gone(tmp_path: Path) -> None:
    from watchdog.observers.inotify_c import InotifyFD

    from indexer.index.barrier import Barrier

    reader = InotifyFD()
    reader.start()
    try:
        folder = tmp_path / "watch"
        folder.mkdir()
        (folder / "b7").write_text("")  # a crash's ticket is removed
        barrier = Barrier(reader, folder)
        assert list(folder.iterdir()) == []
        started = time.monotonic()
        assert all(barrier.wait(5) for _ in range(20))
        assert time.monotonic() - started < 2 and list(folder.iterdir()) == []
        folder.rmdir()
        assert barrier.wait(0.5) is False
    finally:
        reader.stop()
        reader.join()


def test_an_edit_that_keeps_size_and_mtime_is_indexed(ws: Workspace, live: NoteIndex) -> None:
    """``cp -p``, ``rsync -a`` and ``touch -r`` can leave size and mtime as they were."""
    path = ws.vault_dir("en") / "start.md"
    before = path.stat()
    path.write_text("plumcot at start")  # as long as "present at start"
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size
    eventually(lambda: hits(live, "plumcot") == ["start.md"], "an edit keeping size and mtime")
    assert hits(live, "present") == []


@pytest.mark.skipif(sys.platform != "linux", reason="inotify's barrier")
def test_a_folder_removed_right_after_a_tool_wrote_in_it_is_catching_up(ws: Workspace) -> None:
    """A tool's write excuses the events of its folders for a few seconds (it makes
    them); another program deleting or moving that folder away right after was taken
    for the tool's own too: searches said whole while its notes were still listed."""
    hold = threading.Event()
    applied: list[set[tuple[str, str]]] = []

    def apply(files: set[tuple[str, str]], folders: set[tuple[str, str]]) -> None:
        applied.append(folders)
        hold.wait(10)

    vault = ws.vault_dir("en")
    (vault / "a").mkdir(parents=True)
    (vault / "b").mkdir()
    watcher = VaultWatcher(ws, apply, debounce=0.2, max_delay=1.0)
    watcher.start()
    try:
        for folder in ("a", "b"):
            (vault / folder / "n0.md").write_text("a tool's note\n")
            watcher.tools_changed("en", f"{folder}/n0.md")
        assert watcher.caught_up(5) and not watcher.catching_up()
        hold.set()
        eventually(lambda: bool(applied), "the tools' writes applied")
        hold.clear()
        shutil.rmtree(vault / "a")  # another program, at once
        os.rename(vault / "b", ws.root / "b-moved-out")
        assert watcher.caught_up(5)
        assert watcher.catching_up()  # heard, not applied yet
        eventually(lambda: len(applied) == 2, "the removals' batch")
        assert watcher.catching_up()  # being applied
        hold.set()
        eventually(lambda: not watcher.catching_up(), "the removals applied")
    finally:
        hold.set()
        watcher.stop()


@pytest.mark.skipif(sys.platform != "linux", reason="inotify's barrier")
def test_catching_up_from_the_first_event_heard_until_all_is_applied(ws: Workspace) -> None:
    """``partial`` comes from here: true from the moment a copied folder is heard (not
    only once its batch is being applied), until every change heard since is applied;
    a tool's write into a new folder, which the tool indexes itself, is not catching up."""
    batches: list[set[tuple[str, str]]] = []
    hold = threading.Event()
    hold.set()

    def apply(files: set[tuple[str, str]], folders: set[tuple[str, str]]) -> None:
        batches.append(folders)
        hold.wait(10)

    vault = ws.vault_dir("en")
    vault.mkdir(parents=True)
    watcher = VaultWatcher(ws, apply, debounce=0.3, max_delay=1.0)
    watcher.start()
    try:
        (vault / "own").mkdir()  # as a tool's write into a new folder does
        (vault / "own/x.md").write_text("a tool's note\n")
        watcher.tools_changed("en", "own/x.md")
        assert watcher.caught_up(5)
        assert not watcher.catching_up()
        eventually(lambda: bool(batches), "the tool's write applied")
        hold.clear()
        staged = ws.root / "staged"
        staged.mkdir()
        for n in range(5):
            (staged / f"n{n}.md").write_text(f"copied {n}\n")
        os.rename(staged, vault / "copied")
        assert watcher.caught_up(5)
        assert len(batches) == 1 and watcher.catching_up()  # heard, not applied yet
        eventually(lambda: len(batches) == 2, "the copy's batch")
        assert watcher.catching_up()  # being applied
        hold.set()
        eventually(lambda: not watcher.catching_up(), "the copy applied")
    finally:
        hold.set()
        watcher.stop()


def test_a_slow_batch_is_followed_by_a_rest_of_a_few_times_its_cost(ws: Workspace) -> None:
    """A big note saved every half second by another program (1 s to index 4 MiB, under
    the index's write lock) kept a core busy and every tool's write waiting."""
    spans: list[tuple[float, float]] = []

    def apply(files: set[tuple[str, str]], folders: set[tuple[str, str]]) -> None:
        started = time.monotonic()
        time.sleep(0.25)  # as a big note's words and trigrams take
        spans.append((started, time.monotonic()))

    vault = ws.vault_dir("en")
    vault.mkdir(parents=True)
    watcher = VaultWatcher(ws, apply, debounce=0.02, max_delay=0.1)
    watcher.start()
    try:
        until = time.monotonic() + 2.5
        n = 0
        while time.monotonic() < until:
            (vault / "big.md").write_text(f"saved {n}\n")
            n += 1
            time.sleep(0.05)
        time.sleep(1.0)  # the last save's batch, after its rest
    finally:
        stopped = time.monotonic()
        watcher.stop()  # (applies what is left at once)
    applied = [span for span in spans if span[0] < stopped]
    rests = [later[0] - earlier[1] for earlier, later in itertools.pairwise(applied)]
    assert rests and min(rests) >= 0.25 * COST_SHARE - 0.05, rests
    assert len(spans) <= 4  # (about 8 without the rests)


def test_changes_held_back_behind_a_batch_or_its_rest_make_searches_partial(
    ws: Workspace,
) -> None:
    """A save heard while a slow batch was applied (or while the watcher rested after
    it) waited up to seconds, and searches said they were whole meanwhile."""
    started = threading.Event()

    def apply(files: set[tuple[str, str]], folders: set[tuple[str, str]]) -> None:
        started.set()
        time.sleep(0.3)

    vault = ws.vault_dir("en")
    vault.mkdir(parents=True)
    watcher = VaultWatcher(ws, apply, debounce=0.02, max_delay=0.1)
    watcher.start()
    try:
        (vault / "big.md").write_text("a big note\n")
        assert started.wait(5)
        (vault / "save.md").write_text("a small save\n")  # heard while big.md is applied
        assert watcher.caught_up(5)
        assert watcher.catching_up()
        eventually(lambda: not watcher.catching_up(), "the save applied after the rest")
    finally:
        watcher.stop()


def test_a_stop_says_whether_the_batch_being_applied_ended(ws: Workspace) -> None:
    """The server leaves its clean mark only when the watcher's batch ended: one cut
    short (100,000 outside changes at a SIGTERM) went on applying after the index and
    history closed, and the next start, finding the mark, never told history of it."""
    hold = threading.Event()
    applying = threading.Event()

    def apply(files: set[tuple[str, str]], folders: set[tuple[str, str]]) -> None:
        applying.set()
        hold.wait(10)

    ws.vault_dir("en").mkdir(parents=True)
    watcher = VaultWatcher(ws, apply, debounce=0.02, max_delay=0.1)
    watcher.start()
    try:
        put(ws, "a.md", "# A\n")
        assert applying.wait(10)
        assert watcher.stop(timeout=0.2) is False  # still applying
    finally:
        hold.set()
    idle = VaultWatcher(ws, apply, debounce=0.02, max_delay=0.1)
    idle.start()
    assert idle.stop(timeout=5) is True


def test_a_batch_the_index_closing_cuts_is_taken_back_and_found_at_the_next_start(
    ws: Workspace,
) -> None:
    """A batch of outside changes stops when the index closes (not after its 10 s): it
    is rolled back whole, and the next start's reconcile syncs its files."""
    index = NoteIndex(ws)
    index.open()
    index.reconcile()
    names = {("en", f"n{n}.md") for n in range(50)}
    for _, rel in names:
        put(ws, rel, f"# {rel}\n\nokapi\n")
    index._stopping.set()  # (what close does first)
    index._sync.apply_changes(names, set())
    assert index.search("en", "okapi")["total"] == 0  # taken back, whole
    index.close()
    again = NoteIndex(ws)
    again.open()
    try:
        again.reconcile()
        assert again.search("en", "okapi")["total"] == 50
    finally:
        again.close()
