"""kill -9 in the middle of writes: after a restart, history and files agree.

Four threads write and append to a few notes through the REST API as fast as they
can; the server is killed with SIGKILL mid-stream, then started again. Every write
the server acknowledged must have its version, no version may point at a missing
text, nothing may stay pending, and each file's newest version must be the file.
"""

from __future__ import annotations

import base64
import contextlib
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import httpx2
import pytest
from helpers.history import (
    check_history_consistent,
    history_store,
    history_versions,
    index_without_history,
)
from helpers.indexer_process import start_indexer, wait_for

from indexer.settings import Settings
from indexer.sqlite_lib import sqlite3
from indexer.vault.fsops import etag_of
from indexer.wiring import build_vault, open_history
from shared.errors import NotFoundError
from shared.workspace import Workspace

# Folder summaries are versions too; these tests count the notes' versions only.
NO_SUMMARIES = {"INDEXER_SUMMARIES": "0"}
MARKDOWN = {"Content-Type": "text/markdown"}

pytestmark = pytest.mark.e2e

THREADS = 4
PATHS = [f"items/n{i}.md" for i in range(5)]


def test_kill_9_during_writes_leaves_history_and_files_consistent(workspace: Path) -> None:
    server = start_indexer(workspace, env=NO_SUMMARIES)
    api = server.url.removesuffix("/mcp") + "/api/v1"
    acked: list[tuple[str, str]] = []
    stop = threading.Event()

    def writer(k: int) -> None:
        with httpx2.Client(base_url=api, timeout=10) as http:
            i = 0
            while not stop.is_set():
                path = PATHS[(k + i) % len(PATHS)]
                try:
                    if i % 3 == 2:
                        body = {"path": path, "content": f"\n- appended by {k}, {i}\n"}
                        reply = http.post("/en/append", json=body, params={"reason": "x"})
                    else:
                        text = f"# note {path}\n\nwritten by {k}, {i}\n" + "filler text " * 200
                        reply = http.put(
                            f"/en/notes/{path}",
                            content=text.encode(),
                            headers={"Content-Type": "text/markdown"},
                            params={"reason": f"entry:w{k}-{i} crash test"},
                        )
                except httpx2.HTTPError:
                    return  # the server is gone
                if reply.is_success:
                    acked.append((path, reply.json()["etag"]))
                i += 1

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(THREADS)]
    for thread in threads:
        thread.start()
    try:
        wait_for(lambda: len(acked) > 150, 60, what="some acknowledged writes")
        server.process.send_signal(signal.SIGKILL)
        server.process.wait()
    finally:
        stop.set()
        for thread in threads:
            thread.join(30)
    restarted = start_indexer(workspace, env=NO_SUMMARIES)
    try:
        with httpx2.Client(base_url=restarted.url.removesuffix("/mcp") + "/api/v1") as http:
            wait_for(lambda: http.get("/status").json()["index_ready"], 30, what="the reconcile")
        assert check_history_consistent(workspace) >= len(acked)
        for path in PATHS:
            recorded = {v["etag"] for v in history_versions(workspace, "en", path, 100_000)}
            missing = [etag for p, etag in acked if p == path and etag not in recorded]
            assert not missing, f"acknowledged writes of {path} without a version: {missing}"
    finally:
        restarted.stop()


def test_an_acknowledged_write_keeps_its_version_when_its_note_goes_while_down(
    workspace: Path,
) -> None:
    """A write's version stayed pending until the next history transaction: killed before
    one, the next start took a note made by a tool and then deleted (or moved away)
    while no indexer ran for a write that never happened, and dropped its version (the
    agent's text was gone for good)."""
    server = start_indexer(workspace, env=NO_SUMMARIES)
    api = server.url.removesuffix("/mcp") + "/api/v1"
    texts = {path: f"# {path}\n\nthe agent's text\n" for path in ("gone.md", "moved.md")}
    etags = {}
    with httpx2.Client(base_url=api, timeout=10) as http:
        for path, text in texts.items():
            reply = http.put(
                f"/en/notes/{path}",
                content=text.encode(),
                headers={"Content-Type": "text/markdown"},
                params={"reason": "entry:e1 crash test"},
            )
            assert reply.status_code == 201, reply.text
            etags[path] = reply.json()["etag"]
    server.process.send_signal(signal.SIGKILL)
    server.process.wait()
    root = Workspace(workspace).vault_dir("en")
    (root / "gone.md").unlink()
    (root / "moved.md").rename(root / "elsewhere.md")
    restarted = start_indexer(workspace, env=NO_SUMMARIES)
    try:
        for path, etag in etags.items():
            versions = history_versions(workspace, "en", path)
            assert [v["etag"] for v in versions if v["actor"] == "tool"] == [etag], versions
            assert versions[-1]["reason"] == "entry:e1 crash test"
    finally:
        restarted.stop()
    assert check_history_consistent(workspace) > 0


