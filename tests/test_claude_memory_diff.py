"""Differential tests: our VaultMemoryTool answers every command sequence as the SDK's own
local-filesystem memory tool does, and leaves the same files and folders behind.

Hand-written sequences cover every command and every error; hypothesis generates a few
hundred more. Both sides get the same recorded ``tool_use`` inputs; answers are compared
as the tool runner sends them to the model (see ``helpers.memory_tool``). Paths stay
within what both accept (no hidden names, file names with a text type): the vault's
extra refusals have their own tests in ``test_claude_memory.py``.

One real ``indexer serve`` for the module. Renames need the server's ``move`` tool; while
it has none, exactly the rename cases are skipped.
"""

from __future__ import annotations

import asyncio
import itertools
import os
from collections.abc import Callable, Iterator
from typing import Any

import fastmcp
import pytest
from helpers.indexer_process import RunningIndexer, start_indexer
from helpers.memory_tool import MemoryPair
from hypothesis import event, given, settings
from hypothesis import strategies as st

NO_MOVE = "the server has no move tool yet"
LANG = "en"
_folders = itertools.count()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningIndexer]:
    """This module's indexer, without folder summaries: a summary written into a memory
    folder mid-sequence would change the folders these tests compare byte for byte."""
    running = start_indexer(
        tmp_path_factory.mktemp("module") / "ws", env={"INDEXER_SUMMARIES": "0"}
    )
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="module")
def offered(server: RunningIndexer) -> frozenset[str]:
    """The tools the server offers (``move`` comes with history)."""

    async def names() -> frozenset[str]:
        async with fastmcp.Client(server.url) as client:
            return frozenset(tool.name for tool in await client.list_tools())

    return asyncio.run(names())


@pytest.fixture(scope="module")
def open_pair(
    server: RunningIndexer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Callable[[], MemoryPair]]:
    """Makes a pair on a fresh folder (``m000``, ``m001``...); all are closed at the end."""
    opened: list[MemoryPair] = []

    def make() -> MemoryPair:
        n = next(_folders)
        pair = MemoryPair.open(
            server.workspace, LANG, f"m{n:03d}", tmp_path_factory.mktemp(f"sdk{n:03d}")
        )
        opened.append(pair)
        return pair

    yield make
    for pair in opened:
        pair.close()


def view(path: str, view_range: Any = None) -> dict[str, Any]:
    return {
        "command": "view",
        "path": path,
        **({} if view_range is None else {"view_range": view_range}),
    }


def create(path: str, text: str) -> dict[str, Any]:
    return {"command": "create", "path": path, "file_text": text}


def replace(path: str, old: str, new: str) -> dict[str, Any]:
    return {"command": "str_replace", "path": path, "old_str": old, "new_str": new}


def insert(path: str, line: Any, text: str) -> dict[str, Any]:
    return {"command": "insert", "path": path, "insert_line": line, "insert_text": text}


def delete(path: str) -> dict[str, Any]:
    return {"command": "delete", "path": path}


def rename(old: str, new: str) -> dict[str, Any]:
    return {"command": "rename", "old_path": old, "new_path": new}


NESTED = [
    create("/memories/a.txt", "alpha\n"),
    create("/memories/proj/notes.md", "# Project\n- goal\n"),
    create("/memories/proj/sub/deep/x.json", '{"k": 1}'),
    create("/memories/é/ünï.csv", "a,b\n1,2\n"),
    create("/memories/B.yaml", "k: v\n"),
    create("/memories/a b/c.xml", "<c/>"),
]

