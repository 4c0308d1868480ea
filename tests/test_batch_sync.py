"""A folder moved, and its move undone, reach the index in one transaction, each moved
note's row re-keyed rather than its words tokenized out and in again (``batch_sync``);
a folder moved while no indexer ran is re-keyed by the start's reconcile, in a few
batches (``whole_pass``); and the rows are exactly those a rebuild makes: search and
grep find every note at its new path and none at the old."""

from __future__ import annotations

import os
import time
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from helpers.indexer_process import start_indexer, wait_for
from helpers.vault_stack import reconciled_index, recording_vault

from indexer.index import whole_pass
from indexer.index.service import NoteIndex
from indexer.sqlite_lib import sqlite3
from indexer.vault.vault import Vault
from shared.workspace import Workspace

REASON = "entry:e1 tidy"
NFD = unicodedata.normalize("NFD", "café.md")  # "cafe" + U+0301, as a Mac writes it
# Notes in many scripts and kinds; a title from the file name (no heading), a text file
# (its type from its suffix), a name spelled NFD on disk, two copies of one note under
# one name, a note whose text is not UTF-8.
NOTES: dict[str, bytes] = {
    "topics/a/alpha.md": b"# Alpha\n\nquokka words about alpha\n",
    "topics/a/bare-name.md": b"no heading here, quokkabare\n",
    "topics/b/ελληνικά.md": "# Ελληνικά\n\nquokkagreek καλημέρα κόσμε\n".encode(),
    "topics/b/" + NFD: b"quokkanfd spelled as a Mac does\n",
    "topics/b/中文.md": "# 中文\n\nquokkahan 你好世界\n".encode(),
    "topics/b/list.txt": b"quokkatext plain\n",
    "topics/c/copy.md": b"# Copy\n\nquokkacopy\n",
    "topics/d/copy.md": b"# Copy\n\nquokkacopy\n",
    "topics/d/latin1.md": b"# Latin\n\nquokkalatin caf\xe9\n",
}
PATHS = sorted(unicodedata.normalize("NFC", rel) for rel in NOTES)  # (as tools name them)
WORDS = [
    "quokka",
    "quokkanfd",
    "quokkabare",
    "quokkasummary",
    "quokkagreek",
    "quokkahan",
    "quokkatext",
]


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    workspace = Workspace(tmp_path / "ws")
    for rel, data in NOTES.items():
        path = workspace.vault_dir("en") / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    (workspace.vault_dir("en") / "home.md").write_text("# Home\n")
    return workspace


@pytest.fixture
def index(ws: Workspace) -> Iterator[NoteIndex]:
    yield from reconciled_index(ws)


@pytest.fixture
def vault(ws: Workspace, index: NoteIndex) -> Iterator[Vault]:
    yield from recording_vault(ws, index)


def traced(index: NoteIndex) -> list[str]:
    """Every statement the index's writer runs from now on (SQLite's own trace)."""
    statements: list[str] = []
    writer = index._db.writer
    assert writer is not None
    writer.set_trace_callback(statements.append)
    return statements


def transactions(statements: list[str]) -> int:
    return sum(1 for s in statements if s.startswith("BEGIN"))


def writing_notes(statements: list[str]) -> list[list[str]]:
    """The transactions that read or wrote notes' rows (not the index's own state)."""
    out: list[list[str]] = []
    for s in statements:
        if s.startswith("BEGIN"):
            out.append([])
        elif out:
            out[-1].append(s)
    return [t for t in out if any("FROM notes " in s or "UPDATE notes " in s for s in t)]


def tokenized(statements: list[str]) -> list[str]:
    """The statements that wrote words or trigrams (a note tokenized in or out)."""
    return [s for s in statements if "notes_fts" in s or "notes_tri" in s]


def rows(index: NoteIndex) -> list[tuple]:
    """Every row but its id, by path."""
    with sqlite3.connect(index.path) as conn:
        return conn.execute(
            "SELECT lang, path, title, type, type_key, abstract, tags, tag_keys, frontmatter,"
            " body, head, joined, exact, size, mtime_ns, ctime_ns, hash, problem"
            " FROM notes ORDER BY lang, path"
        ).fetchall()


def found(index: NoteIndex) -> dict[str, list[str]]:
    """Paths each word finds, by words (FTS, summaries too) and by trigrams (grep)."""
    out: dict[str, list[str]] = {}
    with sqlite3.connect(index.path) as conn:
        for word in WORDS:
            out[f"fts {word}"] = sorted(
                path
                for (path,) in conn.execute(
                    "SELECT path FROM notes JOIN notes_fts ON notes_fts.rowid = notes.id"
                    " WHERE notes_fts MATCH ?",
                    (word,),
                )
            )
    for word in WORDS:  # (grep's candidates, from the trigrams)
        plan = index.grep_plan("en", word, True, False)
        assert plan is not None
        out[f"tri {word}"] = sorted(plan.candidates)
    return out