CRASH_AFTER_THE_RENAME = """
import os, sys
from pathlib import Path
from indexer.wiring import build_vault, open_history
from indexer.settings import Settings
from indexer.vault.sandbox import Place
from shared.workspace import Workspace

settings = Settings(workspace=Workspace(Path(sys.argv[1])))
vault = build_vault(settings, open_history(settings))
Place.commit = lambda self, data, **kw: os._exit(9)  # the first link rewrite: power cut
vault.move("en", "A", "deep/B")
"""


def test_a_folder_move_cut_short_after_its_rename_is_finished_at_the_next_start(
    workspace: Path,
) -> None:
    """The folder is renamed in one step, then each note whose links point out of it is
    rewritten: a crash between left the notes at their new place with links to the
    old one (broken images for good) and history naming bytes that were not on disk."""
    settings = Settings(workspace=Workspace(workspace))
    vault = build_vault(settings, open_history(settings))
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(32)).decode()
    vault.write("en", "img.md.assets/p.png", png, encoding="base64")
    for n in range(5):
        vault.write("en", f"A/n{n}.md", f"# n{n}\n![p](../img.md.assets/p.png)\n")
    vault.write("en", "A/plain.md", "# plain\nno links\n")
    assert vault.recorder.store is not None
    vault.recorder.store.close()
    crashed = subprocess.run(
        [sys.executable, "-c", CRASH_AFTER_THE_RENAME, str(workspace)], capture_output=True
    )
    assert crashed.returncode == 9, crashed.stderr
    moved = Workspace(workspace).vault_dir("en") / "deep/B"
    assert "](../img.md.assets/" in (moved / "n0.md").read_text()  # cut short: old links
    vault = build_vault(settings, open_history(settings))  # the next start recovers
    try:
        for n in range(5):
            assert "](../../img.md.assets/p.png)" in (moved / f"n{n}.md").read_text()
        assert vault.history("en", "deep/B/n0.md")["versions"][0]["op"] == "move"
    finally:
        assert vault.recorder.store is not None
        vault.recorder.store.close()
    assert check_history_consistent(workspace) > 0


def test_edits_indexed_while_history_was_not_listening_reach_history(workspace: Path) -> None:
    """Notes edited while no server ran, then indexed without history hearing of it, as
    by a start-up reconcile killed after its first batches (its changes are told at its
    end) or a crash between a watcher's commit and its history record. The next start
    saw every file as indexed and history never had the edits (911 of 3,000 notes after
    a kill, for good)."""
    server = start_indexer(workspace, env=NO_SUMMARIES)
    api = server.url.removesuffix("/mcp") + "/api/v1"
    with httpx2.Client(base_url=api, timeout=30) as http:
        for path in PATHS:
            http.put(
                f"/en/notes/{path}", content=b"# first\n", headers={"Content-Type": "text/markdown"}
            )
    assert server.stop() == 0
    vault_dir = Workspace(workspace).vault_dir("en")
    for path in PATHS[1:]:
        (vault_dir / path).write_text(f"# edited while down: {path}\n")
    (vault_dir / PATHS[0]).unlink()  # a deletion's row went with the killed pass too
    index_without_history(workspace)
    restarted = start_indexer(workspace, env=NO_SUMMARIES)
    try:

        def heard() -> bool:
            for path in PATHS:
                newest = history_versions(workspace, "en", path, 1)[0]
                on_disk = vault_dir / path
                if newest["etag"] != (etag_of(on_disk.read_bytes()) if on_disk.exists() else None):
                    return False
            return True

        wait_for(heard, 30, what="history to record the edits made while down")
        newest = history_versions(workspace, "en", PATHS[1], 1)[0]
        assert (newest["op"], newest["actor"]) == ("edit", "external")
        gone = history_versions(workspace, "en", PATHS[0], 1)[0]
        assert (gone["op"], gone["actor"]) == ("delete", "external")
    finally:
        restarted.stop()
    assert check_history_consistent(workspace) > 0


