"""NoteIndex on real files and a real SQLite file: search, CJK recall, filters, grep plans,
schema handling, read-your-writes and never touching the vault."""

from __future__ import annotations

import hashlib
import json
import os
import random
import threading
import time
import unicodedata
from pathlib import Path

import pytest

from indexer.index.parse import lang_token
from indexer.index.schema import SCHEMA_VERSION
from indexer.index.service import NoteIndex
from indexer.sqlite_lib import sqlite3
from indexer.vault.sandbox import Sandbox
from indexer.vault.vault import Vault
from shared.errors import IndexSchemaError, InvalidArgumentError, InvalidLangError, OperationalError
from shared.workspace import Workspace

ZH = "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学对"
JA_KANJI = "日本語東京大学電車会社時間先生友達料理映画音楽"
KANA = "のはがをにでともへやかなしたてりるれいうえおあきくけこさすせそ"


def note(fm: str, body: str) -> str:
    return f"---\n{fm}\n---\n{body}" if fm else body


def put(ws: Workspace, lang: str, rel: str, text: str) -> Path:
    path = ws.vault_dir(lang) / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def paths(result: dict) -> list[str]:
    return [hit["path"] for hit in result["results"]]


def fingerprint(ws: Workspace) -> dict[str, tuple[str, int]]:
    out = {}
    for path in sorted(ws.languages_dir.rglob("*")):
        if path.is_file():
            out[str(path)] = (
                hashlib.sha256(path.read_bytes()).hexdigest(),
                path.stat().st_mtime_ns,
            )
    return out


# -- search ---------------------------------------------------------------------------------


def test_words_all_must_match_and_phrases_are_adjacent(ws: Workspace, index: NoteIndex) -> None:
    put(ws, "en", "a.md", note("title: Verbs", "irregular verbs are fun"))
    put(ws, "en", "b.md", note("title: Other", "verbs that are irregular"))
    put(ws, "en", "c.md", note("title: Third", "only verbs here"))
    index.reconcile()
    assert sorted(paths(index.search("en", "irregular verbs"))) == ["a.md", "b.md"]
    assert paths(index.search("en", '"irregular verbs"')) == ["a.md"]
    assert paths(index.search("en", "verbs fun")) == ["a.md"]


def test_a_note_without_frontmatter_is_titled_by_its_underlined_heading(
    ws: Workspace, index: NoteIndex
) -> None:
    """A README's ``Title`` over ``=====``: the file's name was the title."""
    put(ws, "en", "readme.md", "Project Atlas\n=============\n\nMaps for the field trip.\n")
    index.reconcile()
    (hit,) = index.search("en", "atlas")["results"]
    assert hit["title"] == "Project Atlas"


def test_an_or_in_capitals_between_words_makes_alternatives(
    ws: Workspace, index: NoteIndex
) -> None:
    """Agents write ``penicillin OR amoxicillin``: it found only notes holding both and
    a word "or"; now either side, each side's words all required, the rest as before."""
    put(ws, "en", "a.md", note("title: A", "allergic to penicillin"))
    put(ws, "en", "b.md", note("title: B", "amoxicillin makes a rash"))
    put(ws, "en", "c.md", note("title: C", "cat food or dog food, both bought"))
    put(ws, "en", "d.md", note("title: D", "dog toys and cat beds"))
    put(ws, "en", "e.md", note("title: E", "東京 or 大阪, which is bigger"))
    index.reconcile()
    found = index.search("en", "penicillin OR amoxicillin")
    assert sorted(paths(found)) == ["a.md", "b.md"] and found["total"] == 2
    assert "**penicillin**" in found["results"][0]["snippet"] + found["results"][1]["snippet"]
    assert sorted(paths(index.search("en", "cat food OR dog toys"))) == ["c.md", "d.md"]
    assert paths(index.search("en", '"cat food" OR "dog food" both')) == ["c.md"]
    assert sorted(paths(index.search("en", "大阪 OR penicillin"))) == ["a.md", "e.md"]
    # lowercase, or an OR with nothing on one side, is the word
    assert paths(index.search("en", "cat or dog")) == ["c.md"]
    assert paths(index.search("en", "OR bought")) == ["c.md"]
    assert sorted(paths(index.search("en", "OR"))) == ["c.md", "e.md"]
    assert paths(index.search("en", "dog OR", path="", limit=5)) == ["c.md"]
    assert index.search("en", "penicillin OR amoxicillin", offset=1)["total"] == 2


def test_a_minus_or_not_in_capitals_leaves_out_the_notes_holding_a_word(
    ws: Workspace, index: NoteIndex
) -> None:
    """Agents write ``python -java`` as search engines read it: the ``-java`` was the
    word java, so the notes found were the ones it meant to leave out."""
    put(ws, "en", "a.md", note("title: A", "python and java together"))
    put(ws, "en", "b.md", note("title: B", "python alone, no coffee"))
    put(ws, "en", "c.md", note("title: C", "python with java script tricks"))
    put(ws, "en", "d.md", note("title: D", "the command ls -la lists python files"))
    put(ws, "en", "e.md", note("title: E", "ruby gems, java beans"))
    index.reconcile()
    alone = index.search("en", "python -java")
    assert sorted(paths(alone)) == ["b.md", "d.md"] and alone["total"] == 2
    assert "**python**" in alone["results"][0]["snippet"]  # (the words left out: no mark)
    assert sorted(paths(index.search("en", "python NOT java"))) == ["b.md", "d.md"]
    assert sorted(paths(index.search("en", 'python -"java script"'))) == ["a.md", "b.md", "d.md"]
    assert sorted(paths(index.search("en", "python -jav*"))) == ["b.md", "d.md"]
    assert sorted(paths(index.search("en", "python -java OR ruby"))) == ["b.md", "d.md", "e.md"]
    assert sorted(paths(index.search("en", "python -java -la"))) == ["b.md"]
    # quoted, inside a word, doubled or before a number, a minus is text; "not" is a word
    assert paths(index.search("en", '"ls -la"')) == ["d.md"]
    assert paths(index.search("en", "coffee --no")) == ["b.md"]
    assert paths(index.search("en", "python NOT")) == []  # (the word "not")
    for refused in ("-java", "NOT java", "python OR -java", '-"java script"'):
        with pytest.raises(InvalidArgumentError, match="only leaves words out"):
            index.search("en", refused)


