"""A batch of changed notes (the tools' group commit, the watcher's batch, a start's
reconcile) runs its FTS statements after all its ``notes`` statements
(``indexer.index.fts_writes``): each FTS table writes one segment a transaction, not
one a file, and the rows, the terms and the search answers are those the same changes
synced one by one leave. Segments are counted by SQLite's own trace of FTS5's
statements (a segment of a few short notes is one leaf page: one ``_idx`` row)."""

from __future__ import annotations

import contextlib
import itertools
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from helpers.vault_stack import reconciled_index
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from indexer.index.service import NoteIndex
from shared.workspace import Workspace

PATHS = ["a.md", "dir/Ünï 会议.md", "n/ملاحظة.md", "t.txt", "b.md", "c/d.md"]
# fmt: off
PIECES = [
    " ", "\n", "\n\n", "word", "wombat", "Café", "cafe\u0301", "İstanbul", "日本語の文章",
    "中文句子。", "한국어 문장", "ภาษาไทยไม่มีช่องว่าง", "العربية مُشَكَّلة", "עִבְרִית",
    "Ελληνικά ΆΈΉ", "русский ёлка", "हिन्दी", "٢٠٢٤", "😀👍🏽", "[[Link]]", "#tag",
    "#project/alpha", "`code`", "# Heading\n", "- item\n", "---\ntitle: T\ntags: [x, 会议]\n---\n",
]
# fmt: on
_text = st.lists(st.sampled_from(PIECES), max_size=10).map("".join)
# A round: each path's new text, or None to delete it (or leave it absent).
_round = st.dictionaries(st.sampled_from(PATHS), st.one_of(st.none(), _text), min_size=1)
_stamps = itertools.count(1_700_000_000_000_000_000, 1_000_000_000)


def put(ws: Workspace, rel: str, text: str | None) -> None:
    """Write ``text`` at ``rel`` (None: delete it) with a new mtime, as a change."""
    path = ws.vault_dir("en") / rel
    if text is None:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    stamp = next(_stamps)  # (a start's reconcile sees the change by its stat)
    os.utime(path, ns=(stamp, stamp))


def traced(index: NoteIndex, call: Callable[[], object]) -> list[str]:
    """Every statement SQLite's trace shows the index's writer run during ``call``."""
    writer = index._db.writer
    assert writer is not None
    statements: list[str] = []
    writer.set_trace_callback(statements.append)
    try:
        call()
    finally:
        writer.set_trace_callback(None)
    return statements


def segments_by_transaction(statements: list[str]) -> list[dict[str, int]]:
    """The segments each FTS table wrote, for each transaction of ``statements``."""
    counts: list[dict[str, int]] = [{"notes_fts": 0, "notes_tri": 0}]
    for sql in statements:
        if sql == "COMMIT":
            counts.append({"notes_fts": 0, "notes_tri": 0})
        for table in counts[-1]:
            counts[-1][table] += sql.startswith(f"-- INSERT INTO 'main'.'{table}_idx'")
    return counts


def contents(index: NoteIndex) -> tuple[list[tuple], dict[str, list[tuple]]]:
    """The rows (but for their ids and times) and each FTS table's terms, every
    occurrence named by its note's path."""
    writer = index._db.writer
    assert writer is not None
    rows = writer.execute(
        "SELECT lang, path, title, type, type_key, abstract, tags, tag_keys, frontmatter,"
        " body, head, joined, exact, size, hash, problem FROM notes ORDER BY lang, path"
    ).fetchall()
    paths = dict(writer.execute("SELECT id, path FROM notes"))
    terms = {}
    for table in ("notes_fts", "notes_tri"):
        writer.execute(f"CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, {table}, instance)")
        try:
            found = writer.execute("SELECT term, doc, col, offset FROM temp.v").fetchall()
        finally:
            writer.execute("DROP TABLE temp.v")
        terms[table] = sorted((term, paths[doc], col, off) for term, doc, col, off in found)
    return rows, terms


