"""normalize_frontmatter_text: every SPEC rule, refusals, and properties (hypothesis)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.errors import InvalidFrontmatterError
from shared.frontmatter import (
    CANONICAL_KEYS,
    new_note_id,
    normalize_frontmatter_text,
    parse_frontmatter,
)

NOW = datetime(2026, 11, 29, 20, 0, 0, tzinfo=UTC)


def norm(text: str, **kwargs) -> str:
    return normalize_frontmatter_text(text, now=NOW, **kwargs)


def test_missing_block_is_added_with_title_from_heading() -> None:
    out = norm("# Past tense of go\nwent\n", stem="go")
    meta, body = parse_frontmatter(out)
    assert meta["title"] == "Past tense of go"
    assert meta["created"] == NOW and meta["updated"] == NOW
    assert len(meta["id"]) == 26
    assert body == "# Past tense of go\nwent\n"


def test_title_falls_back_to_stem() -> None:
    meta, _ = parse_frontmatter(norm("no heading here", stem="my-note"))
    assert meta["title"] == "my-note"


def test_canonical_key_order_and_unknown_keys_kept_in_order() -> None:
    text = "---\nzeta: 1\nupdated: 2020-01-01T00:00:00Z\nalpha: [x]\ntitle: T\nid: abc\n---\nb\n"
    meta, _ = parse_frontmatter(norm(text))
    assert list(meta) == ["id", "title", "created", "updated", "zeta", "alpha"]
    assert meta["zeta"] == 1 and meta["alpha"] == ["x"]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("'a, b'", ["a", "b"]),
        ("'#a #b'", ["a", "b"]),
        ("[a, '#b', a, '']", ["a", "b"]),
        ("[1, 2024]", ["1", "2024"]),
        ("single", ["single"]),
    ],
)
def test_tags_become_a_list_of_unique_strings(raw: str, expected: list[str]) -> None:
    meta, _ = parse_frontmatter(norm(f"---\ntags: {raw}\n---\n"))
    assert meta["tags"] == expected


def test_aliases_keep_hash() -> None:
    meta, _ = parse_frontmatter(norm("---\naliases: 'C#, F#'\n---\n"))
    assert meta["aliases"] == ["C#", "F#"]


def test_dates_are_iso_with_timezone() -> None:
    out = norm("---\ncreated: 2026-01-02\n---\nx")
    assert "created: 2026-01-02T00:00:00Z\n" in out
    assert "updated: 2026-11-29T20:00:00Z\n" in out
    out = norm("---\ncreated: '2026-01-02T03:04:05+09:00'\n---\nx")
    assert "created: 2026-01-02T03:04:05+09:00\n" in out


def test_protected_fields_come_from_the_file_on_disk() -> None:
    original = norm("# A\n")
    meta0, _ = parse_frontmatter(original)
    later = normalize_frontmatter_text(
        "---\nid: attacker\ncreated: 1999-01-01T00:00:00Z\ntitle: A\n---\n# A\nmore\n",
        existing=original,
        now=NOW + timedelta(hours=1),
    )
    meta1, _ = parse_frontmatter(later)
    assert meta1["id"] == meta0["id"]
    assert meta1["created"] == meta0["created"]
    assert meta1["updated"] == NOW + timedelta(hours=1)


def test_writer_id_accepted_for_a_new_file() -> None:
    meta, _ = parse_frontmatter(norm("---\nid: my-id\n---\n"))
    assert meta["id"] == "my-id"


def test_line_endings_bom_and_trailing_newline() -> None:
    out = norm("\ufeff---\r\ntitle: T\r\n---\r\nline1\r\nline2\r\n\r\n\r\n")
    assert not out.startswith("\ufeff")
    assert "\r" not in out
    assert out.endswith("line2\n") and not out.endswith("\n\n")


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("---\na: &x [1]\nb: *x\n---\n", "anchors"),
        ("---\nid: one\nid: two\n---\n", "more than once"),
        ("---\ntitle: a\ntitle: b\n---\n", "more than once"),
        ("---\n- a\n- b\n---\n", "mapping"),
        ("---\njust a string\n---\n", "mapping"),
        ("---\n1: x\n---\n", "not a string"),
        ("---\n? [a, b]\n: x\n---\n", "not a string"),
        ("---\na: !!python/object/apply:os.system [ls]\n---\n", "not valid YAML"),
        ("---\na: [unclosed\n---\n", "not valid YAML"),
        ("---\nx: .nan\n---\n", "finite"),
        ("---\ntitle: T\n", "never closed"),
        ("---\nID: x\n---\n", "looks like"),
        ("---\n" + "a: " + "x" * 70_000 + "\n---\n", "larger than"),
        ("---\ncreated: yesterday\n---\n", "ISO 8601"),
        ("---\ntags: {a: 1}\n---\n", "list of strings"),
        ("---\nd: " + "[" * 40 + "]" * 40 + "\n---\n", "deeper"),
    ],
)
def test_refusals(text: str, fragment: str) -> None:
    with pytest.raises(InvalidFrontmatterError, match=fragment) as info:
        norm(text)
    assert str(info.value).startswith("invalid_frontmatter: ")


def test_billion_laughs_is_refused_quickly() -> None:
    lol = "---\na: &a [x, x, x, x, x, x, x, x, x]\n"
    for i in range(1, 9):
        lol += f"{chr(97 + i)}: &{chr(97 + i)} [" + ", ".join([f"*{chr(96 + i)}"] * 9) + "]\n"
    with pytest.raises(InvalidFrontmatterError, match="anchors"):
        norm(lol + "---\n")


def test_note_ids_are_unique_and_sortable() -> None:
    ids = [new_note_id(1000 + i) for i in range(50)]
    assert len(set(ids)) == 50 and ids == sorted(ids)


# -- properties -------------------------------------------------------------------

_key = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=10).filter(
    lambda k: k.casefold() not in CANONICAL_KEYS
)
_scalar = st.one_of(
    st.text(max_size=30),
    st.integers(-(10**9), 10**9),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
)
_value = st.recursive(
    _scalar,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_key, inner, max_size=4),
    max_leaves=8,
)
_body = st.text(max_size=200).map(lambda s: s.replace("\r", ""))


def _dump(meta: dict) -> str:
    import yaml

    return yaml.safe_dump(meta, allow_unicode=True, sort_keys=False) if meta else ""


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(_key, _value, max_size=6), _body)
def test_unknown_keys_keep_their_values(extra: dict, body: str) -> None:
    text = "---\n" + _dump(extra) + "---\n" + body
    written, _ = parse_frontmatter(text)  # what the writer's YAML says (the dumper may fold)
    meta, _ = parse_frontmatter(norm(text))
    for key in extra:
        assert meta[key] == written[key]


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(_key, _value, max_size=5),
    st.lists(st.text(min_size=1, max_size=8), max_size=4),
    _body,
)
def test_normalization_is_idempotent(extra: dict, tags: list[str], body: str) -> None:
    meta = {"tags": tags, **extra}
    once = norm("---\n" + _dump(meta) + "---\n" + body, stem="s")
    assert norm(once, stem="s") == once
    assert norm(once, existing=once, stem="s") == once