def test_a_note_found_by_its_title_alone_with_no_body(ws: Workspace, index: NoteIndex) -> None:
    """A hit whose body is empty (frontmatter only, a heading-less empty file found by
    its name) failed the whole search: SQLite's ``substr`` of an empty blob is NULL."""
    put(ws, "en", "quokka.md", note("title: Quokka facts", ""))
    put(ws, "en", "quokka-two.md", note("title: Quokka more", "\n"))
    put(ws, "en", "quokka 3.md", "")
    index.reconcile()
    found = index.search("en", "quokka")
    assert sorted(paths(found)) == ["quokka 3.md", "quokka-two.md", "quokka.md"]
    assert all(hit["snippet"] == "" for hit in found["results"]), found


def test_the_type_filter_folds_as_the_tags_filter_does(ws: Workspace, index: NoteIndex) -> None:
    """``type: Ghi chú`` typed composed found only the notes that spell it composed, and
    ``Item`` or a full-width ``ｉｔｅｍ`` no ``type: item`` (the tags filter folds all)."""
    composed, decomposed = "Ghi ch\u00fa", "Ghi chu\u0301"
    put(ws, "vi", "a.md", note(f"type: {composed}", "alpha"))
    put(ws, "vi", "b.md", note(f"type: {decomposed}", "alpha"))
    put(ws, "vi", "c.md", note("type: ghi chú", "alpha"))
    put(ws, "vi", "d.md", note("type: item", "alpha"))
    put(ws, "vi", "e.md", note("type: Café", "alpha"))
    index.reconcile()
    for typed in (composed, decomposed, "GHI CHÚ"):
        assert sorted(paths(index.search("vi", "alpha", type=typed))) == ["a.md", "b.md", "c.md"]
    for typed in ("Item", "ｉｔｅｍ", "ITEM"):
        assert paths(index.search("vi", "alpha", type=typed)) == ["d.md"]
    assert paths(index.search("vi", "alpha", type="café")) == ["e.md"]
    assert paths(index.search("vi", "alpha", type="items")) == []
    assert paths(index.search("vi", "alpha", type="x" * 300 + "\u00fa")) == []


def test_title_matches_rank_above_body_matches(ws: Workspace, index: NoteIndex) -> None:
    put(ws, "en", "body.md", note("title: Something else", "kangaroo " * 40))
    put(ws, "en", "long.md", note("title: Kangaroo", "word " * 2000 + "kangaroo"))
    put(ws, "en", "none.md", note("title: Unrelated", "nothing to see"))
    index.reconcile()
    result = index.search("en", "kangaroo")
    assert paths(result) == ["long.md", "body.md"]
    assert result["results"][0]["title"] == "Kangaroo"
    assert "**kangaroo**" in result["results"][1]["snippet"]


def test_a_word_every_note_holds_still_scores_above_zero(ws: Workspace, index: NoteIndex) -> None:
    """FTS5 floors the IDF of a word in over half the notes at 1e-6: four decimals showed
    every such hit as 0.0, and recall's hits alike."""
    for count in (1, 3, 9):
        put(ws, "en", f"n{count}.md", note(f"title: n{count}", "common " * count + "filler"))
    index.reconcile()
    scores = [hit["score"] for hit in index.search("en", "common")["results"]]
    assert len(scores) == 3 and all(score > 0 for score in scores), scores
    assert scores == sorted(scores, reverse=True) and len(set(scores)) == 3
    assert all(hit["score"] > 0 for hit in index.search_any("en", ["common"]))


def test_filters_type_tags_and_folder(ws: Workspace, index: NoteIndex) -> None:
    put(ws, "en", "items/a.md", note("type: item\ntags: [grammar, Verbs]", "alpha"))
    put(ws, "en", "items/sub/b.md", note("type: summary\ntags: '#grammar'", "alpha"))
    put(ws, "en", "items2/c.md", note("type: item\ntags: [other]", "alpha"))
    put(ws, "en", "d.md", "alpha without frontmatter")
    index.reconcile()
    assert len(paths(index.search("en", "alpha"))) == 4
    assert sorted(paths(index.search("en", "alpha", type="item"))) == ["items/a.md", "items2/c.md"]
    assert sorted(paths(index.search("en", "alpha", tags=["grammar"]))) == [
        "items/a.md",
        "items/sub/b.md",
    ]
    assert paths(index.search("en", "alpha", tags=["#grammar", "verbs"])) == ["items/a.md"]
    assert sorted(paths(index.search("en", "alpha", path="items"))) == [
        "items/a.md",
        "items/sub/b.md",
    ]
    assert paths(index.search("en", "alpha", path="/items/sub/")) == ["items/sub/b.md"]
    assert paths(index.search("en", "alpha", path="items", type="summary")) == ["items/sub/b.md"]
    assert paths(index.search("en", "alpha", limit=1)) != []
    assert len(paths(index.search("en", "alpha", limit=2))) == 2
    for blank in ("", "  "):  # found nothing, silently
        with pytest.raises(InvalidArgumentError, match="type must name a type"):
            index.search("en", "alpha", type=blank)


def test_the_tags_filter_finds_inline_tags_as_obsidian_does(
    ws: Workspace, index: NoteIndex
) -> None:
    """A vault kept in Obsidian tags notes in their text (``#project``): the filter found
    frontmatter tags only. Code holds none, nor does a plain text file."""
    put(ws, "en", "a.md", note("", "# Plan\nWork on #project/alpha today."))
    put(ws, "en", "b.md", note("tags: [other]", "Also #Project and #中文标签。"))
    put(ws, "en", "c.md", note("", "```\n#project in code\n```\nplain text, #123"))
    put(ws, "en", "d.txt", "a text file #project")
    put(ws, "en", "e.md", note("", "#other only"))
    index.reconcile()
    assert sorted(paths(index.search("en", "project", tags=["project"]))) == ["a.md", "b.md"]
    assert paths(index.search("en", "project", tags=["project/alpha"])) == ["a.md"]
    assert paths(index.search("en", "also", tags=["other", "中文标签"])) == ["b.md"]
    assert sorted(paths(index.search("en", "other", tags=["other"]))) == ["b.md", "e.md"]
    assert paths(index.search("en", "plain", tags=["123"])) == []