SEQUENCES: dict[str, list[dict[str, Any]]] = {
    "view of the empty root, in every spelling": [
        view("/memories"),
        view("/memories/"),
        view("/memories//"),
        view("/memories/."),
        view("/memories/../memories"),
    ],
    "listing: two levels, folders before their contents, code-point order": [
        *NESTED,
        view("/memories"),
        view("/memories/proj"),
        view("/memories/proj/"),
        view("/memories/proj/sub"),
        view("/memories/proj", [1, 2]),
        view("/memoriesproj"),
    ],
    "sizes in bytes of UTF-8, rounded as the SDK does": [
        create("/memories/zero.txt", ""),
        create("/memories/euro.txt", "€"),
        create("/memories/k1.txt", "x" * 1024),
        create("/memories/k11.txt", "x" * 1076),
        create("/memories/k1000.txt", "é" * 512_000),
        create("/memories/note.md", "€€\n"),
        view("/memories"),
    ],
    "view of files and view_range": [
        create("/memories/f.txt", "one\ntwo\nthree\nfour\n"),
        view("/memories/f.txt"),
        view("/memories/f.txt/"),
        view("/memories/f.txt", [2, 3]),
        view("/memories/f.txt", [3, -1]),
        view("/memories/f.txt", [0, 2]),
        view("/memories/f.txt", [-5, 1]),
        view("/memories/f.txt", [4, 2]),
        view("/memories/f.txt", [9, 12]),
        view("/memories/f.txt", [2]),
        view("/memories/f.txt", [1, 2, 3]),
        view("/memories/f.txt", []),
        view("/memories/f.txt", ["a", 2]),
        create("/memories/empty.md", ""),
        view("/memories/empty.md"),
        create("/memories/crlf.txt", "a\r\nb\r\n"),
        view("/memories/crlf.txt"),
    ],
    "view errors": [
        create("/memories/f.txt", "x"),
        view("/memories/missing.txt"),
        view("/memories/f.txt/inside.txt"),
        view("/memories/missing/deeper"),
        view("/tmp/x.txt"),
        view("memories/f.txt"),
        view("/memories/../x"),
        view("/memories/.."),
        view("/memories/d/../../x"),
        view("/memories/a\x00b"),
        view("/memories/" + "n" * 256),
        view("/memories/" + "n" * 256 + "/../f.txt"),
        create("/memories/long.txt", "\n" * 999_999),
        view("/memories/long.txt", [1, 2]),
    ],
    "create: parents made, every kind of existing path": [
        create("/memories/new/deep/er/n.md", "# deep\n"),
        create("/memories/new/deep/er/n.md", "again"),
        create("/memories/new/deep", "a folder is there"),
        create("/memories", "the root"),
        create("/memories/", "the root"),
        create("/memories/new/deep/er/n.md/x.txt", "under a file"),
        create("/memories/new/deep/er/n.md/y/z.txt", "deeper under a file"),
        create("/memories/slash.txt/", "a trailing slash makes a file"),
        create("/memories/./dots/../dots.txt", "dots"),
        view("/memories"),
        view("/memories/slash.txt"),
    ],
    "note bodies come back exactly as written": [
        create("/memories/no-newline.md", "alpha\nbeta"),
        create("/memories/many-newlines.md", "alpha\n\n\n"),
        create("/memories/only-newlines.md", "\n\n"),
        create("/memories/own-frontmatter.md", "---\ntitle: mine\ntags: [x]\n---\nbody\n"),
        create("/memories/leading.md", "\n\nlate start"),
        view("/memories/no-newline.md"),
        view("/memories/many-newlines.md"),
        view("/memories/only-newlines.md"),
        view("/memories/own-frontmatter.md"),
        view("/memories/leading.md"),
        view("/memories"),
        insert("/memories/no-newline.md", 2, "gamma"),
        view("/memories/no-newline.md"),
        replace("/memories/many-newlines.md", "alpha\n\n\n", "alpha"),
        view("/memories/many-newlines.md"),
        replace("/memories/own-frontmatter.md", "mine", "still body"),
        view("/memories/own-frontmatter.md", [1, 3]),
    ],
    "a note starting with U+FEFF, once or twice, keeps it through edits": [
        create("/memories/bom.md", "\ufeffשלום\n"),
        create("/memories/boms.md", "\ufeff\ufeff---\na: 1\n---\n"),
        create("/memories/bom-only.md", "\ufeff"),
        view("/memories/bom.md"),
        view("/memories/boms.md"),
        view("/memories/bom-only.md"),
        view("/memories"),
        insert("/memories/bom.md", 0, "top\n"),
        view("/memories/bom.md"),
        replace("/memories/boms.md", "\ufeff\ufeff", ""),
        view("/memories/boms.md"),
        replace("/memories/bom-only.md", "\ufeff", "\ufeff\ufeffx"),
        view("/memories"),
    ],
    "str_replace: snippets at the start, middle and end": [
        create("/memories/s.md", "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\n"),
        replace("/memories/s.md", "l1", "first"),
        replace("/memories/s.md", "l5", "five\nand a half"),
        replace("/memories/s.md", "l8\n", "last"),
        replace("/memories/s.md", "l2\nl3", ""),
        view("/memories/s.md"),
    ],
    "str_replace: errors": [
        create("/memories/r.txt", "aaaa\nxbx\naa\n"),
        replace("/memories/r.txt", "zzz", "y"),
        replace("/memories/r.txt", "aa", "y"),
        replace("/memories/r.txt", "x", "y"),
        replace("/memories/r.txt", "", "y"),
        replace("/memories/r.txt", "aaa", "AAA"),
        replace("/memories/missing.txt", "a", "b"),
        replace("/memories", "a", "b"),
        create("/memories/d/in.txt", "x"),
        replace("/memories/d", "a", "b"),
        replace("/memories/r.txt/below.txt", "a", "b"),
        create("/memories/e.txt", ""),
        replace("/memories/e.txt", "", "filled"),
        view("/memories/e.txt"),
    ],
    "insert: every line, and out of range": [
        create("/memories/i.md", "one\ntwo"),
        insert("/memories/i.md", 0, "zero\n\n"),
        insert("/memories/i.md", 3, "three"),
        insert("/memories/i.md", 2, "1.5\nmore"),
        insert("/memories/i.md", 99, "x"),
        insert("/memories/i.md", -1, "x"),
        insert("/memories/i.md", 6, "end"),
        view("/memories/i.md"),
        create("/memories/e.txt", ""),
        insert("/memories/e.txt", 1, "x"),
        insert("/memories/e.txt", 0, ""),
        view("/memories/e.txt"),
        insert("/memories/missing.txt", 0, "x"),
        insert("/memories", 0, "x"),
        insert("/memories/i.md/x.txt", 0, "x"),
        insert("/memories/i.md", "1", "string line"),
        view("/memories/i.md"),
    ],
    "delete: files, whole folders, errors; empty folders stay listed": [
        *NESTED,
        delete("/memories/a.txt"),
        delete("/memories/a.txt"),
        delete("/memories/proj/sub/deep/x.json"),
        view("/memories"),
        delete("/memories/proj"),
        delete("/memories/proj/notes.md"),
        delete("/memories/é/"),
        delete("/memories"),
        delete("/memories/"),
        delete("/memories/x/.."),
        delete("/memories/B.yaml/under"),
        delete("/tmp"),
        view("/memories"),
    ],
    "unknown and malformed commands": [
        {"command": "nope", "path": "/memories"},
        {"path": "/memories"},
        {"command": "view"},
        create("/memories/u.txt", "u"),
        {"command": "str_replace", "path": "/memories/u.txt", "old_str": "u"},
        {"command": "insert", "path": "/memories/u.txt", "insert_text": "x"},
        view("/memories"),
    ],
}

