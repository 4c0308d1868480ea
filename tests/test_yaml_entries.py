"""A frontmatter block dumped entry by entry (``shared.yaml_entries``, each entry's text
kept) is byte for byte the whole block's dump, for every value a block can hold, and a
kept text is never given for a value that is equal but written otherwise."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared.errors import InvalidFrontmatterError
from shared.frontmatter import dump_block
from shared.yaml_dialect import NoteDumper, PlainNoteDumper
from shared.yaml_entries import DUMP_OPTIONS, dump_entries

# Texts that YAML reads as something else, or that end a line, a block or a key.
# fmt: off
_TRICKY = [
    "", " ", "~", "null", "Null", "yes", "no", "on", "off", "true", "False", "y", "n",
    "0", "-0", "010", "0o17", "0x1F", "1_000", "+49", "1.10", "1e3", "1e400", ".inf",
    "-.inf", ".nan", "1:30", "10:30:00", "2024-05-01", "2024-05-01T10:00:00Z",
    "2024-05-01 10:00:00 +5", "---", "...", "--- x", "- a", "? a", ": a", "a: b", "a:b",
    "#a", "a #b", "'q'", '"q"', "it's", "[a]", "{a: 1}", "&a", "*a", "!tag", "%x", "@x",
    "`x", "|", ">", "a\nb", "a\n\nb", "\n", "a\n", "\na", "\t", "a\tb", "\r", "a\rb",
    "\x85", "a\u2028b", "\u2029", "\ufeff", "\x00", "\x07", "\x1b[31m", "\\", "\\U0001F600",
    "😀", "𠮷野家", "\u200b", "é", "e\u0301", "עברית", "العربية", "日本語", "한국어",
    "ไทย", "हिन्दी", "Ελληνικά", "русский", "x" * 200, "word " * 60,
]
# fmt: on
_text = st.one_of(
    st.sampled_from(_TRICKY),
    st.text(max_size=40),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=20),
    st.lists(st.sampled_from(_TRICKY), min_size=2, max_size=4).map("".join),
    st.builds(lambda n: "long " * n, st.integers(50, 2000)),
)
_zone = st.one_of(
    st.none(),
    st.just(UTC),
    st.builds(lambda minutes: timezone(timedelta(minutes=minutes)), st.integers(-23 * 60, 23 * 60)),
)
_scalar = st.one_of(
    _text,
    st.integers(),
    st.integers(-(10**100) + 1, 10**100 - 1),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, -0.0, 1.0, 1e16, 1e-7, 2.5]),
    st.dates(),
    st.builds(lambda moment, zone: moment.replace(tzinfo=zone), st.datetimes(), _zone),
)
_key = st.one_of(st.sampled_from(["id", "title", "tags", "created", "updated"]), _text)
_value = st.recursive(
    _scalar,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_key, inner, max_size=4),
    max_leaves=10,
)
_meta = st.dictionaries(_key, _value, max_size=8)


def whole(meta: dict[str, Any]) -> str:
    """The block as it was dumped before entries were kept."""
    dumped: str = yaml.dump(meta, Dumper=NoteDumper, **DUMP_OPTIONS)
    return dumped


def whole_block(meta: dict[str, Any]) -> str | None:
    """``dump_block`` as it was before (None: refused)."""
    try:
        dumped = whole(meta)
    except Exception:
        return None
    if "\\U" in dumped:
        plain: str = yaml.dump(meta, Dumper=PlainNoteDumper, **DUMP_OPTIONS)
        return plain  # (taken or not after a read back: dump_block's own step)
    return dumped


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_meta)
def test_entries_dump_as_the_whole_block(meta: dict[str, Any]) -> None:
    try:
        expected = whole(meta)
    except Exception:
        assert dump_entries(meta) is None  # the whole dump then refuses, as before
        return
    for _ in range(2):  # dumped, then from the kept texts
        got = dump_entries(meta)
        assert got is None or got == expected
    assert meta == {} or got is not None


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_meta)
def test_dump_block_writes_what_it_wrote_before(meta: dict[str, Any]) -> None:
    before = whole_block(meta)
    try:
        now = dump_block(meta)
    except InvalidFrontmatterError:
        assert before is None or len(before.encode()) > 64 * 1024 or "\\U" in whole(meta)
        return
    assert before is not None
    assert now in (before, whole(meta))  # (the plain dump is taken when it reads back)


def test_equal_values_written_otherwise_are_kept_apart() -> None:
    """1, 1.0 and True are equal in Python, as are 0.0 and -0.0, and two datetimes at
    one instant in other zones: each is written as its own."""
    moment = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    values: list[Any] = [
        1,
        1.0,
        True,
        0,
        0.0,
        -0.0,
        False,
        moment,
        moment.astimezone(timezone(timedelta(hours=2))),
        moment.replace(tzinfo=None),
        date(2026, 1, 2),
        "1",
        [1],
        [True],
        {"a": 1},
        {"a": 1.0},
    ]
    for _ in range(2):
        for value in values:
            assert dump_entries({"k": value}) == whole({"k": value}), value


def test_a_value_not_of_the_plain_types_is_dumped_whole() -> None:
    class Text(str):
        pass

    assert dump_entries({"k": Text("a")}) is None
    assert dump_entries({"k": (1, 2)}) is None
    assert dump_entries({}) is None