def test_a_tag_finds_the_tags_nested_below_it(ws: Workspace, index: NoteIndex) -> None:
    """``project`` found only ``project``, never ``project/alpha`` (Obsidian's tag search
    finds both); a tag is a whole segment (not ``projects``, nor ``project-x``)."""
    put(ws, "en", "a.md", note("tags: [project]", "alpha"))
    put(ws, "en", "b.md", note("tags: [Project/Alpha/deep]", "alpha"))
    put(ws, "en", "c.md", note("tags: [projects, project-x, project0, 'project.x']", "alpha"))
    put(ws, "en", "d.md", note("tags: [其他/项目/子项]", "alpha"))
    index.reconcile()
    assert sorted(paths(index.search("en", "alpha", tags=["project"]))) == ["a.md", "b.md"]
    assert paths(index.search("en", "alpha", tags=["#PROJECT/alpha"])) == ["b.md"]
    assert paths(index.search("en", "alpha", tags=["project/alpha/deep"])) == ["b.md"]
    assert paths(index.search("en", "alpha", tags=["project/al"])) == []
    assert paths(index.search("en", "alpha", tags=["alpha"])) == []  # (a segment below: no)
    assert paths(index.search("en", "alpha", tags=["其他/项目"])) == ["d.md"]
    assert paths(index.search("en", "alpha", tags=["project", "alpha/deep"])) == []
    assert sorted(paths(index.search("en", "alpha", tags=["project/"]))) == ["a.md", "b.md"]
    assert paths(index.search("en", "alpha", tags=["project/alpha/"])) == ["b.md"]
    put(ws, "en", "e.md", note("tags: [area/]", "alpha"))
    index.reconcile()
    assert paths(index.search("en", "alpha", tags=["area"])) == ["e.md"]


def test_a_folder_whose_name_starts_with_white_space_is_its_own(
    ws: Workspace, index: NoteIndex
) -> None:
    """`` Inbox`` (a name the tools take) was searched as ``Inbox``."""
    for folder in ("Inbox", " Inbox", "\u3000Inbox"):
        put(ws, "en", f"{folder}/a.md", "alpha\n")
    index.reconcile()
    for folder in ("Inbox", " Inbox", "\u3000Inbox"):
        assert paths(index.search("en", "alpha", path=folder)) == [f"{folder}/a.md"]
        assert [r["path"] for r in index.recent("en", 5, folder)] == [f"{folder}/a.md"]
        assert [r["path"] for r in index.search_any("en", ["alpha"], 5, folder)] == [
            f"{folder}/a.md"
        ]


@pytest.mark.parametrize(
    "tag", ["Ärger", "Москва", "Éclair", "ΑΘΗΝΑ", "İzmir", "Straße", "東京", "Berlin"]
)
def test_tags_match_whatever_their_case_script_and_normalization(
    ws: Workspace, index: NoteIndex, tag: str
) -> None:
    """The filter lowered the asked tags in Python and the note's with SQLite's lower(),
    which folds ASCII only: a tag with a capital beyond ASCII was never found, even
    spelled as in the note; nor one written decomposed (NFD)."""
    nfd = unicodedata.normalize("NFD", tag)
    put(ws, "en", "a.md", note(f"tags: [{tag}]", "alpha"))
    put(ws, "en", "b.md", note(f"tags: ['#{nfd}', other]", "alpha"))
    put(ws, "en", "c.md", note("tags: [elsewhere]", "alpha"))
    index.reconcile()
    for asked in {tag, nfd, tag.lower(), tag.upper(), tag.casefold(), f"#{tag.upper()} "}:
        found = index.search("en", "alpha", tags=[asked])
        assert sorted(paths(found)) == ["a.md", "b.md"], asked
    assert paths(index.search("en", "alpha", tags=[tag, "other"])) == ["b.md"]


def test_tags_that_yaml_1_1_read_as_booleans_or_numbers_are_found_as_written(
    ws: Workspace, index: NoteIndex
) -> None:
    """Tags ``[no, on, 010]`` were indexed as "False", "True" and "8" (YAML 1.1): the
    filter for the words found nothing. The folded tags are kept in the row, once each."""
    put(ws, "en", "a.md", note("tags: [no, On, '#On', 010, Ärger]", "alpha"))
    index.reconcile()
    for asked in (["no"], ["on"], ["010"], ["ärger", "NO"]):
        assert paths(index.search("en", "alpha", tags=asked)) == ["a.md"], asked
    for asked in (["false"], ["true"], ["8"]):
        assert paths(index.search("en", "alpha", tags=asked)) == [], asked
    with index._db.read() as conn:
        (keys,) = conn.execute("SELECT tag_keys FROM notes").fetchone()
    assert json.loads(keys) == ["no", "on", "010", "ärger"]


def test_tags_in_full_or_half_width_match_the_plain_letters(
    ws: Workspace, index: NoteIndex
) -> None:
    """Search reads ``ＡＩ`` as ``AI``; the tags filter compared them apart."""
    put(ws, "en", "a.md", note("tags: [ＡＩ, ｱｲｳ]", "alpha"))
    put(ws, "en", "b.md", note("tags: [ai, アイウ]", "alpha"))
    put(ws, "en", "c.md", note("tags: ['＃ＡＩ']", "alpha"))  # (as Japanese input types it)
    index.reconcile()
    for asked in (["ai"], ["AI"], ["ＡＩ"], ["＃ＡＩ"], ["#ai"], ["ａｉ"]):
        found = sorted(paths(index.search("en", "alpha", tags=asked)))
        assert found == ["a.md", "b.md", "c.md"], asked
    for asked in (["アイウ"], ["ｱｲｳ"], ["ai", "ｱｲｳ"]):
        assert sorted(paths(index.search("en", "alpha", tags=asked))) == ["a.md", "b.md"], asked


