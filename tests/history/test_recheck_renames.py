"""A folder renamed by another program, then a crash before history heard of it: the
pass that compares history with disk at the next start (``indexer.vault.recheck``)
records each moved note as a rename (``moved_from`` / ``moved_to``), however long the
pass takes, and pairs no two files wrongly when several have the same bytes.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from helpers.history import (
    check_history_consistent,
    edit_outside,
    history_versions,
    index_without_history,
)
from helpers.indexer_process import start_indexer, wait_for
from helpers.opened_files import files_opened

from indexer.vault.fsops import etag_of
from indexer.vault.history.pairing import match
from indexer.vault.history.store import HistoryStore
from indexer.vault.sandbox import Sandbox
from indexer.vault.vault import Vault
from shared.workspace import Workspace

NO_SUMMARIES = {"INDEXER_SUMMARIES": "0"}
OLD, NEW = "Projets é", "ملفات"
TWIN = b"# Same\n\nthe same bytes in two folders\n"
LONE = b"# Lone\n\none text, two files\n"


def moved_notes() -> dict[str, bytes]:
    """The renamed folder's notes, by path inside it: unique texts, two notes of one
    text told apart by their folder's name, and one whose twin elsewhere is deleted."""
    notes = {f"n{i}.md": f"# Note {i}\n\ntext {i}\n".encode() for i in range(12)}
    return notes | {"a/same.md": TWIN, "b/same.md": TWIN, "lone.md": LONE}


@pytest.mark.e2e
def test_a_folder_renamed_before_a_crash_is_a_rename_in_history(workspace: Path) -> None:
    """Each moved note's new path names its old one (``moved_from``), whose versions
    stay there and name the new path (``moved_to``). Two notes of the same bytes pair by
    their paths' names; a note whose bytes were also a deleted note's, under the same
    file name, pairs with neither (which one moved cannot be told), and a note of those
    bytes left in place is never taken for a moved one."""
    server = start_indexer(workspace, env=NO_SUMMARIES)
    placed = {f"{OLD}/{rel}": data for rel, data in moved_notes().items()}
    placed |= {"elsewhere/lone.md": LONE, "kept/same.md": TWIN}
    for path, data in placed.items():  # (by another program: the tools would add ids)
        for text in (f"# first draft of {path}\n", data.decode()):  # two versions each
            edit_outside(workspace, "en", path, text)
    assert server.stop() == 0
    vault_dir = Workspace(workspace).vault_dir("en")
    (vault_dir / OLD).rename(vault_dir / NEW)
    (vault_dir / "elsewhere/lone.md").unlink()
    index_without_history(workspace)
    restarted = start_indexer(workspace, env=NO_SUMMARIES)
    try:

        def recorded() -> bool:
            gone = history_versions(workspace, "en", "elsewhere/lone.md", 1)[0]
            return gone["op"] == "delete" and all(
                history_versions(workspace, "en", f"{NEW}/{rel}", 1) for rel in moved_notes()
            )

        wait_for(recorded, 60, what="history to record the renamed folder")
        for rel in moved_notes():
            new = history_versions(workspace, "en", f"{NEW}/{rel}")
            old = history_versions(workspace, "en", f"{OLD}/{rel}")
            assert [v["op"] for v in old] == ["delete", "edit", "baseline"], rel
            if rel == "lone.md":
                assert "moved_from" not in new[0] and "moved_to" not in old[0]
                continue
            assert new[0]["moved_from"] == f"{OLD}/{rel}", rel
            assert old[0]["moved_to"] == f"{NEW}/{rel}", rel
            assert new[0]["etag"] == old[1]["etag"] == etag_of(moved_notes()[rel])
        assert "moved_to" not in history_versions(workspace, "en", "elsewhere/lone.md", 1)[0]
        kept = history_versions(workspace, "en", "kept/same.md")
        assert [v["op"] for v in kept] == ["edit", "baseline"]
        assert not any("moved_from" in v for v in kept)
    finally:
        restarted.stop()
    assert check_history_consistent(workspace) > 0