RENAMES: dict[str, list[dict[str, Any]]] = {
    "rename files and folders": [
        *NESTED,
        rename("/memories/a.txt", "/memories/archive/2026/a.txt"),
        rename("/memories/proj", "/memories/projects/old"),
        rename("/memories/é/ünï.csv", "/memories/é/renamed.csv"),
        view("/memories"),
        view("/memories/projects/old/notes.md"),
    ],
    "rename errors": [
        *NESTED,
        rename("/memories", "/memories/x"),
        rename("/memories/a.txt", "/memories/B.yaml"),
        rename("/memories/a.txt", "/memories/proj"),
        rename("/memories/a.txt", "/memories"),
        rename("/memories/a.txt", "/memories/a.txt"),
        rename("/memories/missing.txt", "/memories/made/on/the/way.txt"),
        rename("/memories/no/such/parent.txt", "/memories/p.txt"),
        rename("/memories/a.txt/x.txt", "/memories/p.txt"),
        rename("/memories/B.yaml", "/memories/a.txt/x.yaml"),
        rename("/memories/B.yaml", "/memories/a.txt/deeper/x.yaml"),
        rename("/memories/proj", "/memories/proj/sub/inside"),
        rename("/memories/../x", "/memories/y"),
        rename("/memories/a.txt", "/elsewhere/a.txt"),
        view("/memories"),
    ],
    "rename between a note and a text file keeps the text": [
        create("/memories/n.md", "---\nmine: 1\n---\nbody without newline"),
        rename("/memories/n.md", "/memories/n.txt"),
        view("/memories/n.txt"),
        rename("/memories/n.txt", "/memories/back.md"),
        view("/memories/back.md"),
        replace("/memories/back.md", "body", "text"),
        view("/memories"),
    ],
}


@pytest.mark.parametrize("name", list(SEQUENCES))
def test_hand_written_sequence(open_pair: Callable[[], MemoryPair], name: str) -> None:
    open_pair().run(SEQUENCES[name])


@pytest.mark.parametrize("name", list(RENAMES))
def test_hand_written_rename_sequence(
    open_pair: Callable[[], MemoryPair], offered: frozenset[str], name: str
) -> None:
    if "move" not in offered:
        pytest.skip(NO_MOVE)
    open_pair().run(RENAMES[name])


def test_hidden_items_are_left_out_of_listings(open_pair: Callable[[], MemoryPair]) -> None:
    """Dot-files and dot-folders a person put there are not listed (nor descended)."""
    pair = open_pair()
    pair.run([create("/memories/d/x.txt", "x"), create("/memories/y.md", "y")])
    for root in (pair.ref_root, pair.vault_dir):
        (root / ".hidden.txt").write_text("h")
        (root / "d" / ".obsidian").mkdir()
        (root / "d" / ".obsidian" / "app.json").write_text("{}")
    pair.run([view("/memories"), view("/memories/d"), delete("/memories/y.md"), view("/memories")])