def as_rebuilt(index: NoteIndex) -> None:
    """The rows and what words and trigrams find are those of an index built anew."""
    held, finds = rows(index), found(index)
    index.rebuild()
    assert rows(index) == held
    assert found(index) == finds


def test_a_folder_move_is_one_transaction_and_tokenizes_no_note_again(
    vault: Vault, index: NoteIndex
) -> None:
    statements = traced(index)
    vault.move("en", "topics", "archive/topics", reason=REASON)
    assert transactions(statements) == 1  # (one per file: 18)
    assert tokenized(statements) == []  # no note's bytes changed: none tokenized
    hits = index.search("en", "quokkacopy")["results"]
    assert sorted(hit["path"] for hit in hits) == [
        "archive/topics/c/copy.md",
        "archive/topics/d/copy.md",
    ]
    assert not any(p.startswith("topics/") for p in found(index)["tri quokka"])
    assert len(found(index)["tri quokka"]) == len(NOTES)
    as_rebuilt(index)


def test_undo_of_the_move_is_one_transaction_and_tokenizes_no_note_again(
    vault: Vault, index: NoteIndex
) -> None:
    vault.move("en", "topics", "archive/topics", reason=REASON)
    statements = traced(index)
    done = vault.undo("en", "e1")
    assert len(done["files"]) == 2 * len(NOTES)
    assert transactions(statements) == 1
    assert tokenized(statements) == []
    assert sorted(found(index)["tri quokka"]) == PATHS
    as_rebuilt(index)


def test_a_note_whose_links_the_move_rewrote_is_indexed_anew(
    vault: Vault, index: NoteIndex, ws: Workspace
) -> None:
    """Its bytes changed: its row is rebuilt (tokenized), the others re-keyed."""
    (ws.vault_dir("en") / "topics/a/out.md").write_text("# Out\n\nquokka [home](../../home.md)\n")
    index.reconcile()
    statements = traced(index)
    vault.move("en", "topics", "deep/er/topics", reason=REASON)
    assert transactions(statements) == 1
    assert (
        len([s for s in tokenized(statements) if s.startswith("INSERT INTO notes_fts (rowid")]) == 1
    )
    text = (ws.vault_dir("en") / "deep/er/topics/a/out.md").read_text()
    assert "../../../../home.md" in text
    as_rebuilt(index)


LINKING = {  # (other notes linking to home.md, in several scripts and link kinds)
    "linking/ελληνικά.md": "# Σπίτι\n\nδες [[home]] εδώ\n",
    "linking/中文.md": "# 家\n\n见 [家](../home.md)\n",
    "linking/deep/עברית.md": "# בית\n\n![[home.md]]\n",
    **{f"linking/n{n:02}.md": f"# N{n}\n\n[h](../home.md) quokka{n}\n" for n in range(12)},
}


def test_the_notes_a_move_relinks_reach_the_index_in_one_transaction(
    vault: Vault, index: NoteIndex
) -> None:
    """Each rewrite told on its own waited for the index's write lock, 0.5 s at a time
    while the start's first index held it (18 linking notes took the move's 10 s): the
    move is one transaction, the rewrites another; history keeps each with the reason."""
    for rel, text in LINKING.items():
        vault.write("en", rel, text)
    note = vault.sandbox.workspace.vault_dir("en") / "linking/中文.md"
    before = note.read_bytes()
    statements = traced(index)
    moved = vault.move("en", "home.md", "start/home.md", reason=REASON)
    assert moved["relinked"] == sorted(LINKING)
    assert transactions(statements) == 2  # (the move, then every relink: 1 + 15 before)
    for rel in LINKING:
        versions = vault.history("en", rel)["versions"]
        assert [(v["op"], v["reason"]) for v in versions[:2]] == [
            ("write", REASON),
            ("write", None),
        ]
    assert note.read_text().endswith("# 家\n\n见 [家](../start/home.md)\n")
    plan = index.grep_plan("en", "start/home", True, False)
    assert plan is not None and sorted(plan.candidates) == sorted(LINKING)
    as_rebuilt(index)
    statements.clear()
    vault.undo("en", "e1")  # (the move and the rewrites, as one entry)
    assert transactions(statements) == 1
    assert note.read_bytes() == before
    as_rebuilt(index)