def test_a_blank_tag_is_refused(ws: Workspace, index: NoteIndex) -> None:
    """A blank tag (REST ``tag=``) matched no note, silently, as a blank type did."""
    put(ws, "en", "a.md", note("tags: [grammar]", "alpha"))
    index.reconcile()
    for blank in ([""], [" "], ["#"], ["grammar", " # "]):
        with pytest.raises(InvalidArgumentError, match="each tag must name a tag"):
            index.search("en", "alpha", tags=blank)
    assert paths(index.search("en", "alpha", tags=[])) == ["a.md"]  # no filter


def test_a_tag_too_long_to_be_one_is_refused_before_it_is_read(
    ws: Workspace, index: NoteIndex
) -> None:
    """A tag of 156 KiB of marks out of order held the server 8 s (NFC's insertion sort),
    and a million tags were all folded before their count was checked."""
    put(ws, "en", "a.md", note("tags: [grammar]", "alpha"))
    index.reconcile()
    started = time.thread_time()
    marks = "a" + "\u0301\u0316" * 40_000
    with pytest.raises(InvalidArgumentError, match="at most 256 characters"):
        index.search("en", "alpha", tags=[marks])
    with pytest.raises(InvalidArgumentError, match="at most 32 tags"):
        index.search("en", "alpha", tags=[f"t{n}" for n in range(200_000)])
    assert time.thread_time() - started < 1.0


def test_langs_are_separate(ws: Workspace, index: NoteIndex) -> None:
    put(ws, "en", "a.md", "shared word")
    put(ws, "zh-Hans", "a.md", "shared word")
    put(ws, "zh", "a.md", "shared word")
    index.reconcile()
    assert paths(index.search("zh", "shared")) == ["a.md"]
    assert index.counts() == {"en": 1, "zh": 1, "zh-Hans": 1}
    assert index.search("fr", "shared")["results"] == []


@pytest.mark.parametrize("langs", [["en"], ["en", "zh-Hans"]])
def test_the_lang_token_finds_only_notes_holding_it(
    ws: Workspace, index: NoteIndex, langs: list[str]
) -> None:
    """The word the index stores for a note's lang (``l656e`` for en) found every note of
    the vault, whether the index held one lang or several."""
    for lang in langs:
        put(ws, lang, "a.md", "note about nothing")
        put(ws, lang, "b.md", "note about nothing")
    put(ws, "en", "c.md", "a note with the token l656e written out")
    index.reconcile()
    token = lang_token("en")
    assert token == "l656e"
    for spelled in (token, "L656E", "ľ656e", "l656*"):  # (FTS5 folds case and marks)
        found = index.search("en", spelled)
        assert (paths(found), found["total"]) == (["c.md"], 1), spelled
    for short in ("l\u0308\u0308*", "\u0308\u0308\u0308*", "nothing l\u0308\u0308*"):
        with pytest.raises(InvalidArgumentError, match="too short"):  # (FTS5: ``l*``, ``*``)
            index.search("en", short)
    assert paths(index.search("en", f'"{token} written"')) == ["c.md"]
    assert [hit["path"] for hit in index.search_any("en", [token, "zzz"])] == ["c.md"]
    assert [hit["path"] for hit in index.search_any("en", ["token\x00", "\x00"])] == ["c.md"]
    assert index.search("zh-Hans", lang_token("zh-Hans"))["total"] == 0
    assert sorted(paths(index.search("en", "note"))) == ["a.md", "b.md", "c.md"]


HOSTILE = [
    '"',
    '"""',
    'a"b"c"',
    "NOT",
    "AND OR NOT",
    "col:value",
    "{title}: x",
    "title:x",
    "a*",
    "*a",
    "^a",
    "(a",
    "a)",
    "NEAR(a b, 3)",
    "'; DROP TABLE notes; --",
    "\\",
    "%_%",
    "\x00nul",
    "a\u200bb",
    "😀 emoji",
    "x" * 10_000,
    " ".join(["word"] * 64),
]


@pytest.mark.parametrize("query", HOSTILE)
def test_hostile_queries_search_or_refuse_cleanly(
    ws: Workspace, index: NoteIndex, query: str
) -> None:
    put(ws, "en", "a.md", "word value title x a b")
    index.reconcile()
    try:
        result = index.search("en", query)
    except InvalidArgumentError:
        return
    assert isinstance(result["results"], list)


@pytest.mark.parametrize(
    "query", ["", "   ", "!!!", '""', "x" * 10_241, " ".join(f"w{i}" for i in range(65))]
)
def test_unsearchable_queries_are_invalid_argument(index: NoteIndex, query: str) -> None:
    with pytest.raises(InvalidArgumentError):
        index.search("en", query)


@pytest.mark.parametrize("limit", [0, 101, -1, True])
def test_limit_out_of_range(index: NoteIndex, limit: int) -> None:
    with pytest.raises(InvalidArgumentError):
        index.search("en", "word", limit=limit)


@pytest.mark.parametrize("limit", [0, -1, 101, 2**63, True, 1.5])
def test_search_any_and_recent_refuse_a_limit_out_of_range(index: NoteIndex, limit: int) -> None:
    # (2**63 raised OverflowError in SQLite; -1 is no limit to SQLite: every note read)
    with pytest.raises(InvalidArgumentError, match="limit must be an integer from 1 to 100"):
        index.search_any("en", ["word"], limit=limit)
    with pytest.raises(InvalidArgumentError, match="limit must be an integer from 1 to 100"):
        index.recent("en", limit=limit)


def test_a_lone_surrogate_is_refused_wherever_it_would_reach_sqlite(
    ws: Workspace, index: NoteIndex
) -> None:
    put(ws, "en", "a.md", note("type: t\ntags: [x]", "abc word"))
    index.reconcile()
    bad = "\ud800abc"  # (the CLI and direct callers pass it on: UnicodeEncodeError in SQLite)
    refusals = [
        ("the query", lambda: index.search("en", bad)),
        ("type", lambda: index.search("en", "abc", type=bad)),
        ("a tag", lambda: index.search("en", "", tags=["x", bad])),
        ("path", lambda: index.search("en", "abc", path=bad)),
        ("a keyword", lambda: index.search_any("en", ["abc", bad])),
        ("path", lambda: index.search_any("en", ["abc"], path=bad)),
        ("path", lambda: index.recent("en", path=bad)),
    ]
    for what, call in refusals:
        with pytest.raises(InvalidArgumentError, match=f"^invalid_argument: {what} is not"):
            call()
    # a grep plan proves nothing of it (no UTF-8 text holds one): every file is read
    assert index.grep_plan("en", bad, True, False) is None
    assert index.grep_plan("en", bad + "def", False, True) is None
    assert paths(index.search("en", "abc")) == ["a.md"]