def answers(index: NoteIndex, texts: list[str]) -> list[dict]:
    """Search answers (paths, scores, snippets) for words of the texts written; results
    of one score by path (ties go by row id, which the order of the syncs gives)."""
    words = sorted({w for text in texts for w in text.split() if w.isalnum()})[:8]
    found = [index.search("en", query) for query in [*words, "wombat", "日本語", "会议"]]
    for answer in found:
        answer["results"].sort(key=lambda r: (-r["score"], r["path"]))
    return found


@contextlib.contextmanager
def indexes(root: Path, count: int) -> Iterator[list[tuple[Workspace, NoteIndex]]]:
    """``count`` empty workspaces, each with its index open and reconciled."""
    with contextlib.ExitStack() as stack:
        made = []
        for n in range(count):
            ws = Workspace(root / f"ws{n}")
            ws.vault_dir("en").mkdir(parents=True)
            made.append((ws, stack.enter_context(contextlib.contextmanager(reconciled_index)(ws))))
        yield made


def test_a_batch_of_changed_notes_writes_one_segment_to_each_fts_table(tmp_path: Path) -> None:
    with indexes(tmp_path, 1) as [(ws, index)]:
        keys = [("en", rel, None) for rel in PATHS]
        for rel in PATHS:
            put(ws, rel, f"# {rel}\n\nquokka words\n")
        made = traced(index, lambda: index.notes_changed(keys))
        for rel in PATHS[:4]:  # replaced
            put(ws, rel, f"# {rel}\n\nwombat words\n")
        put(ws, PATHS[4], None)  # deleted
        changed = traced(index, lambda: index.notes_changed(keys))
        one = {"notes_fts": 1, "notes_tri": 1}
        for statements in (made, changed):
            assert [c for c in segments_by_transaction(statements) if any(c.values())] == [one]
        assert sorted(r["path"] for r in index.search("en", "wombat")["results"]) == sorted(
            PATHS[:4]
        )
        assert [r["path"] for r in index.search("en", "quokka")["results"]] == [PATHS[5]]


def test_a_start_reconcile_writes_at_most_one_segment_a_transaction(tmp_path: Path) -> None:
    """(Its batches end after 0.1 s: under load there may be more than one.)"""
    with indexes(tmp_path, 1) as [(ws, index)]:
        for rel in PATHS:
            put(ws, rel, f"# {rel}\n\nquokka words\n")
        index.reconcile()
        for rel in PATHS[:4]:
            put(ws, rel, f"# {rel}\n\nwombat words\n")
        put(ws, PATHS[4], None)
        counts = segments_by_transaction(traced(index, index.reconcile))
        assert any(c["notes_fts"] for c in counts)
        assert all(c["notes_fts"] <= 1 and c["notes_tri"] <= 1 for c in counts), counts
        assert len(index.search("en", "wombat")["results"]) == 4


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_round, min_size=1, max_size=3))
def test_a_batch_leaves_what_the_same_changes_one_by_one_leave(
    rounds: list[dict[str, str | None]],
) -> None:
    """The same rounds of changes synced as one batch (the tools' group commit), file by
    file, and by a start's reconcile: the same rows, terms and search answers."""
    with tempfile.TemporaryDirectory() as tmp, indexes(Path(tmp), 3) as made:
        (batch_ws, batch), (single_ws, single), (start_ws, start) = made
        texts: list[str] = []
        for changes in rounds:
            for ws in (batch_ws, single_ws, start_ws):
                for rel, text in changes.items():
                    put(ws, rel, text)
            keys = [("en", rel, None) for rel in changes]
            batch.notes_changed(keys)
            for key in keys:
                single.notes_changed([key])
            start.reconcile()
            texts += [text for text in changes.values() if text]
            assert contents(batch) == contents(single) == contents(start)
            assert answers(batch, texts) == answers(single, texts) == answers(start, texts)