def test_a_file_renamed_takes_its_new_name_as_its_title(vault: Vault, index: NoteIndex) -> None:
    """A row depends on its file's name: a note renamed is parsed anew, not re-keyed."""
    vault.move("en", "topics/a/bare-name.md", "topics/a/other-name.md", reason=REASON)
    hit = index.search("en", "quokkabare")["results"]
    assert [(h["path"], h["title"]) for h in hit] == [("topics/a/other-name.md", "other-name")]
    as_rebuilt(index)


def test_a_folder_moved_by_another_program_is_re_keyed_by_the_watcher(
    ws: Workspace, index: NoteIndex
) -> None:
    """A folder's summary too (its row's id below 0 stays so)."""
    summary = ws.vault_dir("en") / "topics/a/.overview.md"
    summary.write_text("---\ntype: summary\n---\nquokkasummary of a\n")
    index.start_background()
    deadline = time.monotonic() + 30
    while index.partial and time.monotonic() < deadline:  # (the start's reconcile)
        time.sleep(0.02)
    statements = traced(index)
    root = ws.vault_dir("en")
    os.makedirs(root / "elsewhere")
    os.rename(root / "topics", root / "elsewhere/topics")
    while time.monotonic() < deadline:
        paths = found(index)["tri quokka"]
        if paths and all(p.startswith("elsewhere/") for p in paths):
            break
        time.sleep(0.02)
    moved = sorted([*PATHS, "topics/a/.overview.md"])
    assert sorted(found(index)["tri quokka"]) == [f"elsewhere/{p}" for p in moved]
    assert tokenized(statements) == []
    assert found(index)["fts quokkasummary"] == ["elsewhere/topics/a/.overview.md"]


BULK = 300  # notes of one more folder, ``topics/bulk``


def offline_index(ws: Workspace) -> NoteIndex:
    """The index of ``ws`` built, closed, then opened again as a start opens it."""
    for n in range(BULK):
        path = ws.vault_dir("en") / f"topics/bulk/n{n:03}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# Bulk {n}\n\nquokka bulk words {n}\n")
    for _ in reconciled_index(ws):
        pass  # (built, then closed)
    index = NoteIndex(ws)
    index.open()
    return index


def started(index: NoteIndex) -> None:
    """The start's reconcile, in the background as ``indexer serve`` runs it."""
    index.start_background()
    deadline = time.monotonic() + 60
    while not index.ready and time.monotonic() < deadline:
        time.sleep(0.02)
    assert index.ready


def test_a_folder_moved_while_no_indexer_ran_is_re_keyed_by_the_start(ws: Workspace) -> None:
    index = offline_index(ws)
    try:
        root = ws.vault_dir("en")
        os.makedirs(root / "elsewhere")
        os.rename(root / "topics", root / "elsewhere/topics")
        statements = traced(index)
        started(index)
        assert tokenized(statements) == []  # (each note tokenized out and in: 5,000)
        # (the rows read, the gone ones read, 2 batches of 200 files; a loaded machine's
        # batches may end at 0.1 s: up to three more. What tells the re-keying apart is
        # the tokenizing above: each note synced alone, in batches, made 6 or more too)
        assert len(writing_notes(statements)) <= 7
        paths = found(index)["tri quokka"]
        assert len(paths) == len(NOTES) + BULK
        assert all(p.startswith("elsewhere/topics/") for p in paths)
        hits = index.search("en", "quokkacopy")["results"]
        assert sorted(hit["path"] for hit in hits) == [
            "elsewhere/topics/c/copy.md",
            "elsewhere/topics/d/copy.md",
        ]
        as_rebuilt(index)
    finally:
        index.close()


def test_an_offline_move_with_an_edit_a_new_note_and_a_deletion(ws: Workspace) -> None:
    """A moved note edited meanwhile is parsed anew; a moved one deleted is removed; a
    new note is added; the other moved notes keep their rows (re-keyed)."""
    index = offline_index(ws)
    try:
        root = ws.vault_dir("en")
        os.rename(root / "topics", root / "moved")
        (root / "moved/a/alpha.md").write_text("# Alpha\n\nquokka quokkaedited\n")
        (root / "moved/b/list.txt").unlink()
        (root / "new.md").write_text("# New\n\nquokkanew note\n")
        statements = traced(index)
        started(index)
        words_in = [
            s for s in tokenized(statements) if s.startswith("INSERT INTO notes_fts (rowid")
        ]
        words_out = [s for s in tokenized(statements) if "notes_fts (notes_fts" in s]
        assert (len(words_in), len(words_out)) == (2, 2)  # alpha and new.md; alpha and list.txt
        assert [h["path"] for h in index.search("en", "quokkaedited")["results"]] == [
            "moved/a/alpha.md"
        ]
        assert [h["path"] for h in index.search("en", "quokkanew")["results"]] == ["new.md"]
        assert index.search("en", "quokkatext")["results"] == []
        paths = found(index)["tri quokka"]
        assert len(paths) == len(NOTES) + BULK  # (less list.txt, plus new.md)
        assert "new.md" in paths and not any(p.startswith("topics/") for p in paths)
        as_rebuilt(index)
    finally:
        index.close()