# -- generated sequences -------------------------------------------------------------------

# A small pool of places, so that commands meet each other's files; each is spelled in
# one of the ways the SDK reads the same (or refuses).
FOLDERS = ["", "d/", "d/e/", "é/", "a b/"]
FILES = [folder + name for folder in FOLDERS for name in ("f.txt", "g.md", "c.csv")]
PLACES = [*FILES, "d", "d/e", "é", ""]
SPELLINGS = ["/memories/{}"] * 12 + [
    "/memories//{}",
    "/memories/./{}",
    "/memories/x/../{}",
    "/memories/{}/",
    "/memories{}",
    "memories/{}",
    "/memories/../{}",
]
WORDS = ["alpha", "beta", "gamma", "a", "€", " ", "\t", "\n", "\n", "\n"]
NEEDLES = ["alpha", "beta", "gamma"] * 3 + ["a", "€", "\n", "alpha\nbeta", "a\n", ""]


def paths(places: list[str]) -> st.SearchStrategy[str]:
    return st.builds(str.format, st.sampled_from(SPELLINGS), st.sampled_from(places))


def texts(path: str, carriage_returns: bool, min_size: int = 0) -> st.SearchStrategy[str]:
    """Short texts of a few words, so that a str_replace finds one once, or twice, or
    not; no CR for a note (the vault stores notes with LF: documented)."""
    words = WORDS + (["\r\n", "\r"] if carriage_returns and ".md" not in path else [])
    return st.lists(st.sampled_from(words), min_size=min_size, max_size=8).map("".join)


def command(files: list[str], places: list[str], with_rename: bool) -> Any:
    cr = not with_rename  # a rename may turn a text file into a note
    ranges = st.one_of(st.none(), st.lists(st.integers(-3, 8), max_size=3))
    options = [
        st.builds(view, paths(places), ranges),
        paths(files).flatmap(lambda p: st.builds(create, st.just(p), texts(p, cr))),
        paths(files).flatmap(
            lambda p: st.builds(replace, st.just(p), st.sampled_from(NEEDLES), texts(p, cr))
        ),
        paths(files).flatmap(
            lambda p: st.builds(insert, st.just(p), st.integers(-1, 4), texts(p, cr))
        ),
        st.builds(delete, paths(places)),
    ]
    if with_rename:
        options.append(st.builds(rename, paths(places), paths(FILES)))
    return st.one_of(options)


@st.composite
def sequences(draw: st.DrawFn, with_rename: bool) -> list[dict[str, Any]]:
    """A few places per sequence (files, their folders, the root), created first, then
    commands that meet each other's files."""
    files = draw(st.lists(st.sampled_from(FILES), min_size=1, max_size=3, unique=True))
    folders = {f.rsplit("/", 1)[0] for f in files if "/" in f}
    places = [*files, *sorted(folders), ""]
    made = [create(f"/memories/{f}", draw(texts(f, not with_rename, 2))) for f in files]
    return made + draw(st.lists(command(files, places, with_rename), min_size=1, max_size=8))


# One pair for all examples (a session costs more than a short sequence): each example
# starts with clear_all_memory on both sides, itself compared.
# 40 sequences each in the suite; DIFF_EXAMPLES=500 for a deeper run.
GENERATED = settings(
    max_examples=int(os.environ.get("DIFF_EXAMPLES", "40")), deadline=None, database=None
)


@pytest.fixture(scope="module")
def shared_pair(open_pair: Callable[[], MemoryPair]) -> MemoryPair:
    return open_pair()


@GENERATED
@given(sequence=sequences(with_rename=False))
def test_generated_sequences(shared_pair: MemoryPair, sequence: list) -> None:
    shared_pair.clear()
    _tell(sequence, shared_pair.run(sequence))


@pytest.fixture(scope="module")
def moves(offered: frozenset[str]) -> None:
    if "move" not in offered:
        pytest.skip(NO_MOVE)


@GENERATED
@given(sequence=sequences(with_rename=True))
def test_generated_sequences_with_renames(
    moves: None, shared_pair: MemoryPair, sequence: list
) -> None:
    shared_pair.clear()
    _tell(sequence, shared_pair.run(sequence))


def _tell(sequence: list[dict[str, Any]], outcomes: list[tuple[Any, bool]]) -> None:
    """What ran (``pytest --hypothesis-show-statistics``): each command, done or refused."""
    for inp, (_, is_error) in zip(sequence, outcomes, strict=True):
        event(f"{inp.get('command')}: {'refused' if is_error else 'done'}")