def test_a_folder_renamed_and_indexed_while_history_was_not_listening_reaches_it(
    workspace: Path,
) -> None:
    """A folder renamed from outside, indexed (a watcher's commit before a crash)
    without history hearing of it: the next start recorded the old paths as deleted and
    nothing at the new ones (a rename keeps the notes' ctimes, and history compared only
    the files it knew), so the notes seemed gone from history."""
    server = start_indexer(workspace, env=NO_SUMMARIES)
    api = server.url.removesuffix("/mcp") + "/api/v1"
    with httpx2.Client(base_url=api, timeout=30) as http:
        for n in range(3):
            text = f"# note {n}\n\nthe agent's text {n}\n".encode()
            put = http.put(f"/en/notes/old/n{n}.md", content=text, headers=MARKDOWN)
            assert put.status_code == 201, put.text
    assert server.stop() == 0
    vault_dir = Workspace(workspace).vault_dir("en")
    (vault_dir / "new").mkdir()
    (vault_dir / "old").rename(vault_dir / "new" / "moved")
    index_without_history(workspace)
    restarted = start_indexer(workspace, env=NO_SUMMARIES)
    try:

        def heard() -> bool:
            return all(history_versions(workspace, "en", f"new/moved/n{n}.md", 1) for n in range(3))

        wait_for(heard, 30, what="history to record the notes at their new paths")
        for n in range(3):
            (newest,) = history_versions(workspace, "en", f"new/moved/n{n}.md", 5)
            data = (vault_dir / f"new/moved/n{n}.md").read_bytes()
            assert (newest["etag"], newest["actor"]) == (etag_of(data), "external")
            gone = history_versions(workspace, "en", f"old/n{n}.md", 1)[0]
            assert (gone["op"], gone["actor"]) == ("delete", "external")
    finally:
        restarted.stop()
    assert check_history_consistent(workspace) > 0


def test_new_notes_written_while_their_folder_moves_are_where_history_says(
    workspace: Path,
) -> None:
    """A folder move locked the files it listed; a note created in the folder while it
    moved landed in the moved folder while the write's answer and history named the old
    path. Every change now holds its vault shared and a folder move holds it alone."""
    settings = Settings(workspace=Workspace(workspace))
    vault = build_vault(settings, open_history(settings))
    for n in range(30):
        vault.write("en", f"A/n{n}.md", f"# n{n}\n")
    answers: list[str] = []
    failures: list[BaseException] = []
    moving = threading.Event()

    def writer(k: int) -> None:
        moving.wait()
        for i in range(40):
            try:
                answers.append(vault.write("en", f"A/w{k}-{i}.md", f"# w{k} {i}\n")["path"])
            except BaseException as err:
                failures.append(err)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(3)]
    for thread in threads:
        thread.start()
    moving.set()
    for round_ in range(40):  # the writes make A again each time
        with contextlib.suppress(NotFoundError):
            vault.move("en", "A", f"B{round_}")
    for thread in threads:
        thread.join(60)
    assert vault.recorder.store is not None
    vault.recorder.store.close()
    assert not failures, failures
    assert len(answers) == 120
    assert check_history_consistent(workspace) > 0