def test_notes_come_while_no_row_went_take_the_first_index_s_long_batches(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rest of a first index a stop cut short (or notes copied in while no indexer
    ran, none gone) went through the catch-up's batches of 200 files, at a third of the
    first index's speed (5,000 of 10,000 notes: 16 s, the whole first index 15 s)."""
    index = offline_index(ws)
    try:
        for n in range(1000):
            (ws.vault_dir("en") / f"later/n{n:04}.md").parent.mkdir(exist_ok=True)
            (ws.vault_dir("en") / f"later/n{n:04}.md").write_text(f"# Later {n}\n\nquokka\n")
        (ws.vault_dir("en") / "home.md").write_text("# Home\n\nquokkahome\n")  # (one changed)
        statements = traced(index)
        # a long batch's time, as a loaded machine needs for 1,000 notes (at load 16 its
        # 0.25 s made seven): batches of 200 files made seven at least all the same
        monkeypatch.setattr(whole_pass, "FRESH_BATCH_SECONDS", 30.0)
        started(index)
        assert len(writing_notes(statements)) <= 3  # (the rows read, one long batch)
        assert len(found(index)["tri quokka"]) == len(NOTES) + BULK + 1000 + 1
        as_rebuilt(index)
    finally:
        index.close()


def test_a_served_index_finds_a_folder_moved_while_it_was_stopped(ws: Workspace) -> None:
    """A real ``indexer serve`` stopped, the folder renamed, started again: search finds
    the moved notes at their new paths and none at the old."""
    env = {"INDEXER_SUMMARIES": "0"}
    server = start_indexer(ws.root, env=env)
    server.stop()
    root = ws.vault_dir("en")
    os.rename(root / "topics", root / "shelf")
    server = start_indexer(ws.root, env=env)
    try:
        with httpx2.Client(base_url=server.url.removesuffix("/mcp") + "/api/v1/en") as http:

            def paths(query: str) -> list[str]:
                found = http.get("/search", params={"q": query}).json()["results"]
                return sorted(hit["path"] for hit in found)

            wait_for(lambda: paths("quokkagreek"), 30, what="the moved note")
            assert paths("quokkagreek") == ["shelf/b/ελληνικά.md"]
            assert paths("quokkacopy") == ["shelf/c/copy.md", "shelf/d/copy.md"]
            assert paths("quokkanfd") == ["shelf/b/café.md"]
    finally:
        server.stop()


def test_a_folder_of_accented_names_is_listed_once_a_batch(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Notes of accented names moved out of a large folder while no indexer ran: each
    gone one's file was looked for under another spelling of its name by listing the
    whole folder (quadratic); a batch lists a folder once."""
    folder = ws.vault_dir("en") / "régions"
    folder.mkdir()
    for n in range(60):
        (folder / f"été-{n:02}.md").write_text(f"# Été {n}\n\nquokka été {n}\n")
        (folder / f"hôtel-{n:02}.md").write_text(f"# Hôtel {n}\n")
    for _ in reconciled_index(ws):
        pass
    os.makedirs(ws.vault_dir("en") / "archive")
    for n in range(60):
        os.rename(folder / f"été-{n:02}.md", ws.vault_dir("en") / f"archive/été-{n:02}.md")
    listed: list[int] = []  # the inode of each folder listed by descriptor
    scandir = os.scandir

    def counted(path: object = ".") -> object:
        if isinstance(path, int):
            listed.append(os.fstat(path).st_ino)
        return scandir(path)  # type: ignore[arg-type]

    index = NoteIndex(ws)
    index.open()
    try:
        monkeypatch.setattr(os, "scandir", counted)
        index.reconcile()
        monkeypatch.undo()
        # (the walk's listing and the batch's; once per gone note: 61)
        assert listed.count(folder.stat().st_ino) <= 3
        paths = found(index)["tri quokka"]
        assert sum(p.startswith("archive/été-") for p in paths) == 60
        as_rebuilt(index)
    finally:
        index.close()
