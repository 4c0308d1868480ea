"""normalize_frontmatter_text: every SPEC rule, refusals, and properties (hypothesis)."""

from __future__ import annotations

import time
from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from shared.errors import InvalidFrontmatterError
from shared.frontmatter import (
    CACHED_BLOCK_CHARS,
    CANONICAL_KEYS,
    MAX_TITLE_CHARS,
    new_note_id,
    normalize_frontmatter_text,
    parse_frontmatter,
    parse_yaml_block,
    string_list,
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
        ("'#a #b, c'", ["a", "b", "c"]),  # (was "a #b": one tag of two)
        ("'past tense, #x #y'", ["past tense", "x", "y"]),
        ("'a #b, c'", ["a #b", "c"]),  # (a tag holding a #, as written)
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
        ("---\nx: !!float .nan\n---\n", "finite"),
        ("---\ntitle: T\n", "never closed"),
        ("---\nID: x\n---\n", "looks like"),
        ("---\n" + "a: " + "x" * 70_000 + "\n---\n", "larger than"),
        ("---\ncreated: yesterday\n---\n", "ISO 8601"),
        ("---\ntags: {a: 1}\n---\n", "list of strings"),
        ("---\nd: " + "[" * 40 + "]" * 40 + "\n---\n", "deeper"),
        # red-team finding 3: loader/dumper exceptions are refusals, not crashes
        ("---\nx: !!timestamp nope\n---\n", "cannot be read"),
        ("---\ncreated: !!timestamp 2026-01-01T00:00:00+01:00:30\n---\n", "cannot be read"),
        ("---\nx: !!int 0x" + "f" * 4000 + "\n---\n", "at most 100 digits"),
        ("---\nid: !!int 0x" + "f" * 4000 + "\n---\n", "at most 100 digits"),
        ("---\nx: !!int 0b" + "1" * 20000 + "\n---\n", "at most 100 digits"),
        ("---\nx: !!int 0" + "7" * 20000 + "\n---\n", "at most 100 digits"),
        ("---\nx: !!int " + ":".join(["59"] * 3000) + "\n---\n", "at most 100 digits"),
        ("---\nx: " + "7" * 20000 + "\n---\n", "at most 100 digits"),
        ("---\nx: " + "1" * 4400 + "\n---\n", "at most 100 digits"),
        ("---\nx: [" + "1," * 30000 + "]\n---\n", "would be larger than"),
        # red-team finding 9: an id is one line of printable, non-blank text
        ("---\nid: '  '\n---\n", "id must be one line"),
        ('---\nid: "a\\nb"\n---\n', "id must be one line"),
        ('---\nid: "a\\tb"\n---\n', "id must be one line"),
        ('---\nid: "a\\u2028b"\n---\n', "id must be one line"),
        ("---\nid: ' padded'\n---\n", "id must be one line"),
        ("---\nid: " + "x" * 201 + "\n---\n", "id must be one line"),
        ("---\nid: true\n---\n", "id must be a string"),
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


def assert_stable(out: str, as_new_file: bool = True) -> None:
    """``out`` parses, and normalizing it again (as a new or an existing file) keeps it."""
    parse_frontmatter(out)
    if as_new_file:
        assert norm(out) == out
    assert norm(out, existing=out) == out


# -- red-team finding 3: a created value can poison a note --------------------------


def test_created_with_a_seconds_offset_is_written_in_utc_and_reads_back() -> None:
    out = norm("---\ncreated: '2026-01-01T00:00:00+01:00:30'\n---\n# ts\n")
    assert "!!" not in out
    assert "created: 2025-12-31T22:59:30Z\n" in out
    meta, _ = parse_frontmatter(out)
    assert meta["created"] == datetime(2026, 1, 1, tzinfo=timezone(timedelta(seconds=3630)))
    assert_stable(out)


def test_created_with_a_microsecond_offset_is_written_in_utc() -> None:
    out = norm("---\ncreated: '2026-01-01T00:00:00+23:59:59.999999'\n---\n")
    assert "created: 2025-12-31T00:00:00.000001Z\n" in out
    assert_stable(out)


def test_created_with_an_odd_offset_out_of_range_is_refused() -> None:
    with pytest.raises(InvalidFrontmatterError, match="created is out of range"):
        norm("---\ncreated: '0001-01-01T00:00:00+01:00:30'\n---\n")


def test_a_poisoned_note_on_disk_is_a_refusal_not_a_crash() -> None:
    poisoned = "---\nid: OLD\ncreated: !!timestamp 2026-01-01T00:00:00+01:00:30\n---\n# ts\n"
    with pytest.raises(InvalidFrontmatterError, match="cannot be read"):
        parse_frontmatter(poisoned)
    out = norm("# fixed\n", existing=poisoned)  # its id and created still read: kept
    meta = parse_frontmatter(out)[0]
    created = datetime(2025, 12, 31, 22, 59, 30, tzinfo=UTC)  # (in UTC: a seconds offset)
    assert (meta["title"], meta["id"], meta["created"]) == ("fixed", "OLD", created)
    assert_stable(out)


def test_a_typo_in_a_block_on_disk_does_not_change_the_notes_identity() -> None:
    """A person's YAML typo elsewhere in the block made the next write a new note: a new
    id, a new created. The two lines are read on their own."""
    broken = (
        "---\ntitle: [unclosed\nid: 01KEEP\ncreated: 2020-05-06T07:08:09Z\ntags: x: y\n---\nb\n"
    )
    with pytest.raises(InvalidFrontmatterError):
        parse_frontmatter(broken)
    meta = parse_frontmatter(norm("---\nid: other\n---\nnew body\n", existing=broken))[0]
    assert meta["id"] == "01KEEP" and meta["created"] == datetime(2020, 5, 6, 7, 8, 9, tzinfo=UTC)
    for key in ("id : 01KEEP", '"id": 01KEEP', "'id':\t01KEEP"):  # as YAML may spell them
        meta = parse_frontmatter(norm("# n\n", existing=f"---\nx: [\n{key}\n---\n"))[0]
        assert meta["id"] == "01KEEP", key
    # a line of a multi-line value is no id: the real one, after it, is
    quoted = '---\nsummary: "what was said:\nid: 42 of them"\nid: 01REAL\ntags: [x\n---\n'
    assert parse_frontmatter(norm("# n\n", existing=quoted))[0]["id"] == "01REAL"
    # a block never closed (a rule line at the top) or too large: replaced, not refused
    for unread in ("---\nA note that starts with a rule.\n", "---\nn: " + "y" * 70_000 + "\n---\n"):
        assert parse_frontmatter(norm("# n\n", existing=unread))[0]["title"] == "n"
    for odd in ("id: [a\n", "id:\n", "id: 'x\n", "created: nope\n", "ids: q\n"):
        meta = parse_frontmatter(norm("# n\n", existing=f"---\nx: [\n{odd}---\n"))[0]
        assert meta["id"] not in ("x", "q", "True") and meta["created"] == NOW, odd


def test_integers_up_to_the_digit_limit_round_trip() -> None:
    out = norm(f"---\nbig: {10**100 - 1}\nneg: {-(10**100) + 1}\n---\n")
    meta, _ = parse_frontmatter(out)
    assert meta["big"] == 10**100 - 1 and meta["neg"] == -(10**100) + 1
    assert_stable(out)
    with pytest.raises(InvalidFrontmatterError, match="at most 100 digits"):
        norm(f"---\nbig: {10**100}\n---\n")


def test_values_the_dumper_would_change_are_refused_not_written() -> None:
    # Every value must read back as the same type and value: check a few YAML 1.1 traps.
    text = "---\na: '0o17'\nb: 'yes'\nc: '1:30'\nd: 2026-01-01\ne: 1.0\nf: !!int 0x1F\n---\n"
    meta, _ = parse_frontmatter(norm(text))
    assert (meta["a"], meta["b"], meta["c"], meta["d"], meta["e"], meta["f"]) == (
        "0o17",
        "yes",
        "1:30",
        date(2026, 1, 1),
        1.0,
        31,
    )
    assert type(meta["e"]) is float and type(meta["d"]) is date


def test_plain_values_keep_what_was_written_where_yaml_readers_differ() -> None:
    """YAML 1.1 (PyYAML) read `no` as False, `10:30` as 630, `010` as 8 and `1.10` as 1.1,
    and a normalized note was saved so. Values are typed as YAML 1.2 (Obsidian) reads
    them, and only when they write back as written; anything else keeps its text."""
    text = (
        "---\ntitle: T\ntags: [NO, on, 010, Yes]\ntime: 10:30\nflag: no\nok: True\n"
        "code: 010\nzip: 01234\nver: 1.10\nhex: 0x1F\nbig: 1_000\nexp: 1e3\nhalf: .5\n"
        "n: -7\np: +5\nf: 2.5\ng: -0.0\nz: ~\nno: key\nlist: [off, y, 1:20:30]\n---\nbody\n"
    )
    out = norm(text)
    meta, body = parse_frontmatter(out)
    assert body == "body\n" and meta["tags"] == ["NO", "on", "010", "Yes"]
    kept = ("time", "flag", "code", "zip", "ver", "hex", "big", "exp", "half")
    assert {k: meta[k] for k in kept} == {
        "time": "10:30",
        "flag": "no",
        "code": "010",
        "zip": "01234",
        "ver": "1.10",
        "hex": "0x1F",
        "big": "1_000",
        "exp": "1e3",
        "half": ".5",
    }
    assert (meta["ok"], meta["n"], meta["p"], meta["f"], meta["z"]) == (True, -7, "+5", 2.5, None)
    assert type(meta["n"]) is int and type(meta["f"]) is float and type(meta["ok"]) is bool
    assert str(meta["g"]) == "-0.0" and meta["no"] == "key"
    assert meta["list"] == ["off", "y", "1:20:30"]
    # Written quoted where a YAML 1.1 reader would retype them: both readers agree.
    for line in ("time: '10:30'", "flag: 'no'", "code: '010'", "ver: '1.10'", "'no': key"):
        assert f"\n{line}\n" in out
    assert_stable(out)
    import yaml

    block = out.split("---\n")[1]
    assert yaml.safe_load(block)["time"] == "10:30"  # what a YAML 1.1 reader reads too


@pytest.mark.parametrize(
    "line",
    [
        "id: 5e91234",  # a short hash: a float that overflows, not a number anyone wrote
        "id: '5e91234'",
        "commit: 9E999",
        "title: '1e400'",
        "tags: ['5e91234', ok]",
        "phone: +4915112345678",
        "delta: -0",
        "zip: 09123",
        "zip: '09123'",
        "v: '1e3'",
        "v: 1e-7",
        "v: '0o17'",
        "v: 0" + "1" * 120,  # a leading zero: text, whatever its length
        "max_reading: .inf",  # (a person's; JSON has no such number)
        "min: -.Inf",
        "v: .NaN",
    ],
)
def test_a_value_a_rewrite_would_change_is_kept_as_text_and_written_quoted(line: str) -> None:
    """``5e91234`` read as infinity refused the note (its id too), as ``.inf`` did;
    ``+49...`` lost its plus; ``09123`` and ``1e3`` kept as text were written plain,
    which YAML 1.2 readers (Obsidian) take for numbers."""
    key, written = line.split(": ", 1)
    out = norm(f"---\n{line}\n---\nb\n")
    meta, _ = parse_frontmatter(out)
    value = meta[key][0] if key == "tags" else meta[key]
    assert value == written.strip("'[]").split(",")[0].strip("'"), out
    shown = next(x for x in out.splitlines() if x.startswith(f"{key}:"))
    assert "'" in shown, shown  # quoted: any YAML reader reads text
    assert_stable(out)


def test_typed_values_shown_as_text_are_spelled_as_yaml_writes_them() -> None:
    """A title or tag that YAML typed was saved as Python spells it (``True``,
    ``1e+16``); an explicit tag keeps its YAML meaning."""
    out = norm("---\ntitle: true\ntags: [true, 1.0e+16, 7]\nx: !!float .5\ny: !!int 010\n---\n")
    meta, _ = parse_frontmatter(out)
    assert meta["title"] == "true" and meta["tags"] == ["true", "1.0e+16", "7"]
    assert (meta["x"], meta["y"]) == (0.5, 8)
    from indexer.index.parse import parse_note

    row = parse_note(b"---\ntitle: false\ntype: true\ntags: [on, 2.5]\n---\nb\n", "a.md")
    assert (row.title, row.type, row.tags) == ("false", "true", '["on", "2.5"]')


def test_a_broken_block_keeps_an_id_written_quoted_or_with_spaces() -> None:
    """The salvage took an id only as one plain token: ids the server itself writes
    quoted ('123', 'no') became new ids; and a line inside a multi-line value won over
    the real id after it."""
    for written in ("'123'", "'no'", "'010'", "'1.10'", "meeting notes", '"a: b"'):
        on_disk = f"---\nid: {written}\ntitle: T\ntitle: dup\n---\nx\n"  # a duplicate key
        with pytest.raises(InvalidFrontmatterError):
            parse_frontmatter(on_disk)
        meta = parse_frontmatter(norm("---\ntitle: new\n---\nbody\n", existing=on_disk))[0]
        assert meta["id"] == yaml_text(written), written
    hostile = '---\ndesc: "one\nid: EVIL\ntwo"\nid: REAL\ntags: [\n---\nbody\n'
    assert parse_frontmatter(norm("# n\n", existing=hostile))[0]["id"] == "REAL"


def test_a_broken_blocks_created_is_read_as_yaml_reads_it() -> None:
    """The C parser gives plain scalars the style "", not None: every salvaged value was
    taken as quoted text, so a YAML timestamp Python's ISO reader does not take was lost
    (the next write stamped a new ``created``), and ``id: ~`` became the id "~"."""
    for written, kept in [
        ("2024-1-5 9:30:00", datetime(2024, 1, 5, 9, 30, tzinfo=UTC)),
        ("2024-01-05T09:30:00+5", datetime(2024, 1, 5, 4, 30, tzinfo=UTC)),
    ]:
        broken = f"---\nid: K1\ncreated: {written}\ntitle: a\ntitle: b\n---\nx\n"
        meta = parse_frontmatter(norm("# n\n", existing=broken))[0]
        assert meta["id"] == "K1" and meta["created"] == kept, written
    for empty in ("~", "null", ""):
        broken = f"---\nid: {empty}\ntitle: a\ntitle: b\n---\nx\n"
        meta = parse_frontmatter(norm("# n\n", existing=broken))[0]
        assert meta["id"] not in ("~", "null", "") and len(meta["id"]) == 26, empty


def test_yaml_1_1_leftovers_read_as_text_and_dates_as_titles() -> None:
    """``op: =`` and ``arrow: <<`` made the block unreadable (YAML 1.1's value and merge
    tags); a daily note's ``title: 2024-05-01`` (and such an id) was refused."""
    out = norm("---\nid: 2024-05-01\ntitle: 2024-05-01\nop: =\narrow: <<\n---\nb\n")
    meta, _ = parse_frontmatter(out)
    assert (meta["id"], meta["title"], meta["op"], meta["arrow"]) == (
        "2024-05-01",
        "2024-05-01",
        "=",
        "<<",
    )
    assert_stable(out)
    kept = parse_frontmatter(norm("# n\n", existing="---\nid: 2024-05-01\n---\nx\n"))[0]
    assert kept["id"] == "2024-05-01"


def test_an_empty_item_of_a_tag_list_is_no_tag() -> None:
    out = norm("---\ntags:\n  - work\n  -\n  - ~\n---\nb\n")
    assert parse_frontmatter(out)[0]["tags"] == ["work"]


def test_characters_past_the_bmp_are_written_as_they_are() -> None:
    """libyaml wrote every emoji and CJK Extension B character as a ``\\U`` escape,
    even with ``allow_unicode``: the file no longer read as written, and grep for them
    found nothing in the frontmatter."""
    out = norm("---\ntitle: 🎉 Launch 𠮷野家\ntags: [🎉, 𝔸]\nnote: 'a\\U0001F389'\n---\nb\n")
    assert "\ntitle: 🎉 Launch 𠮷野家\n" in out and "\ntags: [🎉, 𝔸]\n" in out
    meta, _ = parse_frontmatter(out)
    assert meta["note"] == "a\\U0001F389"  # a backslash and a U written as text stay so
    assert_stable(out)
    # a value holding U+0085 is written double-quoted, with it escaped (\N), by both dumpers
    out = norm('---\ntitle: "a\\Nb"\ntags: [😀]\n---\nb\n')
    assert parse_frontmatter(out)[0]["title"] == "a\x85b"
    from agent_client.notes import render_note, split_note

    assert split_note(render_note({"title": "a\x85b", "tags": ["😀"]}, "b"))[0]["title"] == (
        "a\x85b"
    )


def server_note(lines: str, note_id: str = "K1") -> str:
    """A note as the server writes it at ``NOW``, with ``lines`` among its other keys."""
    return (
        f"---\nid: {note_id}\ntitle: T\ncreated: 2026-01-02T03:04:05Z\n"
        f"updated: 2026-11-29T20:00:00Z\nbefore: [a, b]\n{lines}after: x\n---\nbody\n"
    )


YAML_1_1_BREAKS = ("\x85", "\u2028", "\u2029")


@pytest.mark.parametrize(
    ("written", "value", "rewritten"),
    [
        ('"line\\u2028sep"', "line\u2028sep", '"line\\Lsep"'),
        ('["x\\u2029y", z]', ["x\u2029y", "z"], '["x\\Py", z]'),
        ("'a\x85b'", "a\x85b", '"a\\Nb"'),  # raw in quotes: YAML 1.1 read a line break
        ("a\u2028  b", "a\u2028  b", '"a\\L  b"'),  # raw and plain
        ("\u2029", "\u2029", '"\\P"'),
    ],
)
def test_yaml_1_1_line_breaks_are_ordinary_characters_and_written_escaped(
    written: str, value: object, rewritten: str
) -> None:
    """U+0085, U+2028 and U+2029 are line breaks to YAML 1.1 (PyYAML) only: a raw NEL
    in quotes was read as a space, and U+2028 was written raw in single quotes with the
    line's indentation after it, which a YAML 1.2 reader (Obsidian) reads as spaces."""
    text = server_note(f"key: {written}\n")
    assert parse_frontmatter(text)[0]["key"] == value
    out = norm(text, existing=text)
    assert out == server_note(f"key: {rewritten}\n")  # nothing else in the block changed
    block = out.split("---\n")[1]
    assert not any(ch in block for ch in YAML_1_1_BREAKS)
    import yaml

    assert yaml.safe_load(block)["key"] == value  # what a YAML 1.1 reader reads too
    assert_stable(out)


def test_a_yaml_1_1_line_break_ends_no_comment_and_no_key() -> None:
    """Read as YAML 1.2 reads them (through stand-ins no text holds, not even as an
    escape): a comment goes on past one, and a key may hold one."""
    text = (
        "---\ntitle: T\n# note\u2028x: 1\nk\u2028ey: v\nraw: '\U000f0000\u2028'\n"
        'esc: "\\U000F0001\\U000F0002\u2029"\n---\nb\n'
    )
    expected = {
        "title": "T",
        "k\u2028ey": "v",
        "raw": "\U000f0000\u2028",
        "esc": "\U000f0001\U000f0002\u2029",
    }
    assert parse_frontmatter(text)[0] == expected
    out = norm(text, existing=text)
    meta = parse_frontmatter(out)[0]
    assert {key: meta[key] for key in expected} == expected and "x" not in meta
    assert not any(ch in out.split("---\n")[1] for ch in YAML_1_1_BREAKS)
    assert_stable(out)


def test_a_broken_block_salvages_no_id_from_the_middle_of_a_line() -> None:
    """The salvage split the block with ``str.splitlines``, which ends a line at U+2028:
    a value holding ``\u2028id: EVIL`` gave the note that id."""
    broken = "---\nx: [\nnote: a\u2028id: EVIL\u2029created: 1999-01-01\n---\nb\n"
    meta = parse_frontmatter(norm("# n\n", existing=broken))[0]
    assert meta["id"] != "EVIL" and len(meta["id"]) == 26 and meta["created"] == NOW


@pytest.mark.parametrize(
    "written", ["2.5", "20240501.1", "true", "True", "7", "1.0e+16", "2024-1-5 9:30:00"]
)
def test_an_id_yaml_types_is_kept_as_written_and_protected(written: str) -> None:
    """A note put in the vault with ``id: 2.5`` (a Folgezettel id) or ``id: true`` was
    refused when written back unchanged ("id must be a string"), and a write without
    the id gave it a new one."""
    text = server_note("", note_id=written)
    out = norm(text, existing=text)
    assert out == server_note("", note_id=f"'{written}'")  # its text, quoted: nothing else
    assert parse_frontmatter(out)[0]["id"] == written
    assert_stable(out)
    without = norm("---\ntitle: T\n---\nnew\n", existing=text)
    assert parse_frontmatter(without)[0]["id"] == written
    broken = f"---\nid: {written}\ntitle: a\ntitle: b\n---\n"  # (read line by line)
    assert parse_frontmatter(norm("# n\n", existing=broken))[0]["id"] == written
    if " " not in written and "+" not in written:  # (a line alone: one plain token)
        one_line = f"---\nx: [\nid: {written}\n---\n"
        assert parse_frontmatter(norm("# n\n", existing=one_line))[0]["id"] == written


def test_a_date_time_past_microseconds_is_kept_as_written() -> None:
    """PyYAML cut a fraction of a second to microseconds: ``.123456789Z`` was saved as
    ``.123456Z`` on any write."""
    nanos = "2024-05-01T10:30:00.123456789Z"
    lines = (
        f"measured: {nanos}\nlist: [2024-05-01 10:30:00.1234567 +2]\n"
        "tagged: !!timestamp 2024-05-01T10:30:00.0000001Z\n"
        "zeros: 2024-05-01T10:30:00.123456000Z\n"
    )
    meta = parse_frontmatter(server_note(lines))[0]
    assert (meta["measured"], meta["list"], meta["tagged"]) == (
        nanos,
        ["2024-05-01 10:30:00.1234567 +2"],
        "2024-05-01T10:30:00.0000001Z",
    )
    assert meta["zeros"] == datetime(2024, 5, 1, 10, 30, 0, 123456, tzinfo=UTC)  # (all held)
    out = norm(server_note(lines), existing=server_note(lines))
    assert out == server_note(
        f"measured: '{nanos}'\nlist: ['2024-05-01 10:30:00.1234567 +2']\n"
        "tagged: '2024-05-01T10:30:00.0000001Z'\nzeros: 2024-05-01T10:30:00.123456Z\n"
    )
    assert_stable(out)


def test_a_date_no_calendar_has_is_its_text() -> None:
    """One impossible date (a typo: ``2023-02-30``) made the whole block unreadable: a
    person's note lost its title, tags and type in the index, and a write that held one
    anywhere was refused. YAML 1.2 (Obsidian) has no date type: it is the value's text."""
    impossible = [
        "2023-02-30",
        "0000-01-01",
        "2023-13-01",
        "2023-01-01T10:00:00+25:00",
        "2023-01-01 25:00:00",
        "2023-01-01T23:59:60Z",
    ]
    for value in impossible:
        block = f"---\ntitle: Trip\ntags: [travel]\ndue: {value}\nlist: [{value}]\n---\nbody\n"
        meta, body = parse_frontmatter(block)
        assert (meta["title"], meta["tags"], meta["due"], meta["list"]) == (
            "Trip",
            ["travel"],
            value,
            [value],
        )
        assert body == "body\n"
        out = norm(f"---\ntitle: {value}\ndue: {value}\n---\nbody\n")
        again = parse_frontmatter(out)[0]
        assert (again["title"], again["due"]) == (value, value)
        assert_stable(out)
    with pytest.raises(InvalidFrontmatterError, match="created"):
        norm("---\ncreated: 2023-02-30\n---\nbody\n")  # (a protected date-time)
    assert parse_frontmatter("---\nd: 2023-02-28\n---\n")[0]["d"] == date(2023, 2, 28)
    from indexer.index.parse import parse_note

    person = b"---\ntitle: Japan trip\ntype: plan\ntags: [travel]\ncreated: 2023-02-30\n---\nx\n"
    row = parse_note(person, "trips/japan.md")
    assert (row.title, row.type, row.tags) == ("Japan trip", "plan", '["travel"]')


def yaml_text(written: str) -> str:
    import yaml

    return str(yaml.safe_load(f"v: {written}")["v"])


def test_the_read_back_check_refuses_any_difference() -> None:
    # The safety net behind idempotence: no known input reaches it, so check it directly.
    from shared.frontmatter import _check_reads_back

    _check_reads_back("---\na: 1\n---\nb\n", {"a": 1}, "b\n")
    for meta, body in [({"a": 1.0}, "b\n"), ({"a": True}, "b\n"), ({"a": 1}, "b")]:
        with pytest.raises(InvalidFrontmatterError, match="would not read back"):
            _check_reads_back("---\na: 1\n---\nb\n", meta, body)
    with pytest.raises(InvalidFrontmatterError, match="would not read back"):
        _check_reads_back("---\na: !!timestamp x\n---\n", {"a": "x"}, "")


# -- red-team finding 6: long headings ---------------------------------------------


def test_a_huge_heading_gives_a_capped_title_and_stays_idempotent() -> None:
    text = "# " + "t" * 100_000 + "\n"
    out = norm(text)
    meta, body = parse_frontmatter(out)
    assert meta["title"] == "t" * MAX_TITLE_CHARS
    assert body == text
    assert_stable(out)
    again = normalize_frontmatter_text(out, existing=out, now=NOW + timedelta(hours=1))
    assert parse_frontmatter(again)[0]["id"] == meta["id"]


def test_a_long_stem_is_capped_too() -> None:
    meta, _ = parse_frontmatter(norm("body", stem="s" * 300))
    assert meta["title"] == "s" * MAX_TITLE_CHARS


@pytest.mark.parametrize(
    ("heading", "title"),
    [
        ("# C#", "C#"),
        ("# F# and C#", "F# and C#"),
        ("# Title ##", "Title"),
        ("# Title #  ", "Title"),
        ("# foo#bar ###", "foo#bar"),
        ("#\tTab\t#", "Tab"),
    ],
)
def test_heading_title_strips_only_a_closing_hash_sequence(heading: str, title: str) -> None:
    meta, _ = parse_frontmatter(norm(heading + "\nbody\n", stem="stem"))
    assert meta["title"] == title


@pytest.mark.parametrize(
    ("body", "title"),
    [
        ("```sh\n# install deps\n```\n# Real\n", "Real"),
        ("```\r\n# no\r\n```\r\n# Yes\r\n", "Yes"),
        ("~~~~\n# no\n~~~\n# still code\n~~~~\n# Yes\n", "Yes"),
        ("```not`a fence\n# Yes\n", "Yes"),
        ("   ```\n# no\n    ```\n# still code\n```\n# Yes\n", "Yes"),
        ("```\n# never closed\n", "stem"),
        ("- item\n\n  ```sh\n# Title\n  ```\n", "Title"),  # (the fence ended with its item)
        ("1. a\n   ```\n   # in\n   ```\n# Out\n", "Out"),
        ("para\n  ```\n# no\n  ```\n# Yes\n", "Yes"),  # (a top-level fence, indented)
        ("# Real #\r\nbody\r\n", "Real"),
    ],
)
def test_a_heading_in_fenced_code_is_no_title(body: str, title: str) -> None:
    meta, out = parse_frontmatter(norm(body, stem="stem"))
    assert meta["title"] == title and out.replace("\r\n", "\n") == body.replace("\r\n", "\n")


@pytest.mark.parametrize(
    ("body", "title"),
    [
        ("Project Atlas\n=============\n\nbody\n", "Project Atlas"),  # (a README's title)
        ("Tagebuch 2026\r\n===\r\ntext\r\n", "Tagebuch 2026"),
        ("  學習筆記  \n=\n", "學習筆記"),
        ("```\nno\n===\n```\nYes\n===\n", "Yes"),
        ("## Sub\nTop\n===\n", "Top"),  # (a heading ends the block above)
        ("intro line\nTwo lines\n===\n# Real\n", "Real"),  # (a paragraph's: not guessed)
        ("- item\n===\n", "stem"),
        ("> quote\n===\n", "stem"),
        ("  # atx\n===\n", "stem"),
        ("    code\n===\n", "stem"),
        ("Sub\n---\n# Title\n", "Title"),  # (``-`` underlines a second level)
        ("# First\nSecond\n===\n", "First"),
    ],
)
def test_a_first_level_heading_underlined_with_equals_is_a_title(body: str, title: str) -> None:
    meta, _ = parse_frontmatter(norm(body, stem="stem"))
    assert meta["title"] == title


def test_underlined_lines_are_read_in_linear_time() -> None:
    """Every line a candidate (text over ``=``) after a paragraph's line: none a title."""
    started = time.thread_time()
    meta, _ = parse_frontmatter(norm("intro\n" + "x\n=\n" * 50_000, stem="s"))
    assert time.thread_time() - started < 1.0 and meta["title"] == "s"


def test_a_heading_with_a_long_gap_is_read_in_linear_time() -> None:
    """``# a`` + 40,000 spaces + ``b`` took 15.8 s (a regex for the closing #s)."""
    started = time.thread_time()
    meta, _ = parse_frontmatter(norm("# a" + " " * 40_000 + "b\n", stem="s"))
    assert time.thread_time() - started < 1.0
    assert meta["title"] == "a"  # (cut to the longest title, then trimmed)


# -- red-team finding 9: ids -------------------------------------------------------


def test_a_200_character_id_is_accepted() -> None:
    meta, _ = parse_frontmatter(norm("---\nid: " + "x" * 200 + "\n---\n"))
    assert meta["id"] == "x" * 200


@pytest.mark.parametrize("odd_id", ["a\nb", "a\tb", "x" * 500, " padded "])
def test_an_odd_id_already_on_disk_is_kept(odd_id: str) -> None:
    on_disk = "---\n" + _dump({"id": odd_id, "title": "T"}) + "---\nbody\n"
    out = norm("---\nid: new-one\n---\nnew body\n", existing=on_disk)
    assert parse_frontmatter(out)[0]["id"] == odd_id
    assert_stable(out, as_new_file=False)  # a writer may not *send* such an id (refused)


def test_a_blank_id_on_disk_counts_as_missing() -> None:
    out = norm("---\ntitle: T\n---\n", existing="---\nid: '   '\n---\n")
    assert len(parse_frontmatter(out)[0]["id"]) == 26


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


# Frontmatter-ish texts built from the pieces that broke normalization before: YAML
# tags, timestamps with odd offsets, big and odd integers, long headings, odd ids.
_fm_key = st.sampled_from(
    ["id", "title", "type", "tags", "aliases", "created", "updated", "foo", "bar", "<<", "Id"]
)
_fm_value = st.one_of(
    st.sampled_from(
        [
            "",
            "~",
            "yes",
            "0o17",
            "0x1F",
            "1:30",
            "1.10",
            ".nan",
            "-.inf",
            "2026-01-01",
            "2026-01-01T00:00:00Z",
            "2026-01-01 10:00:00 +5",
            "'a, b'",
            "'#a #b'",
            "[a, a]",
            "{a: 1}",
            "[[1]]",
            "!!timestamp nope",
            "!!timestamp 2026-01-01",
            "!!str 5",
            "!!int '7'",
            "!!binary aGk=",
            "!!set {a}",
            "&a 1",
            "*a",
            '"a\\nb"',
            "'  '",
            '"\\u2028"',
            '"\\x85"',
            "'---'",
            "|\n  a\n  ---\n  b",
            '"\\t"',
        ]
    ),
    st.builds(
        lambda h, m, s, frac: f"'2026-01-01T00:00:00+{h:02d}:{m:02d}:{s:02d}{frac}'",
        st.integers(0, 23),
        st.integers(0, 59),
        st.integers(0, 59),
        st.sampled_from(["", ".5", ".999999"]),
    ),
    st.builds(lambda h: f"2026-01-01T00:00:00+{h}", st.sampled_from(["5", "23:59", "99", "05:99"])),
    st.builds(
        lambda prefix, digit, n: prefix + digit * n,
        st.sampled_from(["", "0x", "0b", "0", "-", "0o"]),
        st.sampled_from(["1", "7", "f"]),
        st.integers(1, 5000),
    ),
    st.builds(lambda n: ":".join(["59"] * n), st.integers(1, 200)),
    st.text(max_size=20).map(lambda t: '"' + t.encode("unicode_escape").decode() + '"'),
)
_fm_body = st.one_of(
    _body,
    st.builds(lambda n: "# " + "t" * n + "\n", st.integers(0, 100_000)),
    st.sampled_from(["# C#\n", "# t ##\n", "#\n", "# a\u2028b\n", "---\nid: X\n---\n"]),
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(_fm_key, _fm_value), max_size=6, unique_by=lambda pair: pair[0]),
    _fm_body,
    st.booleans(),
)
def test_normalize_refuses_or_returns_a_fixed_point(
    pairs: list[tuple[str, str]], body: str, with_block: bool
) -> None:
    lines = "".join(f"{key}: {value}\n" for key, value in pairs)
    text = f"---\n{lines}---\n{body}" if with_block or pairs else body
    try:
        out = norm(text, stem="s")
    except InvalidFrontmatterError:
        event("refused")
        return
    event("normalized")
    meta, _ = parse_frontmatter(out)
    assert set(CANONICAL_KEYS) - {"type", "tags", "aliases"} <= set(meta)
    assert norm(out, stem="s") == out
    assert norm(out, existing=out, stem="s") == out


