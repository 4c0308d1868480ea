"""scan: the glob string fast path agrees with the general RE2 translation; a walk's
``skip_file`` leaves files out without changing which of two twin names is reached."""

from __future__ import annotations

import logging
import os
import random
import unicodedata
import uuid
from pathlib import Path

import pytest
import re2

from indexer.vault import canonical_lines
from indexer.vault.globs import SuffixGlob, _glob_regex, compile_glob
from indexer.vault.scan import MATCH_LEAD, MAX_LINE_CHARS, LineMatcher, re2_options, walk_files

PATHS = ["a.md", "x/a.md", "x/y/b.md", "md", "a.mdx", "a/b", "a.md/b", "x/y/z.txt", "日/ノ.md"]
SUFFIX_GLOBS = ["**/*.md", "*.md", "**/*", "*", "**/*.txt", "*x", "*.md.assets"]
OTHER_GLOBS = ["items/*.md", "**/n[0-2].md", "*a*b", "?.md", "**/x/*.md"]


@pytest.mark.parametrize("pattern", SUFFIX_GLOBS)
def test_suffix_fast_path_equals_the_regex(pattern: str) -> None:
    fast = compile_glob(pattern)
    assert isinstance(fast, SuffixGlob)
    slow = re2.compile(_glob_regex(pattern), re2_options())
    for path in PATHS:
        assert bool(fast.fullmatch(path)) == bool(slow.fullmatch(path)), (pattern, path)


@pytest.mark.parametrize("pattern", OTHER_GLOBS)
def test_other_globs_use_re2(pattern: str) -> None:
    assert not isinstance(compile_glob(pattern), SuffixGlob)


@pytest.mark.parametrize(
    "pattern", ["cafe\u0301*", "**/cafe\u0301.md", "x/re\u0301sume\u0301/*.md"]
)
def test_a_glob_typed_in_nfd_matches_the_nfc_paths(pattern: str) -> None:
    """The paths a glob is matched against are NFC, as the tools name them: a pattern
    typed or copied in NFD (macOS) found nothing."""
    paths = ["café.md", "a/café.md", "x/résumé/n.md"]
    assert any(compile_glob(pattern).fullmatch(path) for path in paths), pattern


