"""Tags are compared by what shows: invisible characters neither make a tag nor tell two
apart, and Arabic and Hebrew vowel points are read as search reads them (not compared),
in a note's frontmatter, its inline ``#tags`` and the tags filter."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
import yaml

from indexer.index.inline_tags import inline_tags
from indexer.index.parse import parse_note
from indexer.index.service import NoteIndex
from shared.errors import InvalidArgumentError
from shared.frontmatter import normalize_frontmatter_text
from shared.workspace import Workspace

NOW = datetime(2026, 11, 29, 20, 0, 0, tzinfo=UTC)
INVISIBLE = ["\u200b", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u200e", "\u2067", "\ufe0f"]


def _tags_written(tags: list[str]) -> list[str]:
    text = "---\n" + yaml.safe_dump({"title": "T", "tags": tags}, allow_unicode=True) + "---\nx\n"
    out = normalize_frontmatter_text(text, now=NOW)
    return list(yaml.safe_load(out.split("---\n")[1]).get("tags", []))


@pytest.mark.parametrize("invisible", INVISIBLE)
def test_a_tag_of_invisible_characters_alone_is_none(invisible: str) -> None:
    assert _tags_written([invisible, "kept"]) == ["kept"]
    assert _tags_written([invisible * 3, f"#{invisible}"]) == []
    assert _tags_written(["\u3164", "\u2800"]) == []  # (letters that show nothing)


def test_invisible_characters_and_points_do_not_tell_tags_apart() -> None:
    assert _tags_written(["a", "a\u200b", "\u200ba", "A\u2060"]) == ["a"]
    assert _tags_written(["שָׁלוֹם", "שלום"]) == ["שָׁלוֹם"]
    assert _tags_written(["كَتَبَ", "كتب", "كـتـب"]) == ["كَتَبَ"]
    assert _tags_written(["résumé", "resume"]) == ["résumé", "resume"]  # (accents are letters)


def test_inline_tags_of_invisible_characters_are_none() -> None:
    body = "#\u200b and #\u200b\u200d here, #\u200b123 too, but #go\u200b and #\u05e9\u05b8\n"
    assert inline_tags(body) == ["go\u200b", "\u05e9\u05b8"]


def _put(ws: Workspace, rel: str, text: str) -> None:
    path = ws.vault_dir("en") / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _found(index: NoteIndex, **filters: object) -> list[str]:
    return sorted(hit["path"] for hit in index.search("en", "alpha", **filters)["results"])


def test_the_filter_reads_tags_as_they_show(ws: Workspace, index: NoteIndex) -> None:
    """``a\\u200b`` was not the tag ``a``; a zero-width space alone was a tag; ``שלום``
    did not find ``שָׁלוֹם`` (search reads the points as optional, the filter did not)."""
    _put(ws, "a.md", '---\ntags: ["a\\u200b", "\\u200b"]\n---\nalpha\n')
    _put(ws, "b.md", "---\ntags: [שָׁלוֹם, كَتَبَ]\n---\nalpha #x\u200b\n")
    _put(ws, "c.md", "---\ntags: [a, שלום/עולם]\n---\nalpha #\u200b\n")
    _put(ws, "d.md", '---\ntype: "\\u200b"\n---\nalpha\n')
    index.reconcile()
    assert _found(index, tags=["a"]) == ["a.md", "c.md"]
    assert _found(index, tags=["A\u200b"]) == ["a.md", "c.md"]
    assert _found(index, tags=["שלום"]) == ["b.md", "c.md"]
    assert _found(index, tags=["שָׁלוֹם/עוֹלָם"]) == ["c.md"]
    assert _found(index, tags=["كتب"]) == ["b.md"]
    assert _found(index, tags=["x"]) == ["b.md"]
    with index._db.read() as conn:
        keys = dict(conn.execute("SELECT path, tag_keys FROM notes").fetchall())
    assert json.loads(keys["a.md"]) == ["a"]
    assert json.loads(keys["c.md"]) == ["a", "שלום/עולם"]
    for blank in (["\u200b"], ["#\u2060\u200d"], ["a", "\ufeff"]):
        with pytest.raises(InvalidArgumentError, match="each tag must name a tag"):
            index.search("en", "alpha", tags=blank)
    with pytest.raises(InvalidArgumentError, match="type must name a type"):
        index.search("en", "alpha", type="\u200b")


def test_the_filter_reads_letters_one_to_their_readers_as_search_does(
    ws: Workspace, index: NoteIndex
) -> None:
    """A Persian tag typed with the Arabic yeh and kaf (``ي ك``, as an Arabic keyboard
    types them) found nothing of the Persian spelling (``ی ک``), while search folds them;
    so do the alef's hamza forms, Russian ``ё`` and a Yiddish ligature. Latin accents and
    ``đ`` stay letters of their own (``résumé`` is not ``resume``)."""
    _put(ws, "fa.md", "---\ntags: [کتاب/یادداشت]\ntype: یادداشت\n---\nalpha کتاب\n")
    _put(ws, "ar.md", "---\ntags: [أحمد, مكتبة]\n---\nalpha #ي\n")
    _put(ws, "ru.md", "---\ntags: [ёлка, Đà]\n---\nalpha\n")
    _put(ws, "yi.md", "---\ntags: [װאַסער]\n---\nalpha\n")
    _put(ws, "glob.md", '---\ntags: ["ک*?[ی]", کxy]\n---\nalpha\n')
    index.reconcile()
    assert [h["path"] for h in index.search("en", "كتاب")["results"]] == ["fa.md"]
    assert _found(index, tags=["كتاب"]) == ["fa.md"]
    assert _found(index, tags=["كتاب/يادداشت"]) == ["fa.md"]
    assert _found(index, tags=["کتاب/یادداشت"]) == ["fa.md"]
    assert _found(index, type="يادداشت") == ["fa.md"]
    assert _found(index, tags=["احمد", "مكتبه"]) == ["ar.md"]
    assert _found(index, tags=["ی"]) == ["ar.md"]
    assert _found(index, tags=["Ёлка"]) == ["ru.md"]
    assert _found(index, tags=["елка"]) == ["ru.md"]
    assert _found(index, tags=["וואסער"]) == ["yi.md"]
    assert _found(index, tags=["da"]) == []  # (``đ`` is a letter to its readers)
    assert _found(index, tags=["كتابي"]) == []  # (still the whole tag, or a nested one)
    assert _found(index, tags=["ك*?[ي]"]) == ["glob.md"]
    assert _found(index, tags=["ك*"]) == _found(index, tags=["ك?y"]) == []


# One tag typed two ways, its first spelling kept: the keyboards' letters one to their
# readers (a Persian tag on an Arabic keyboard, Russian ``ё``, Ukrainian's apostrophe, a
# Yiddish ligature, a Malayalam chillu, Bengali's khanda ta), and the foldings the filter
# shares with them (NFC and NFD, case with ``ß`` and the Greek final sigma, full-width
# Latin, Turkish ``İ``).
SPELLINGS = [
    ("کتاب", "كتاب"),
    ("ёлка", "ЕЛКА"),
    ("мʼясо", "м'ясо"),
    ("װאַסער", "וואסער"),
    ("അവൻ", "അവന്"),
    ("উৎসব", "উত্\u200dসব"),
    ("café", "cafe\u0301"),
    ("Straße", "STRASSE"),
    ("ΣΟΦΟΣ", "σοφος"),
    ("ＡＩ", "ai"),
    ("İstanbul", "istanbul"),
]
FIRSTS = [first for first, _ in SPELLINGS]


def test_a_note_keeps_one_tag_of_the_spellings_the_filter_takes_as_one() -> None:
    """A note tagged ``کتاب`` and ``كتاب`` had two tags, in its row and in what a write
    keeps, though the filter found it by either as one (``ёлка``/``елка`` too)."""
    both = [spelling for pair in SPELLINGS for spelling in pair]
    assert _tags_written(both) == FIRSTS
    text = "---\n" + yaml.safe_dump({"tags": both}, allow_unicode=True) + "---\nalpha\n"
    row = parse_note(text.encode(), "a.md")
    assert json.loads(row.tags) == FIRSTS
    assert len(json.loads(row.tag_keys)) == len(SPELLINGS)


def test_a_tag_typed_two_ways_is_one_tag_found_by_either(ws: Workspace, index: NoteIndex) -> None:
    both = [spelling for pair in SPELLINGS for spelling in pair]
    _put(ws, "a.md", "---\n" + yaml.safe_dump({"tags": both}, allow_unicode=True) + "---\nalpha\n")
    _put(ws, "b.md", "---\ntags: [كتاب/يادداشت]\ntype: يادداشت\n---\nalpha #کتاب #كتاب\n")
    index.reconcile()
    with index._db.read() as conn:
        rows = {
            p: (json.loads(t), json.loads(k))
            for p, t, k in conn.execute("SELECT path, tags, tag_keys FROM notes")
        }
    assert rows["a.md"][0] == FIRSTS
    assert len(rows["a.md"][1]) == len(SPELLINGS)
    assert len(rows["b.md"][1]) == 2  # (the nested tag, and the inline tag once)
    for pair in SPELLINGS:
        for spelling in pair:
            assert "a.md" in _found(index, tags=[spelling]), spelling
    assert _found(index, tags=["کتاب"]) == _found(index, tags=["#كتاب"]) == ["a.md", "b.md"]
    assert _found(index, tags=["کتاب/یادداشت"]) == ["b.md"]
    assert _found(index, type="یادداشت") == ["b.md"]
