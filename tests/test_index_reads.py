"""IndexReads.search and search_any against the plain statements they replace: on a
random vault of words, CJK and Thai (titles, tags, folders, folder summaries, one lang or
several), every page of every query holds the same notes in the same order, with the
same scores, snippets and totals."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from indexer.index.parse import lang_token
from indexer.index.query import make_snippet
from indexer.index.query_parse import parse_any, parse_query
from indexer.index.schema import BM25_WEIGHTS, OVERVIEW_ROWS
from indexer.index.service import NoteIndex
from indexer.sqlite_lib import sqlite3
from shared.errors import InvalidArgumentError
from shared.workspace import Workspace

WORDS = "alpha beta gamma delta epsilon zeta theta kappa lambda omicron sigma omega".split()
HAN = "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年"
THAI = "กขคงจฉชซญดตถทนบปผพฟมยรลวสหอะาิีึืุูเแโใไ่้๊๋ั็์"
_WEIGHTS = ", ".join(str(w) for w in BM25_WEIGHTS)
_OVERVIEWS = (
    "SELECT id FROM notes WHERE lang = ?"
    " AND (path = '.overview.md' OR substr(path, -13) = '/.overview.md')"
)


def _shown(rank: float) -> float:
    """A BM25 rank as answers show it: higher better, 6 significant digits."""
    return float(f"{-rank:.6g}") + 0.0


def reference_search(
    db: Path, lang: str, query: str, limit: int, offset: int, type_: str | None, folder: str
) -> dict:
    """The search as one plain statement (the lang a phrase of the MATCH) and a count."""
    parsed = parse_query(query)
    match = f'lang : "{lang_token(lang)}" AND ({parsed.match})'
    where, params = "", []
    if type_ is not None:
        where += " AND n.type = ?"
        params.append(type_)
    if folder:
        where += " AND (n.path = ? OR (n.path > ? AND n.path < ?))"
        params += [folder, folder + "/", folder + "0"]
    source = " FROM notes_fts CROSS JOIN notes AS n ON n.id = notes_fts.rowid"
    if type_ is None:
        where += f" AND notes_fts.rowid NOT IN ({_OVERVIEWS})"
        params.append(lang)
    conn = sqlite3.connect(db)
    try:
        hits = conn.execute(
            f"SELECT n.path, n.title, n.body, bm25(notes_fts, {_WEIGHTS}) AS rank,"
            f" bm25(notes_fts, 1.0, 0.0, 0.0, 0.0, 0.0) < 0 AS in_title{source}"
            f" WHERE notes_fts MATCH ?{where} ORDER BY in_title DESC, rank LIMIT ? OFFSET ?",
            (match, *params, limit, offset),
        ).fetchall()
        (total,) = conn.execute(
            f"SELECT count(*){source} WHERE notes_fts MATCH ?{where}", (match, *params)
        ).fetchone()
    finally:
        conn.close()
    results = [
        {"path": p, "title": t, "score": _shown(rank), "snippet": make_snippet(b, parsed.terms)}
        for p, t, b, rank, _ in hits
    ]
    return {"results": results, "total": total}


def _text(rng: random.Random) -> str:
    parts = []
    for _ in range(rng.randint(1, 60)):
        kind = rng.random()
        if kind < 0.6:
            parts.append(rng.choice(WORDS))
        elif kind < 0.8:
            parts.append("".join(rng.choices(HAN, k=rng.randint(1, 8))))
        else:
            parts.append("".join(rng.choices(THAI, k=rng.randint(1, 10))))
    return " ".join(parts)


def _vault(ws: Workspace, lang: str, rng: random.Random, notes: int) -> list[str]:
    """Random notes (and a few folder summaries); returns some of their texts."""
    texts = []
    for i in range(notes):
        folder = rng.choice(["", "items", "items/sub", "events", "items2"])
        name = ".overview.md" if rng.random() < 0.05 else f"n{i}.md"
        title = " ".join(rng.choices(WORDS, k=rng.randint(1, 3)))
        kind = rng.choice(["item", "summary", "note"])
        body = _text(rng)
        text = f"---\ntitle: {title}\ntype: {kind}\ntags: [{rng.choice(WORDS)}]\n---\n{body}\n"
        path = ws.vault_dir(lang) / folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        texts.append(body)
    return texts


def _queries(rng: random.Random, texts: list[str]) -> list[str]:
    queries = ["alpha", "alpha beta", '"gamma delta"', "omega sigma kappa", "的", "是不", "zzz"]
    for _ in range(60):
        tokens = rng.choice(texts).split()
        start = rng.randrange(len(tokens))
        piece = " ".join(tokens[start : start + rng.randint(1, 3)])
        if rng.random() < 0.5:  # part of a CJK or Thai run, or of a word
            cut = rng.randrange(len(piece))
            piece = piece[cut : cut + rng.randint(1, 6)]
        queries.append(f'"{piece}"' if rng.random() < 0.3 else piece)
    return queries


@pytest.mark.parametrize("langs", [("en",), ("en", "zh")])
def test_search_pages_equal_the_plain_statement(
    ws: Workspace, index: NoteIndex, langs: tuple[str, ...]
) -> None:
    rng = random.Random(len(langs))
    texts = [text for lang in langs for text in _vault(ws, lang, rng, 150)]
    index.reconcile()
    checked = 0
    for query in _queries(rng, texts):
        for limit, offset in ((10, 0), (3, 0), (3, 3), (100, 0), (5, 1000)):
            type_ = rng.choice([None, None, "item", "summary"])
            folder = rng.choice(["", "", "items", "items/sub"])
            for lang in (*langs, "fr"):
                try:
                    expected = reference_search(
                        index.path, lang, query, limit, offset, type_, folder
                    )
                except (InvalidArgumentError, sqlite3.OperationalError):
                    with pytest.raises(InvalidArgumentError):  # refused alike
                        index.search(lang, query, limit, type_, None, folder, offset)
                    continue
                found = index.search(lang, query, limit, type_, None, folder, offset)
                assert found["results"] == expected["results"], (lang, query, limit, offset)
                assert found["total"] == expected["total"], (lang, query, limit, offset)
                checked += bool(expected["results"])
    assert checked > 100


def reference_any(db: Path, lang: str, keywords: list[str], limit: int, folder: str) -> list:
    """search_any as one plain statement, the lang a phrase of the MATCH, folder
    summaries left out."""
    parsed = parse_any(keywords)
    match = f'lang : "{lang_token(lang)}" AND ({parsed.match})'
    where, params = f" AND NOT {OVERVIEW_ROWS.replace('path', 'n.path')}", []
    if folder:
        where += " AND (n.path = ? OR (n.path > ? AND n.path < ?))"
        params = [folder, folder + "/", folder + "0"]
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute(
            f"SELECT n.path, bm25(notes_fts, {_WEIGHTS}) AS score FROM notes_fts"
            f" CROSS JOIN notes AS n ON n.id = notes_fts.rowid WHERE notes_fts MATCH ?{where}"
            f" ORDER BY bm25(notes_fts, {_WEIGHTS}) LIMIT ?",
            (match, *params, limit),
        ).fetchall()
        return [(path, _shown(rank)) for path, rank in rows]
    finally:
        conn.close()


@pytest.mark.parametrize("langs", [("en",), ("en", "zh")])
def test_search_any_equals_the_plain_statement(
    ws: Workspace, index: NoteIndex, langs: tuple[str, ...]
) -> None:
    rng = random.Random(10 + len(langs))
    texts = [text for lang in langs for text in _vault(ws, lang, rng, 150)]
    index.reconcile()
    checked = 0
    for query in _queries(rng, texts):
        keywords = query.split()[:4]
        for limit in (3, 10, 50):
            folder = rng.choice(["", "", "items", "items/sub"])
            for lang in (*langs, "fr"):
                try:
                    expected = reference_any(index.path, lang, keywords, limit, folder)
                except (InvalidArgumentError, sqlite3.OperationalError):
                    assert index.search_any(lang, keywords, limit, folder) == []
                    continue
                found = index.search_any(lang, keywords, limit, folder)
                assert [(r["path"], r["score"]) for r in found] == expected, (lang, keywords)
                checked += bool(expected)
    assert checked > 100


def test_search_any_leaves_out_summaries_that_crowd_the_best_places(
    ws: Workspace, index: NoteIndex
) -> None:
    """Summaries are dropped from the best 2 x limit; when they take so many places that
    fewer notes are left, the ranking is made again without them: the same notes."""
    vault = ws.vault_dir("en")
    for folder in ("", "a", "b", "c", "d"):
        summary = vault / folder / ".overview.md"
        summary.parent.mkdir(parents=True, exist_ok=True)
        summary.write_text(f"---\ntype: summary\ntitle: kappa kappa\n---\nkappa {folder}\n")
    for i in range(12):
        (vault / "a" / f"n{i}.md").write_text(f"---\ntitle: n{i}\n---\n{'kappa ' * (i + 1)}x\n")
    index.reconcile()
    for limit in (1, 2, 3, 5, 8, 20):
        expected = reference_any(index.path, "en", ["kappa"], limit, "")
        found = index.search_any("en", ["kappa"], limit)
        assert [(r["path"], r["score"]) for r in found] == expected, limit
        assert len(found) == min(limit, 12)


def test_folder_summaries_have_ids_below_zero_and_notes_above(tmp_path: Path) -> None:
    """A default search leaves summaries out by ``rowid > 0`` (a bound FTS5 walks to, where
    a ``NOT IN`` of them tested every match): a note's id must never be 0 or less, not even
    after only summaries were indexed, nor a summary's above 0."""
    ws = Workspace(tmp_path / "ws")
    vault = ws.vault_dir("en")
    (vault / "items").mkdir(parents=True)
    summary = "---\ntitle: s\ntype: summary\n---\nalpha\n"
    for rel in (".overview.md", "items/.overview.md"):
        (vault / rel).write_text(summary, encoding="utf-8")
    index = NoteIndex(ws)
    index.open()
    try:
        index.reconcile()  # summaries only: -1, -2
        (vault / "items/.overview.md").unlink()
        index.note_changed("en", "items/.overview.md")
        for rel in ("a.md", "items/b.md"):  # one at a time, then a summary again
            (vault / rel).write_text("alpha\n", encoding="utf-8")
            index.note_changed("en", rel)
        (vault / "items/.overview.md").write_text(summary, encoding="utf-8")
        index.note_changed("en", "items/.overview.md")
        (vault / "c.md").write_text("alpha\n", encoding="utf-8")
        index.reconcile()  # (a batch of new files)
        with sqlite3.connect(index.path) as conn:
            ids = dict(conn.execute("SELECT path, id FROM notes").fetchall())
        assert ids[".overview.md"] < 0 and ids["items/.overview.md"] < 0
        assert min(ids["a.md"], ids["items/b.md"], ids["c.md"]) >= 1
        assert len(set(ids.values())) == len(ids)
        found = index.search("en", "alpha")
        assert sorted(hit["path"] for hit in found["results"]) == ["a.md", "c.md", "items/b.md"]
        assert found["total"] == 3
        assert index.search("en", "alpha", type="summary")["total"] == 2
    finally:
        index.close()