def _walk(root: Path, skip: set[str]) -> list[tuple[str, str]]:
    """(vault path, name on disk) of every file a walk of ``root`` yields."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        asked: list[str] = []

        def skip_file(rel: str, entry: os.DirEntry[str]) -> bool:
            asked.append(rel)
            return rel in skip

        found = [(e.rel, e.name) for e in walk_files(fd, "", skip_file=skip_file)]
        assert skip <= set(asked)
        return found
    finally:
        os.close(fd)


def test_skip_file_leaves_files_out(tmp_path: Path) -> None:
    for rel in ("a.md", "b.md", "d/c.md", "d/e/f.md", ".hidden.md", "d/.g.md"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    assert [rel for rel, _ in _walk(tmp_path, set())] == ["a.md", "b.md", "d/c.md", "d/e/f.md"]
    assert [rel for rel, _ in _walk(tmp_path, {"b.md", "d/e/f.md"})] == ["a.md", "d/c.md"]


@pytest.mark.parametrize(
    ("names", "reached"),
    [
        (["caf\u00e9.md", "cafe\u0301.md"], "caf\u00e9.md"),  # NFC and NFD spellings
        (["\u1112\u1161\u11ab.md", "\ud55c.md"], "\ud55c.md"),  # Hangul, jamo and syllable
    ],
)
def test_a_skipped_name_still_hides_its_twin(
    tmp_path: Path, names: list[str], reached: str
) -> None:
    for name in names:
        (tmp_path / name).write_text(name)
    assert _walk(tmp_path, set()) == [(reached, reached)]
    assert _walk(tmp_path, {reached}) == []


@pytest.mark.parametrize(
    ("nfc", "other"),
    [("caf\u00e9", "cafe\u0301"), ("\ud55c", "\u1112\u1161\u11ab")],
)
def test_a_skipped_twin_is_named_apart_from_the_name_listed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, nfc: str, other: str
) -> None:
    """The log line of a second spelling left out must not read exactly as the name the
    tools list ("skipped ext/café.md: another name in its folder reads the same" while
    ext/café.md was listed, read and searched: which one to rename?)."""
    tag = uuid.uuid4().hex  # (each path is warned of once per process)
    for name in (nfc, other):
        (tmp_path / f"{tag}{name}.md").write_text(name)
    with caplog.at_level(logging.WARNING, logger="indexer"):
        assert _walk(tmp_path, set()) == [(f"{tag}{nfc}.md", f"{tag}{nfc}.md")]
    (line,) = [r.getMessage() for r in caplog.records if "reads the same" in r.getMessage()]
    shown = "".join(c if c.isascii() else f"\\u{ord(c):04x}" for c in other)
    assert line.startswith(f"skipped {tag}{shown}.md: "), line


def test_a_literal_whose_case_matters_finds_the_lines_that_hold_it() -> None:
    """The fast path (str.find, no re2) gives exactly the lines a per-line substring test
    gives: several hits on a line, hits on the first and last line, no final newline,
    overlapping hits, CJK, astral and decomposed characters (a line and a literal read
    composed, ``canonical_lines``), CR before LF (a CRLF line end is a line end, as read),
    and a literal spanning lines (in no line)."""
    rnd = random.Random(15)
    pieces = ["a", "b", "ab", "\n", "\r", "東", "京", "é", "e\u0301", " ", "A", "🙂", "\n\n"]
    for _ in range(5000):
        text = "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 40)))
        literal = "".join(rnd.choice(pieces) for _ in range(rnd.randint(1, 3)))
        expected = [
            (number, line[:MAX_LINE_CHARS])
            for number, line in enumerate(text.replace("\r\n", "\n").split("\n"), start=1)
            if unicodedata.normalize("NFC", literal) in unicodedata.normalize("NFC", line)
        ]
        matcher = LineMatcher(literal, fixed=True, ignore_case=False)
        assert list(canonical_lines.matching_lines(matcher, text)) == expected, (text, literal)
    long_line = "x" * 1000 + "needle" + "y" * 10
    (hit,) = LineMatcher("needle", fixed=True, ignore_case=False).matching_lines(long_line)
    assert hit == (1, "…" + long_line[1000 - MATCH_LEAD :])


@pytest.mark.parametrize(
    ("pattern", "fixed", "ignore_case"),
    [("needle", True, False), ("NEEDLE", True, True), ("ne+dle", False, False)],
)
def test_a_match_far_into_a_long_line_is_shown(
    pattern: str, fixed: bool, ignore_case: bool
) -> None:
    """A line longer than grep shows was shown from its start: a match past its first
    500 characters (a note of one line of 1 MB, in Thai) was not in the result."""
    matcher = LineMatcher(pattern, fixed=fixed, ignore_case=ignore_case)
    early = "needle " + "x" * 1000
    assert list(matcher.matching_lines(early)) == [(1, early[:MAX_LINE_CHARS])]
    far = "ก่" * 200_000 + " the needle here " + "ข" * 100_000
    ((number, shown),) = matcher.matching_lines(far)
    assert number == 1 and shown.startswith("…ก่") and "the needle here ขขข" in shown
    assert len(shown) == MAX_LINE_CHARS and MATCH_LEAD < shown.index("needle") <= MATCH_LEAD + 2
    marks = "e" + "\u0301" * 5000 + " needle"  # (never a mark without its letter first)
    ((_, shown),) = matcher.matching_lines(marks)
    assert "needle" in shown and shown[1] != "\u0301"


@pytest.mark.parametrize("fixed", [False, True])
def test_a_windows_file_is_read_as_lines_like_any_other(fixed: bool) -> None:
    """A CRLF file's lines ended in ``\r``: ``here$`` and ``^---$`` matched none of them,
    every line shown carried the ``\r``; a first line after a BOM missed ``^---``."""
    text = "\ufeff---\r\ntitle: T\r\n---\r\nit is here\r\nTODO: fix\r\nlast here"
    cases = {"here$": [(4, "it is here"), (6, "last here")], "^---$": [(1, "---"), (3, "---")]}
    cases |= {"^TODO: fix$": [(5, "TODO: fix")], "^---": [(1, "---"), (3, "---")]}
    if fixed:
        cases = {"here": [(4, "it is here"), (6, "last here")], "---": [(1, "---"), (3, "---")]}
    for pattern, lines in cases.items():
        matcher = LineMatcher(pattern, fixed=fixed, ignore_case=False)
        assert list(matcher.matching_lines(text)) == lines, pattern
        assert list(matcher.matching_lines(text.replace("\r\n", "\n"))) == lines, pattern


@pytest.mark.parametrize("pattern", ["^$", "^", ".*", "x*", "$"])
def test_no_line_after_the_last_newline(pattern: str) -> None:
    """As grep and rg count lines: a final newline ends the last line (it starts none),
    and an empty file has no line; an empty line before the end is one."""
    matcher = LineMatcher(pattern, fixed=False, ignore_case=False)
    every = pattern != "^$"
    cases = {
        "": [],
        "a": [(1, "a")] if every else [],
        "a\nb\n": [(1, "a"), (2, "b")] if every else [],
        "a\n\n": [(1, "a"), (2, "")] if every else [(2, "")],
        "\n": [(1, "")],
        "a\r\n": [(1, "a")] if every else [],  # (a CRLF line end, as ``rg --crlf``)
    }
    for text, expected in cases.items():
        assert list(matcher.matching_lines(text)) == expected, (pattern, text)


@pytest.mark.parametrize(
    ("pattern", "good", "bad"),
    [
        ("**/*.{md,canvas}", ["a.md", "x/b.canvas"], ["c.base", "d.md.bak"]),
        ("*.{png,svg}", ["a.png", "b.svg"], ["x/a.png", "a.jpg"]),
        ("{items,events/**}/*.md", ["items/a.md", "events/2026/01.md"], ["notes/a.md"]),
        ("a{b,{c,d}e}.md", ["ab.md", "ace.md", "ade.md"], ["ae.md", "a{b.md"]),
        ("x{1}.md", ["x{1}.md"], ["x1.md"]),
        ("x{.md", ["x{.md"], ["x.md"]),
    ],
)
def test_braces_are_alternatives_as_in_rg(pattern: str, good: list[str], bad: list[str]) -> None:
    """``**/*.{md,canvas}`` (rg's glob, and agents' glob tools) found nothing: the
    braces were read as text. Braces without a comma stay text, as in a shell."""
    regex = compile_glob(pattern)
    assert all(regex.fullmatch(p) for p in good), pattern
    assert not any(regex.fullmatch(p) for p in bad), pattern


def test_a_walk_for_alternatives_of_other_depths_goes_deep_enough() -> None:
    from indexer.vault.globs import glob_depth

    assert glob_depth("{*.md,x/*.md}") is None
    assert glob_depth("x{1}.md") == 1