def test_invalid_lang_is_refused(index: NoteIndex) -> None:
    with pytest.raises(InvalidLangError):
        index.search("../en", "word")


def test_partial_until_the_first_reconcile(ws: Workspace, index: NoteIndex) -> None:
    put(ws, "en", "a.md", "word")
    assert index.search("en", "word")["partial"] is True
    assert not index.ready
    index.reconcile()
    assert index.ready
    assert index.search("en", "word") == {
        "results": [
            {"path": "a.md", "title": "a", "score": pytest.approx(0, abs=1), "snippet": "**word**"}
        ],
        "partial": False,
        "total": 1,
    }


# -- CJK recall equals a substring scan -------------------------------------------------------


def _cjk_corpus(ws: Workspace, rng: random.Random) -> dict[str, str]:
    texts = {}
    for n in range(40):
        if n % 2:
            chars = [rng.choice(ZH) for _ in range(rng.randint(20, 120))]
            lang_text = "".join(c + ("，" if rng.random() < 0.1 else "") for c in chars)
        else:
            words = [
                "".join(rng.choices(JA_KANJI, k=rng.randint(1, 3)))
                + "".join(rng.choices(KANA, k=rng.randint(0, 2)))
                for _ in range(rng.randint(10, 40))
            ]
            lang_text = "".join(w + ("、" if rng.random() < 0.2 else "") for w in words)
        title = "".join(rng.choices(ZH + JA_KANJI, k=4))
        text = note(
            f"title: {title}\ntags: [中文, 日本語]", f"# {title}\n\n{lang_text} mixed english。\n"
        )
        rel = f"notes/{n:02d}.md"
        put(ws, "zh", rel, text)
        texts[rel] = text
    return texts


@pytest.mark.parametrize("length", [1, 2, 3, 4])
def test_cjk_words_recall_equals_substring_scan(
    ws: Workspace, index: NoteIndex, length: int
) -> None:
    rng = random.Random(length)
    texts = _cjk_corpus(ws, rng)
    index.reconcile()
    bodies = list(texts.values())
    words = set()
    while len(words) < 25:
        text = rng.choice(bodies)
        i = rng.randrange(len(text) - length)
        word = text[i : i + length]
        if all(c in ZH + JA_KANJI + KANA for c in word):
            words.add(word)
    words |= {"".join(rng.choices(ZH, k=length)) for _ in range(5)}  # mostly absent
    for word in words:
        expected = {rel for rel, text in texts.items() if word in text}
        found = set(paths(index.search("zh", word, limit=100)))
        assert found == expected, word


def test_cjk_phrase_with_latin(ws: Workspace, index: NoteIndex) -> None:
    put(ws, "ja", "a.md", "Pythonの教程です。東京 tower と 大東京 tower")
    put(ws, "ja", "b.md", "東京都 tower")
    index.reconcile()
    assert paths(index.search("ja", "Python")) == ["a.md"]
    assert paths(index.search("ja", "教程")) == ["a.md"]
    assert paths(index.search("ja", '"東京 tower"')) == ["a.md"]
    assert sorted(paths(index.search("ja", "東京 tower"))) == ["a.md", "b.md"]


# -- files the index only reads ----------------------------------------------------------------


def test_invalid_frontmatter_is_indexed_as_body_and_reported(
    ws: Workspace, index: NoteIndex
) -> None:
    bad = put(ws, "en", "bad.md", "---\ntitle: [unclosed\n---\nbody with kiwi\n")
    put(ws, "en", "open.md", "---\ntitle: never closed\nkiwi\n")
    put(ws, "en", "alias.md", "---\na: &x [1]\nb: *x\n---\nkiwi\n")
    (ws.vault_dir("en") / "latin1.md").write_bytes(b"kiwi caf\xe9\n")
    before = fingerprint(ws)
    stats = index.reconcile()
    assert sorted(p for _, p, _ in stats.invalid) == ["alias.md", "bad.md", "latin1.md", "open.md"]
    assert sorted(paths(index.search("en", "kiwi"))) == [
        "alias.md",
        "bad.md",
        "latin1.md",
        "open.md",
    ]
    assert paths(index.search("en", "unclosed")) == ["bad.md"]
    assert [p for _, p, _ in index.problems("en")] == ["alias.md", "bad.md", "latin1.md", "open.md"]
    assert index.info()["problems"] == 4
    index.rebuild()
    assert fingerprint(ws) == before
    assert bad.read_text() == "---\ntitle: [unclosed\n---\nbody with kiwi\n"


def test_indexing_never_touches_files(ws: Workspace, index: NoteIndex) -> None:
    put(ws, "en", "a.md", "no frontmatter at all\r\nwindows lines")
    put(ws, "en", "b.md", note("tags: 'x, y'\nweird: {a: 1}", "body"))
    put(ws, "en", "c.md", "\ufeff---\ntitle: bom\n---\nbody")
    before = fingerprint(ws)
    index.reconcile()
    index.rebuild()
    index.note_changed("en", "a.md")
    assert fingerprint(ws) == before
    assert paths(index.search("en", "windows")) == ["a.md"]
    assert paths(index.search("en", "bom")) == ["c.md"]


