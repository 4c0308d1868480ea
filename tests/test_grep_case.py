"""grep's ``ignore_case``: the Turkish ``İ`` and ``ı`` are ``i`` (RE2 left them apart),
with and without the index's plan, and nothing else changes."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.snapshots import snapshot

from indexer.index.service import NoteIndex
from indexer.vault.sandbox import Sandbox
from indexer.vault.scan import LineMatcher
from indexer.vault.vault import Vault
from shared.errors import ForbiddenPathError, InvalidArgumentError
from shared.workspace import Workspace

TEXT = "İstanbul\nISTANBUL\nistanbul\nıstanbul\nILIK su\nılık su\nIlık su\nother line\n"


def _lines(pattern: str, *, fixed: bool, ignore_case: bool, text: str = TEXT) -> list[int]:
    matcher = LineMatcher(pattern, fixed=fixed, ignore_case=ignore_case)
    return [number for number, _ in matcher.matching_lines(text)]


@pytest.mark.parametrize("fixed", [True, False])
def test_the_four_is_are_one_letter_to_ignore_case(fixed: bool) -> None:
    """``istanbul`` missed ``İstanbul``, ``ılık`` missed ``ILIK`` (RE2's folding keeps
    ``İ`` and ``ı`` apart from ``i`` and ``I``)."""
    for pattern in ("istanbul", "ISTANBUL", "İstanbul", "ıstanbul", "İSTANBUL"):
        assert _lines(pattern, fixed=fixed, ignore_case=True) == [1, 2, 3, 4], pattern
    for pattern in ("ılık su", "ILIK SU", "ilik su", "İLİK su"):
        assert _lines(pattern, fixed=fixed, ignore_case=True) == [5, 6, 7], pattern


@pytest.mark.parametrize("fixed", [True, False])
def test_case_that_matters_stays_exact(fixed: bool) -> None:
    assert _lines("istanbul", fixed=fixed, ignore_case=False) == [3]
    assert _lines("İstanbul", fixed=fixed, ignore_case=False) == [1]
    assert _lines("ılık", fixed=fixed, ignore_case=False) == [6]


def test_regex_constructs_around_the_dotted_letters() -> None:
    """Classes, alternatives and repeats read the folded letters; an escape naming ``İ``
    still finds it; a range ending at ``ı`` is left as written; a part made case
    sensitive again (``(?-i:...)``) is exact."""
    assert _lines("^[İı]stanbul$", fixed=False, ignore_case=True) == [1, 2, 3, 4]
    assert _lines("^(?:ı|x)stanbul$", fixed=False, ignore_case=True) == [1, 2, 3, 4]
    assert _lines("^\\x{130}stanbul", fixed=False, ignore_case=True) == [1]
    assert _lines("^[a-ı]stanbul", fixed=False, ignore_case=True) == [1, 2, 3, 4]
    assert _lines("^İ{1}stanbul$", fixed=False, ignore_case=True) == [1, 2, 3, 4]
    assert _lines("(?-i:İ)stanbul", fixed=False, ignore_case=True) == [1]
    assert _lines("(?i)istanbul", fixed=False, ignore_case=False) == [1, 2, 3, 4]
    assert _lines("(?i:ı)stanbul", fixed=False, ignore_case=False) == [4]  # (not throughout)
    assert _lines("\\bilik\\b", fixed=False, ignore_case=True, text="a ılık\nb ILIK\n") == [1, 2]


def test_lines_keep_their_numbers_and_text() -> None:
    text = "x\r\nİzmir and ızgara\r\n" + "y\n" * 5 + "İZMİR"
    matcher = LineMatcher("izmir", fixed=False, ignore_case=True)
    assert list(matcher.matching_lines(text)) == [(2, "İzmir and ızgara"), (8, "İZMİR")]


def test_the_index_plan_keeps_the_matches(ws: Workspace, index: NoteIndex, tmp_path: Path) -> None:
    """The trigram candidates hold ``İ`` and ``ı`` as ``i``: grep with the plan finds what
    reading every file finds."""
    root = ws.vault_dir("en")
    root.mkdir(parents=True)
    for name, text in {"a.md": "İstanbul\n", "b.md": "ISTANBUL\n", "c.md": "ılık\n"}.items():
        (root / name).write_text(text, encoding="utf-8")
    (root / "d.md").write_text("nothing here\n", encoding="utf-8")
    index.reconcile()
    planned = Vault(Sandbox(ws), max_file_bytes=1 << 20)
    planned.grep_planner = index.grep_plan
    plain = Vault(Sandbox(ws), max_file_bytes=1 << 20)
    for pattern, expected in {"istanbul": ["a.md", "b.md"], "ILIK": ["c.md"]}.items():
        for fixed in (True, False):
            assert index.grep_plan("en", pattern, fixed, True) is not None
            for vault in (planned, plain):
                found = vault.grep("en", pattern, fixed=fixed, ignore_case=True)
                assert sorted(m["path"] for m in found["matches"]) == expected, pattern


@pytest.mark.parametrize("fixed", [True, False])
def test_a_lone_surrogate_in_the_pattern_is_refused_by_name(fixed: bool) -> None:
    # (re2 reads UTF-8: it raised UnicodeEncodeError to a caller that did not check)
    with pytest.raises(InvalidArgumentError, match="the grep pattern is not valid text"):
        LineMatcher("\ud800abc", fixed=fixed, ignore_case=False)


@pytest.mark.parametrize("glob", ["**/*\ud800.md", "\ud800*", "items/\udc80.md", "{a.md,\udfff}"])
def test_a_lone_surrogate_in_the_glob_or_the_path_is_refused_by_name(
    ws: Workspace, glob: str
) -> None:
    """A glob holding one raised UnicodeEncodeError from RE2 (an internal error over a
    transport), or matched nothing, silently (``**/*`` and a suffix: no RE2); the path was
    already refused as no path."""
    vault = Vault(Sandbox(ws), max_file_bytes=1 << 20)
    vault.write("en", "items/a.md", "# a\nalpha\n")
    before = snapshot(ws.root)
    with pytest.raises(InvalidArgumentError, match=r"^invalid_argument: the glob pattern is not"):
        vault.grep("en", "alpha", "", glob)
    with pytest.raises(InvalidArgumentError, match=r"^invalid_argument: the glob pattern is not"):
        vault.find("en", glob)  # (find's pattern is a glob too)
    with pytest.raises(ForbiddenPathError, match=r"^forbidden_path: the path is not valid UTF-8"):
        vault.grep("en", "alpha", "items/\ud800", "**/*.md")
    assert snapshot(ws.root) == before
    found = vault.grep("en", "alpha", "items", "*.md")["matches"]
    assert [match["path"] for match in found] == ["items/a.md"]
