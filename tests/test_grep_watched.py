"""grep while the watcher runs: files it vouches for are passed over without a stat, and
the result is still exact right after changes made outside the tools (no waiting: the
watcher's barrier makes every change made before the grep known to it)."""

from __future__ import annotations

import os
import random
import re
import shutil
import sys
import threading
import time
from collections.abc import Iterator

import pytest
from test_grep_exact import _brute_force, _change_behind_the_index, _literals, _matches, _vault

from indexer.index.service import NoteIndex
from indexer.vault.sandbox import Sandbox
from indexer.vault.vault import Vault
from shared.workspace import Workspace

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="inotify's barrier")


def _settled(index: NoteIndex) -> None:
    deadline = time.monotonic() + 10
    while index.changed_since_indexed("en") != frozenset():
        assert time.monotonic() < deadline, "the watcher never settled"
        time.sleep(0.02)


@pytest.fixture
def live(ws: Workspace) -> Iterator[tuple[NoteIndex, Vault]]:
    index = NoteIndex(ws, debounce=0.02, flush_delay=2.0)  # appends wait for a reader
    index.open()
    vault = Vault(Sandbox(ws), max_file_bytes=1 << 20)
    vault.index_sync = index
    vault.grep_planner = index.grep_plan
    yield index, vault
    index.close()


def _start(index: NoteIndex) -> None:
    index.start_background()
    deadline = time.monotonic() + 10
    while not index.ready:
        assert time.monotonic() < deadline, "the start-up reconcile never ended"
        time.sleep(0.02)


def test_grep_is_exact_at_once_after_outside_changes(
    ws: Workspace, live: tuple[NoteIndex, Vault]
) -> None:
    index, vault = live
    rng = random.Random(16)
    root = _vault(ws, rng)
    _start(index)
    _settled(index)  # idle: the watcher vouches for every indexed file
    time.sleep(0.05)  # a clock tick: same-size edits get another mtime
    _change_behind_the_index(root, rng)
    # No waiting: each grep's barrier sees what the changes above did.
    for literal in _literals(root, rng)[:25]:
        expected = _brute_force(root, re.compile(re.escape(literal)))
        assert _matches(vault.grep("en", literal, fixed=True, limit=10_000)) == expected, literal
    _settled(index)
    zebra = {path for path, _, _ in _matches(vault.grep("en", "zebra", fixed=True))}
    assert len(zebra) == 8  # binary.md (not UTF-8) too


def test_edits_of_every_kind_then_grep_at_once(
    ws: Workspace, live: tuple[NoteIndex, Vault]
) -> None:
    index, vault = live
    root = ws.vault_dir("en")
    (root / "d").mkdir(parents=True)
    for n in range(60):
        (root / ("d" if n % 2 else "") / f"n{n}.md").write_text(f"note {n} quiet text\n")
    _start(index)
    rng = random.Random(7)
    for round_ in range(40):
        _settled(index) if round_ % 4 == 0 else None  # now idle, now mid-change
        word = f"needle{round_}"
        n = rng.randrange(60)
        path = root / ("d" if n % 2 else "") / f"n{n}.md"
        how = rng.choice(["append", "rewrite", "same-size", "editor", "new", "rename-in"])
        if how == "append":
            with path.open("a") as out:
                out.write(f"{word}\n")
        elif how == "rewrite":
            path.write_text(f"rewritten with {word} inside\n")
        elif how == "same-size":
            text = path.read_text()
            path.write_text(text[: -len(word) - 1] + word + "\n" if len(text) > 20 else word)
        elif how == "editor":
            temp = path.with_name(f".{path.name}.swp{round_}")
            temp.write_text(f"saved by an editor: {word}\n")
            os.replace(temp, path)
        elif how == "new":
            (root / "d" / f"new{round_}.md").write_text(f"a new note {word}\n")
        else:
            outside = ws.root / f"outside{round_}.md"
            outside.write_text(f"moved in: {word}\n")
            os.replace(outside, root / f"moved{round_}.md")
        found = vault.grep("en", word, fixed=True)["matches"]
        assert found and all(word in m["text"] for m in found), (how, found)
        assert _matches(vault.grep("en", word, fixed=True)) == _brute_force(
            root, re.compile(word)
        ), how