def test_skips_dot_files_symlinks_and_other_files_not_notes_in_assets(
    ws: Workspace, index: NoteIndex, tmp_path: Path
) -> None:
    """A note or text file in a note's ``*.assets/`` folder is indexed: find, grep and
    read serve it as a note (search alone missed it); its ``.overview.md`` is no summary."""
    put(ws, "en", "ok.md", "zebra")
    put(ws, "en", ".hidden.md", "zebra")
    put(ws, "en", ".git/x.md", "zebra")
    put(ws, "en", ".a.md.tmp.123", "zebra")
    put(ws, "en", "ok.md.assets/inner.md", "zebra")
    put(ws, "en", "notes.html", "zebra")
    put(ws, "en", "notes.TXT", "zebra")
    put(ws, "en", "ok.md.assets/inner.txt", "zebra")
    put(ws, "en", ".hidden.txt", "zebra")
    put(ws, "en", "ok.md.assets/.overview.md", "---\ntype: summary\n---\nzebra\n")
    put(ws, "en", "notes.MD", "zebra")
    outside = tmp_path / "outside.md"
    outside.write_text("zebra")
    os.symlink(outside, ws.vault_dir("en") / "link.md")
    os.symlink(outside, ws.vault_dir("en") / "link.txt")
    os.symlink(tmp_path, ws.vault_dir("en") / "linkdir")
    index.reconcile()
    found = ["ok.md", "ok.md.assets/inner.md", "ok.md.assets/inner.txt"]
    assert sorted(paths(index.search("en", "zebra"))) == found
    assert paths(index.search("en", "zebra", type="summary")) == []
    index.note_changed("en", "link.md")
    index.note_changed("en", "ok.md.assets/.overview.md")
    index.note_changed("en", "notes.html")
    assert index.counts() == {"en": 2}


def test_text_files_are_indexed_without_frontmatter(ws: Workspace, index: NoteIndex) -> None:
    """Plain text files (Claude's memory files): title = file name, type = the suffix,
    body = the whole text, a ``---`` block included."""
    put(ws, "en", "memories/prefs.txt", "---\ntitle: not a title\n---\nlikes zebra tea\n")
    put(ws, "en", "memories/data.json", '{"animal": "zebra"}')
    put(ws, "en", "memories/list.csv", "name,kind\nzed,zebra\n")
    put(ws, "en", "memories/conf.yaml", "animal: zebra\n")
    put(ws, "en", "memories/doc.xml", "<a>zebra</a>")
    index.reconcile()
    hits = index.search("en", "zebra", limit=10)["results"]
    assert sorted(h["path"] for h in hits) == [
        "memories/conf.yaml",
        "memories/data.json",
        "memories/doc.xml",
        "memories/list.csv",
        "memories/prefs.txt",
    ]
    assert {h["path"]: h["title"] for h in hits}["memories/prefs.txt"] == "prefs.txt"
    assert paths(index.search("en", "title")) == ["memories/prefs.txt"]  # body text
    assert paths(index.search("en", "zebra", type="json")) == ["memories/data.json"]
    assert paths(index.search("en", "prefs.txt")) == ["memories/prefs.txt"]
    path = put(ws, "en", "memories/prefs.txt", "now likes coffee\n")
    index.note_changed("en", "memories/prefs.txt")
    assert paths(index.search("en", "coffee")) == ["memories/prefs.txt"]
    path.unlink()
    index.note_changed("en", "memories/prefs.txt")
    assert index.search("en", "coffee")["results"] == []


# -- read-your-writes ----------------------------------------------------------------------------


def test_note_changed_upserts_and_removes(ws: Workspace, index: NoteIndex) -> None:
    index.reconcile()
    path = put(ws, "en", "items/a.md", note("title: First", "apple"))
    index.note_changed("en", "items/a.md")
    assert paths(index.search("en", "apple")) == ["items/a.md"]
    path.write_text(note("title: Second", "banana"))
    index.note_changed("en", "items/a.md")
    assert index.search("en", "apple")["results"] == []
    assert index.search("en", "banana")["results"][0]["title"] == "Second"
    path.unlink()
    index.note_changed("en", "items/a.md")
    assert index.search("en", "banana")["results"] == []
    assert index.counts() == {}
    index.note_changed("en", "items/a.md.assets/img.png")
    index.note_changed("en", "missing.md")