def test_a_parsed_block_is_the_callers_own_to_change() -> None:
    """Blocks parsed again come from a cache: a caller changing its copy changes no
    other caller's, and a refused block is refused every time."""
    block = "title: T\ntags:\n- a\nnested:\n  list: [1, {k: v}]\n"
    first = parse_yaml_block(block)
    first["title"] = "changed"
    first["tags"].append("b")
    first["nested"]["list"][1]["k"] = "changed"
    assert parse_yaml_block(block) == {
        "title": "T",
        "tags": ["a"],
        "nested": {"list": [1, {"k": "v"}]},
    }
    for _ in range(2):
        with pytest.raises(InvalidFrontmatterError):
            parse_yaml_block("a: 1\na: 2\n")
    big = "title: T\n" + "".join(f"k{i}: {'v' * 40}\n" for i in range(200))
    assert len(big) > CACHED_BLOCK_CHARS
    parsed = parse_yaml_block(big)
    parsed["title"] = "changed"
    assert parse_yaml_block(big)["title"] == "T"


def test_many_tags_are_read_in_linear_time() -> None:
    """Each tag was looked for in the list of those before it: 15,000 tags took 1.8 s to
    index, every time the note changed."""
    tags = [f"t{n}" for n in range(20_000)]
    started = time.thread_time()
    assert string_list("tags", [*tags, "#t1", "t2"]) == tags
    assert string_list("tags", ", ".join(tags), strict=False) == tags
    assert time.thread_time() - started < 1.0