def test_tool_appends_not_flushed_are_read(ws: Workspace, live: tuple[NoteIndex, Vault]) -> None:
    """An append marks its note for a later flush: once the watcher has taken the
    append's own events, only that mark keeps grep from trusting the stale row."""
    index, vault = live
    vault.write("en", "events/day.md", "# Day\n")
    _start(index)
    watcher = index._watcher
    assert watcher is not None
    for i in range(10):
        vault.append("en", "events/day.md", f"\nevent {i} happened\n")
        if i % 2:  # wait until the watcher is done with it, the flush not yet
            deadline = time.monotonic() + 5
            while watcher.pending("en") or watcher.pending("en") is None:
                assert time.monotonic() < deadline
                time.sleep(0.005)
            assert "events/day.md" in index._tool.unflushed("en")
        found = vault.grep("en", f"event {i} happened", fixed=True)["matches"]
        assert [m["path"] for m in found] == ["events/day.md"], i


def test_the_watcher_vouches_only_when_it_can(ws: Workspace, live: tuple[NoteIndex, Vault]) -> None:
    index, vault = live
    root = ws.vault_dir("en")
    root.mkdir(parents=True)
    (root / "a.md").write_text("alpha\n")
    assert index.changed_since_indexed("en") is None  # no watcher yet
    _start(index)
    _settled(index)
    (root / "a.md").write_text("alpha changed\n")
    changed = index.changed_since_indexed("en")
    assert changed is None or "a.md" in changed  # known at once, or a folder is pending
    _settled(index)
    (root / "sub").mkdir()
    assert index.changed_since_indexed("en") is None  # a new folder: not file by file
    _settled(index)
    index.mark_behind("a test: events were lost")
    assert index.changed_since_indexed("en") is None
    _settled(index)  # the reconcile caught up
    assert vault.grep("en", "alpha", fixed=True)["matches"][0]["text"] == "alpha changed"


def test_a_linked_vault_is_never_vouched_for(ws: Workspace, live: tuple[NoteIndex, Vault]) -> None:
    index, vault = live
    real = ws.root / "elsewhere"
    real.mkdir()
    (real / "a.md").write_text("linked alpha\n")
    ws.vault_dir("en").parent.mkdir(parents=True)
    ws.vault_dir("en").symlink_to(real)
    _start(index)
    assert index.changed_since_indexed("en") is None
    (real / "a.md").write_text("linked omega\n")  # read: its stat is compared
    assert vault.grep("en", "omega", fixed=True)["matches"][0]["path"] == "a.md"


def test_a_hard_linked_note_edited_through_its_other_name_is_read(
    ws: Workspace, live: tuple[NoteIndex, Vault]
) -> None:
    """An edit through another name of a file makes no event in the vault's folder:
    grep never takes the watcher's word for a file with other names."""
    index, vault = live
    root = ws.vault_dir("en")
    root.mkdir(parents=True)
    (root / "linked.md").write_text("alpha before\n")
    (root / "plain.md").write_text("alpha plain\n")
    os.link(root / "linked.md", ws.root / "other-name.md")
    _start(index)
    time.sleep(0.05)
    changed = index.changed_since_indexed("en")
    assert changed is not None and "linked.md" in changed and "plain.md" not in changed
    (ws.root / "other-name.md").write_text("omega after\n")  # no event in the vault
    assert [m["path"] for m in vault.grep("en", "omega", fixed=True)["matches"]] == ["linked.md"]
    os.unlink(ws.root / "other-name.md")
    (root / "linked.md").write_text("back to one name\n")  # an event: synced, unlinked
    _settled(index)


def test_a_languages_folder_swapped_for_a_copy_is_not_vouched_for(
    ws: Workspace, live: tuple[NoteIndex, Vault]
) -> None:
    """A restore from a backup: the languages folder is swapped for a copy while a program
    still writes in the old one. inotify follows the old folder, and the check that
    notices the move ran only while the watcher was idle: grep and search missed edits in
    the live vault for as long as the old one kept changing."""
    index, vault = live
    root = ws.vault_dir("en")
    root.mkdir(parents=True)
    (root / "n.md").write_text("old text\n")
    _start(index)
    _settled(index)
    langs = ws.languages_dir
    shutil.copytree(langs, langs.parent / "languages.new")
    os.rename(langs, langs.parent / "languages.old")
    os.rename(langs.parent / "languages.new", langs)
    stop = threading.Event()

    def still_writing_old() -> None:
        n = 0
        while not stop.wait(0.2):
            (langs.parent / "languages.old/en/vault/log.md").write_text(f"line {n}\n")
            n += 1

    writer = threading.Thread(target=still_writing_old)
    writer.start()
    try:
        time.sleep(0.3)
        (root / "n.md").write_text("new zebra text\n")  # an edit in the live vault
        assert [m["path"] for m in vault.grep("en", "zebra", fixed=True)["matches"]] == ["n.md"]
        deadline = time.monotonic() + 10
        while not index.search("en", "zebra")["results"]:
            assert time.monotonic() < deadline, "the swap was never noticed"
            time.sleep(0.1)
    finally:
        stop.set()
        writer.join()