def test_concurrent_writes_and_searches(ws: Workspace, index: NoteIndex) -> None:
    index.reconcile()
    errors: list[BaseException] = []

    def writer(n: int) -> None:
        try:
            for i in range(15):
                put(ws, "en", f"w{n}/{i}.md", f"common token{n}x{i}")
                index.note_changed("en", f"w{n}/{i}.md")
        except BaseException as err:
            errors.append(err)

    def reader() -> None:
        try:
            for _ in range(30):
                index.search("en", "common", limit=100)
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(3)]
    threads += [threading.Thread(target=reader) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(paths(index.search("en", "common", limit=100))) == 45


# -- the index file ------------------------------------------------------------------------------


def test_deleting_the_index_loses_nothing(ws: Workspace) -> None:
    for n in range(20):
        put(ws, "en", f"n{n}.md", note(f"title: Note {n}", f"fig {n} shared"))
    idx = NoteIndex(ws)
    idx.open()
    idx.reconcile()
    before = idx.search("en", "shared", limit=100)
    idx.close()
    ws.index_path.unlink()
    again = NoteIndex(ws)
    again.open()
    assert again.counts() == {}
    again.reconcile()
    assert again.search("en", "shared", limit=100) == before
    again.close()


@pytest.mark.parametrize("damage", ["garbage", "truncate", "pages"])
def test_corrupt_index_is_rebuilt(ws: Workspace, damage: str) -> None:
    put(ws, "en", "a.md", "apple")
    idx = NoteIndex(ws)
    idx.open()
    idx.reconcile()
    idx.close()
    data = ws.index_path.read_bytes()
    if damage == "garbage":
        ws.index_path.write_bytes(b"this is not a database" * 100)
    elif damage == "truncate":
        ws.index_path.write_bytes(data[:1000])
    else:
        ws.index_path.write_bytes(data[:4096] + bytes(len(data) - 4096))
    again = NoteIndex(ws)
    again.open()
    again.reconcile()
    assert paths(again.search("en", "apple")) == ["a.md"]
    again.close()


def test_newer_schema_is_refused(ws: Workspace) -> None:
    idx = NoteIndex(ws)
    idx.open()
    idx.close()
    conn = sqlite3.connect(ws.index_path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 5}")
    conn.close()
    with pytest.raises(IndexSchemaError) as err:
        NoteIndex(ws).open()
    message = str(err.value)
    assert str(ws.index_path) in message
    assert str(SCHEMA_VERSION + 5) in message and str(SCHEMA_VERSION) in message
    assert isinstance(err.value, OperationalError)  # not a refusal of a tool call


def test_older_or_foreign_file_is_recreated(ws: Workspace) -> None:
    put(ws, "en", "a.md", "apple")
    ws.state_dir.mkdir(parents=True)
    conn = sqlite3.connect(ws.index_path)
    conn.execute("CREATE TABLE notes (x)")
    conn.close()
    idx = NoteIndex(ws)
    idx.open()
    idx.reconcile()
    assert paths(idx.search("en", "apple")) == ["a.md"]
    info = idx.info()
    assert info["notes"] == 1 and info["size_bytes"] > 0 and info["last_reconcile"]
    idx.close()


# -- grep plans give exactly the results of a full scan ------------------------------------------


def test_grep_with_plan_equals_full_scan_on_random_literals(
    ws: Workspace, index: NoteIndex
) -> None:
    rng = random.Random(3)
    alphabet = "abcdefgh ABCD.*(?東京都ßİı\t"
    for n in range(60):
        text = "\n".join(
            "".join(rng.choices(alphabet, k=rng.randint(0, 50))) for _ in range(rng.randint(1, 6))
        )
        put(ws, "en", f"d{n % 5}/f{n}.md", text)
    index.reconcile()
    # Files changed or added after indexing must still be found.
    put(ws, "en", "d0/f0.md", "late edit abcabc")
    put(ws, "en", "new.md", "not indexed abcabc")
    planned = Vault(Sandbox(ws), max_file_bytes=1 << 20)
    planned.grep_planner = index.grep_plan
    plain = Vault(Sandbox(ws), max_file_bytes=1 << 20)
    texts = [p.read_text() for p in ws.vault_dir("en").rglob("*.md")]
    used = 0
    for _ in range(150):
        source = rng.choice(texts) or "abc"
        i = rng.randrange(len(source))
        literal = source[i : i + rng.randint(2, 7)]
        if not literal.strip() or "\n" in literal:
            continue
        fixed = rng.random() < 0.5
        pattern = (
            literal
            if fixed
            else rng.choice(["{}", "{}+x?", "(?:{}|zz)", "a*{}"]).format(
                __import__("re").escape(literal)
            )
        )
        ignore_case = rng.random() < 0.5
        plan = index.grep_plan("en", pattern, fixed, ignore_case)
        used += plan is not None
        args = {"pattern": pattern, "fixed": fixed, "ignore_case": ignore_case, "limit": 10_000}
        assert planned.grep("en", **args) == plain.grep("en", **args), args
    assert used > 50
    assert index.grep_plan("en", "ab", True, False) is None
    assert index.grep_plan("en", "a.b", False, False) is None


def test_grep_plan_narrows_candidates(ws: Workspace, index: NoteIndex) -> None:
    for n in range(30):
        put(ws, "en", f"f{n}.md", f"note {n} filler text")
    put(ws, "en", "needle.md", "the Needle is here")
    index.reconcile()
    plan = index.grep_plan("en", "needle", False, True)
    assert plan is not None
    assert plan.candidates == {"needle.md"}
    assert len(plan.indexed) == 31
    assert index.grep_plan("en", "NEEDLE", True, True).candidates == {"needle.md"}


def test_grep_plan_narrows_only_within_its_deadline(ws: Workspace, index: NoteIndex) -> None:
    """Folding every candidate's text (ignore_case) ran before any deadline check: 34 MiB
    of Russian took 1.9 s of a 0.5 s budget. Past the deadline, the trigram hits are the
    candidates (a superset: grep reads them, within its budget)."""
    for n in range(30):
        put(ws, "en", f"f{n}.md", f"note {n} Привет мир " * 50)
    put(ws, "en", "odd.md", "Привет ми. вет мир")  # its trigrams, not the literal
    index.reconcile()
    narrowed = index.grep_plan("en", "привет мир", True, True, time.monotonic() + 60)
    assert narrowed is not None and "odd.md" not in narrowed.candidates
    late = index.grep_plan("en", "привет мир", True, True, time.monotonic() - 1)
    assert late is not None and late.candidates == narrowed.candidates | {"odd.md"}
    assert late.indexed == narrowed.indexed


def test_stored_row_gives_back_the_inserted_fts_values(ws: Workspace) -> None:
    from indexer.index.parse import fts_values, lang_token, parse_note

    texts = [
        note("title: T 東京\ntags: 'a, #b'\nsummary: 要約 text\nnested: {k: [x, 1]}", "body 中文"),
        "---\ntitle: [bad\n---\nbody",
        note("created: 2025-01-01\nupdated: 2025-01-02T00:00:00Z\nalias: [x]", "# Heading\nb"),
        "",
    ]
    for text in texts:
        for name in ("dir/stem.md", "dir/stem.txt"):
            row = parse_note(text.encode(), name)
            stored = fts_values("zh-Hans", row.title, row.tags, row.body, row.frontmatter)
            assert stored == (*row.words, lang_token("zh-Hans"))


def test_change_listeners_hear_what_changed_and_from_where(ws: Workspace, index: NoteIndex) -> None:
    heard: list[tuple[str, str, str]] = []
    index.change_listeners.append(lambda lang, path, source: heard.append((lang, path, source)))
    put(ws, "en", "a.md", "# a\n")
    index.reconcile()
    assert heard == [("en", "a.md", "reconcile")]
    index.reconcile()  # nothing changed: nothing told
    assert len(heard) == 1
    put(ws, "en", "b.md", "# b\n")
    index.note_changed("en", "b.md")
    index.note_changed("en", "b.md")  # already in step
    (ws.vault_dir("en") / "a.md").unlink()
    index._apply_changes({("en", "a.md")}, set())
    assert heard[1:] == [("en", "b.md", "tool"), ("en", "a.md", "watcher")]


def test_grep_keeps_its_budget_inside_one_file_of_many_lines(ws: Workspace) -> None:
    """The deadline was looked at between files only: a regex is tried line by line once
    the whole text matched, and a 4 MiB note of short lines took 10 s."""
    put(ws, "en", "lines.md", "\n" * 400_000 + "zzz\n")
    vault = Vault(Sandbox(ws), max_file_bytes=4 << 20)
    vault.grep_max_seconds = 0.005
    started = time.thread_time()  # this thread's CPU time: the wall time of a loaded machine varies
    found = vault.grep("en", "zzz", ignore_case=True)
    cut = time.thread_time() - started
    assert found == {"matches": [], "truncated": True}
    vault.grep_max_seconds = 60
    started = time.thread_time()
    assert vault.grep("en", "zzz", ignore_case=True)["matches"][0]["line"] == 400_001
    assert cut < (time.thread_time() - started) / 4  # (about 1/40 of the whole file's)


def test_snippets_read_only_the_start_of_a_body_and_past_a_nul(
    ws: Workspace, index: NoteIndex
) -> None:
    """Each result's whole body was loaded for its snippet (a page of 100 notes of 8 MiB
    held them all at once); what is loaded now is the start a snippet reads, as bytes,
    since SQLite's substr of text stops at a NUL."""
    from indexer.index.query import SNIPPET_SOURCE_CHARS

    put(ws, "en", "zero.md", "before\x00after the nul: zebra here\n")
    big = "zebra first " + "filler words here " * 60_000  # 1 Mi characters
    put(ws, "en", "big.md", big)
    put(ws, "en", "wide.md", "zebra é" + "ü" * (SNIPPET_SOURCE_CHARS + 10) + "\n")
    index.reconcile()
    found = {hit["path"]: hit["snippet"] for hit in index.search("en", "zebra")["results"]}
    assert "after the nul: **zebra** here" in found["zero.md"]
    assert found["big.md"].startswith("**zebra** first") and found["big.md"].endswith("…")
    assert found["wide.md"].startswith("**zebra** é") and found["wide.md"].endswith("…")


def test_the_snippets_of_a_page_share_a_budget(
    ws: Workspace, index: NoteIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each snippet may look for hits for 50 ms of CPU: a page of 100 hostile results took
    seconds. Once the page's budget is spent, the rest are shown unmarked."""
    import indexer.index.reads as reads

    for n in range(5):
        put(ws, "en", f"n{n}.md", f"alpha beta {n}\n")
    index.reconcile()
    marked = [hit["snippet"] for hit in index.search("en", "alpha")["results"]]
    assert all("**alpha**" in s for s in marked)
    monkeypatch.setattr(reads, "PAGE_SNIPPETS_CPU_SECONDS", 0.0)
    plain = [hit["snippet"] for hit in index.search("en", "alpha")["results"]]
    assert len(plain) == 5 and not any("**" in s for s in plain)
    assert [s.replace("**", "") for s in marked] == plain
    # past the budget even the text is taken from the note's start only (its NFC of 512
    # Ki characters took 0.1 s a note)
    put(ws, "en", "long.md", "alpha " + "e\u0301" * 300_000 + "\n")
    index.reconcile()
    began = time.thread_time()
    found = {h["path"]: h["snippet"] for h in index.search("en", "alpha")["results"]}
    assert time.thread_time() - began < 0.25  # (0.1 s and more a long note before)
    assert found["long.md"].startswith("alpha é") and found["long.md"].endswith("…")


def test_a_search_with_no_words_lists_the_notes_a_type_or_tags_filter_keeps(
    ws: Workspace, index: NoteIndex
) -> None:
    """Asking for "the notes tagged x" was not possible (an empty query was refused, filters
    or not): with a type or tags filter, no words lists every note it keeps, the latest
    changed first, with its abstract; without a filter it is still refused."""
    put(ws, "en", "old.md", note("tags: [project]", "The oldest plan."))
    put(ws, "en", "nested.md", note("", "Work on #project/alpha."))
    put(ws, "en", "items/typed.md", note("type: item\ntags: [project]", "An item."))
    put(ws, "en", "other.md", note("tags: [other]", "Unrelated."))
    for age, name in enumerate(("items/typed.md", "nested.md", "old.md")):
        os.utime(ws.vault_dir("en") / name, (1_700_000_000 - age, 1_700_000_000 - age))
    index.reconcile()
    found = index.search("en", "", tags=["project"])
    assert paths(found) == ["items/typed.md", "nested.md", "old.md"]
    assert found["total"] == 3 and found["results"][2]["snippet"] == "The oldest plan."
    assert paths(index.search("en", "  ", tags=["project"], limit=1, offset=1)) == ["nested.md"]
    assert paths(index.search("en", "", type="item")) == ["items/typed.md"]
    assert paths(index.search("en", "", tags=["project"], path="items")) == ["items/typed.md"]
    for bare in ({}, {"path": "items"}):
        with pytest.raises(InvalidArgumentError, match="no searchable words") as refused:
            index.search("en", "", **bare)
        assert "empty query" not in str(refused.value)
    for symbols in ("*", "🥳", '""'):  # (no words, with a filter: what lists them says so)
        with pytest.raises(InvalidArgumentError, match="an empty query lists every note"):
            index.search("en", symbols, type="item")


def test_texts_carried_from_an_older_index_survive_a_kill_before_they_are_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """They were held in memory from the old file's deletion until the new one's
    ``befores`` held them: a kill there lost them, and the next start found an index of
    this schema and nothing to carry (a helper killed the first start after an upgrade)."""
    from indexer.index import schema

    path = tmp_path / "index.sqlite"
    schema.open_index(path).execute(f"PRAGMA user_version = {SCHEMA_VERSION - 1}")
    texts = [("en", "a.md", b"the text before"), ("ja", "b.md", "前の文".encode())]

    def killed(conn: object) -> None:
        raise KeyboardInterrupt  # (as a kill would leave it: schema made, befores empty)

    monkeypatch.setattr(schema, "create_schema", killed)
    with pytest.raises(KeyboardInterrupt):
        schema.open_index(path, carry=lambda old: texts)
    monkeypatch.undo()
    conn = schema.open_index(path)  # the next start: the index is new, nothing to carry
    kept = conn.execute("SELECT lang, path, data FROM befores ORDER BY lang").fetchall()
    assert kept == texts
    assert not list(tmp_path.glob("*carried*"))
    conn.close()
    conn = schema.open_index(path)  # (kept once)
    assert conn.execute("SELECT count(*) FROM befores").fetchone()[0] == 2
    conn.close()