def test_notes_made_while_down_reach_history_after_a_start_killed_mid_reconcile(
    workspace: Path,
) -> None:
    """A start-up reconcile tells its changes at its end: killed after its first
    batches, the notes it had indexed were current for the next start, which told
    nothing, and history never got them (2,200 of 4,000 after a kill at +0.8 s). The
    next start tells every row whose file changed since the index last held the disk."""
    first = start_indexer(workspace, env=NO_SUMMARIES)
    assert first.stop() == 0
    vault_dir = Workspace(workspace).vault_dir("en")
    (vault_dir / "made").mkdir(parents=True)
    count = 3000
    for n in range(count):
        (vault_dir / "made" / f"k{n}.md").write_text(f"# made while down {n}\n")
    killed = start_indexer(workspace, env=NO_SUMMARIES, settled=False)
    status = killed.url.removesuffix("/mcp") + "/api/v1/status"
    with httpx2.Client(timeout=10) as http:

        def some_indexed_not_all() -> bool:
            answer = http.get(status).json()
            assert not answer["index_ready"], "the reconcile ended before the kill"
            return bool(answer["langs"].get("en"))

        wait_for(some_indexed_not_all, 60, what="the start-up reconcile's first batches")
    killed.stop(signal.SIGKILL)
    restarted = start_indexer(workspace, env=NO_SUMMARIES)
    try:

        def all_recorded() -> bool:
            with history_store(workspace) as store:
                known = {path for lang, path in store.paths() if path.startswith("made/")}
            return len(known) == count

        wait_for(all_recorded, 60, what="a version of every note made while down")
    finally:
        restarted.stop()
    assert check_history_consistent(workspace) >= count


def _count(database: Path, sql: str) -> int:
    """One number read from a SQLite file a running server writes (0 before it has it)."""
    try:
        with contextlib.closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)) as conn:
            return int(conn.execute(sql).fetchone()[0])
    except sqlite3.Error:
        return 0


OLD_COUNT = 1500
OLD_TEXTS = {
    f"n/k{i}.md": f"# note {i}\r\n\nas it was, ünï {i}\n".encode() for i in range(OLD_COUNT)
}


@pytest.fixture(scope="module")
def served_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace of ``OLD_TEXTS`` that a server indexed and stopped on, history seeing
    none of them: made (and served) once, copied by each test that starts from it."""
    workspace = tmp_path_factory.mktemp("served-once") / "ws"
    vault_dir = Workspace(workspace).vault_dir("en")
    (vault_dir / "n").mkdir(parents=True)
    for path, data in OLD_TEXTS.items():
        (vault_dir / path).write_bytes(data)
    assert start_indexer(workspace, env=NO_SUMMARIES).stop() == 0  # (history saw none)
    return workspace


@pytest.mark.parametrize("moment", ["first batches", "half the rows", "history recording"])
def test_texts_changed_while_down_survive_a_kill_9_during_the_start_up_reconcile(
    served_once: Path, workspace: Path, moment: str
) -> None:
    """Notes history never saw, edited or deleted while no server ran: the start-up
    reconcile replaces their rows, whose texts were history's only copy of what they
    were (``baseline``). They were kept in memory until the pass's end: a kill -9 during
    the pass lost them, and the next start recorded the edited text as the first
    version. Killed after its first batches, half way, or while history records them,
    the next start records every old text, byte for byte."""
    shutil.copytree(served_once, workspace, symlinks=True, dirs_exist_ok=True)
    vault_dir = Workspace(workspace).vault_dir("en")
    count, deleted, old = OLD_COUNT, 100, OLD_TEXTS
    for i, path in enumerate(old):
        if i < deleted:
            (vault_dir / path).unlink()
        else:
            (vault_dir / path).write_text(f"# note {i}\n\nedited while down {i}\n")
    killed = start_indexer(workspace, env=NO_SUMMARIES, settled=False)
    index, history = Workspace(workspace).index_path, Workspace(workspace).history_dir
    edited_rows = "SELECT count(*) FROM notes WHERE instr(body, 'edited while down')"
    at = {
        "first batches": lambda: _count(index, edited_rows) > 0,
        "half the rows": lambda: _count(index, edited_rows) >= (count - deleted) // 2,
        "history recording": lambda: (
            _count(history / "history.sqlite", "SELECT count(*) FROM versions") > 0
        ),
    }[moment]
    wait_for(at, 60, interval=0.005, what=f"the start-up reconcile's {moment}")
    killed.stop(signal.SIGKILL)
    told = "SELECT value = '0' FROM state WHERE key = 'listeners_behind'"
    assert not _count(index, told), "the start-up reconcile had told its changes"
    start_indexer(workspace, env=NO_SUMMARIES).stop()
    lost = {}
    with history_store(workspace) as store:
        for path, data in old.items():
            first = store.get("en", path, 1)
            if first is None or first.op != "baseline" or store.content(first) != data:
                lost[path] = None if first is None else (first.op, store.content(first)[:40])
    assert not lost, f"{len(lost)} old texts lost, e.g. {next(iter(lost.items()))}"