def test_the_pass_pairs_a_rename_whatever_time_it_takes(tmp_path: Path) -> None:
    """The pass looked at the old paths first and met the new ones long after (80 s for
    30,000 paths): past ``PAIR_WINDOW_MS``, 275 of 720 moved notes lost ``moved_from``.
    Here each look at the clock is a minute after the one before."""
    ws = Workspace(tmp_path / "ws")
    store = HistoryStore(ws.history_dir, etag_of)
    store.open()
    ticks = iter(range(1_000_000))
    start = datetime(2026, 1, 1, tzinfo=UTC)
    vault = Vault(
        Sandbox(ws),
        max_file_bytes=1 << 20,
        history=store,
        clock=lambda: start + timedelta(minutes=next(ticks)),
    )
    try:
        notes = {f"n{i}.md": f"# Note {i}\n".encode() for i in range(5)}
        for rel, data in notes.items():
            vault.write("en", f"{OLD}/{rel}", data.decode())
        root = ws.vault_dir("en")
        (root / OLD).rename(root / NEW)
        on_disk = [
            ("en", p.relative_to(root).as_posix(), etag_of(p.read_bytes()))
            for p in sorted(root.rglob("*.md"))
        ]
        assert vault.recheck_history(lambda: False, indexed=lambda: on_disk)
        for rel in notes:
            (new,) = store.versions("en", f"{NEW}/{rel}", 10)
            gone = store.versions("en", f"{OLD}/{rel}", 10)[0]
            assert (new.other_path, gone.op, gone.other_path) == (
                f"{OLD}/{rel}",
                "delete",
                f"{NEW}/{rel}",
            )
    finally:
        store.close()


def test_files_of_the_same_bytes_pair_by_their_names_or_not_at_all() -> None:
    """``match``'s ties: the most trailing names in common wins; a tie pairs nothing."""
    assert match(["P/a/n.md", "P/b/n.md"], ["Q/b/n.md", "Q/a/n.md"]) == [
        ("P/a/n.md", "Q/a/n.md"),
        ("P/b/n.md", "Q/b/n.md"),
    ]
    assert match(["P/x.md", "P/y.md"], ["Q/x.md", "Q/z.md"]) == [
        ("P/x.md", "Q/x.md"),
        ("P/y.md", "Q/z.md"),
    ]
    assert match(["a.md"], ["b.md"]) == [("a.md", "b.md")]
    assert match(["P/x.md", "R/x.md"], ["Q/x.md"]) == []
    assert match(["P/x.md", "R/x.md"], ["Q/x.md", "S/x.md"]) == []
    assert match(["P/x.md", "P/y.md"], ["Q/z.md"]) == []


def test_the_pass_reads_only_the_files_whose_text_history_lacks(tmp_path: Path) -> None:
    """After a crash the pass looked at every file history knows, read whole (100,000
    paths: 80 s of a start after a kill). A file whose latest version is the text the
    index holds for it (the reconcile just before made the index equal to disk) is not
    opened; one the index took in before the crash, history never, is read and
    recorded."""
    ws = Workspace(tmp_path / "ws")
    store = HistoryStore(ws.history_dir, etag_of)
    store.open()
    vault = Vault(Sandbox(ws), max_file_bytes=1 << 20, history=store)
    try:
        for n in range(20):
            vault.write("en", f"n{n}.md", f"# Note {n}\n")
        root = ws.vault_dir("en")
        (root / "n3.md").write_text("# Note 3, edited by another program\n")
        on_disk = [
            ("en", p.relative_to(root).as_posix(), etag_of(p.read_bytes()))
            for p in sorted(root.rglob("*.md"))
        ]
        with files_opened() as opened:
            assert vault.recheck_history(lambda: False, indexed=lambda: on_disk)
        assert [name for name in opened if name.endswith(".md")] == ["n3.md"]
        latest = store.latest("en", "n3.md")
        assert latest is not None and latest.actor == "external"
        assert latest.etag == etag_of(b"# Note 3, edited by another program\n")
        assert [store.latest("en", f"n{n}.md").version for n in range(20)] == [  # type: ignore[union-attr]
            2 if n == 3 else 1 for n in range(20)
        ]
    finally:
        store.close()
