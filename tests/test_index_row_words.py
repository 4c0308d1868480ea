"""A replaced row's FTS values kept from its insert (``indexer.index.row_words``) are the
very values ``fts_values`` and ``trigram_value`` compute from the stored row, for every
note. The FTS tables are contentless: a delete given other values than the insert's
leaves the old words found forever, so they must be exact."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from indexer.index import row_words
from indexer.index.parse import NoteRow, fts_values, lang_token, parse_note, trigram_value
from indexer.index.text import build_tables

# fmt: off
PIECES = [
    "", " ", "\n", "\n\n", "\u00a0", "word", "Café", "cafe\u0301", "İstanbul", "ıi\u0307",
    "\x00", "日本語の文章", "中文句子。", "한국어 문장", "ภาษาไทยไม่มีช่องว่าง", "العربية مُشَكَّلة",
    "עִבְרִית", "Ελληνικά ΆΈΉ", "русский ёлка", "हिन्दी", "বাংলা কো", "ᏣᎳᎩ", "ＡＢＣ１２３",
    "٢٠٢٤", "e\u0301\u0301\u0301", "\u200b\u200d\ufeff", "😀👍🏽", "1️⃣", "[[Link]]",
    "[[path/to|Alias]]", "#tag", "#project/alpha", "#タグ", "`code`", "```\n#notatag\n```\n",
    "# Heading\n", "## Sub\n", "- item\n", "> quote\n", "x" * 300, "ab " * 200,
]
_FRONTMATTER = [
    "", "---\n---\n", "---\ntitle: T\n---\n", "---\ntitle: Réunion «Atlas»\ntype: meeting\n"
    "tags: [projet, 会议, ประชุม]\naliases: [اجتماع]\nstatus: draft\n---\n",
    "---\ntags: Ünïcode, ΣΟΦΟΣ\npeople:\n  - name: Zoë\n    role: 山田\n---\n",
    "---\ncreated: 2026-11-02T10:00:00+01:00\nn: 2\nf: 1.5\nok: true\nd: 2024-05-01\n---\n",
    "---\ntitle: [a, b]\ntype: {a: 1}\n---\n", "---\nbroken: [\n---\n", "---\nno end\n",
]
# fmt: on
_body = st.one_of(
    st.lists(st.sampled_from(PIECES), max_size=12).map("".join),
    st.text(max_size=200),
    st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=20)), max_size=8).map(" ".join),
)
_note = st.builds(lambda head, body: head + body, st.sampled_from(_FRONTMATTER), _body)
_name = st.sampled_from(["a.md", "dir/Ünï 会议.md", "x.txt", "n/ملاحظة.md"])


def stored(lang: str, row: NoteRow) -> tuple:
    """``row`` as ``reconcile.SELECT_OLD`` reads it back (joined an integer)."""
    return (
        7, lang, row.title, row.tags, row.body, row.frontmatter, row.head,
        int(row.joined), 0, 0, row.hash, 0,
    )  # fmt: skip


def computed(old: tuple) -> tuple[tuple[str, ...], str]:
    """What ``reconcile.delete_row`` computed before values were kept."""
    _, lang, title, tags, body, frontmatter, head, joined = old[:8]
    return fts_values(lang, title, tags, body, frontmatter), trigram_value(head, body, bool(joined))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_note, _name, st.sampled_from(["en", "zh-Hans", "ar"]))
def test_kept_values_are_those_computed_from_the_stored_row(
    text: str, name: str, lang: str
) -> None:
    build_tables()
    data = text.encode("utf-8", "surrogatepass")
    row = parse_note(data, name)
    words, trigrams = row_words.inserted(row)
    old = stored(lang, row)
    assert ((*words, lang_token(lang)), trigrams) == computed(old)
    assert row_words.deleted(old) == computed(old)


def test_a_row_as_inserted_is_deleted_with_the_kept_values_not_computed_again() -> None:
    build_tables()
    row = parse_note("Ελληνικά, 日本語 and [[a link]] #tag\n".encode(), "k.md")
    words, trigrams = row_words.inserted(row)
    got_words, got_trigrams = row_words.deleted(stored("en", row))
    assert got_trigrams is trigrams  # (the kept objects: nothing was computed)
    assert all(a is b for a, b in zip(got_words, words, strict=False))


def test_a_stored_row_unlike_the_kept_one_is_computed_from_its_columns() -> None:
    """Another row with the same bytes (a hash is of the file's bytes only) and another
    title (its file's name), or any column changed, takes its own values."""
    build_tables()
    row = parse_note("Ελληνικά text without a heading\n".encode(), "first.md")
    row_words.inserted(row)
    other = parse_note("Ελληνικά text without a heading\n".encode(), "Σ second.md")
    assert other.hash == row.hash and other.title != row.title
    old = stored("en", other)
    assert row_words.deleted(old) == computed(old)
    assert computed(old)[0] != computed(stored("en", row))[0]
    changed = (*stored("en", row)[:4], "Ελληνικά other body", *stored("en", row)[5:])
    assert row_words.deleted(changed) == computed(changed)


def test_only_the_last_rows_are_kept_and_big_ones_never() -> None:
    build_tables()
    for i in range(row_words.MAX_KEPT_ROWS + 5):
        row_words.inserted(parse_note(f"note {i}\n".encode(), f"n{i}.md"))
    assert len(row_words._kept) <= row_words.MAX_KEPT_ROWS
    big = parse_note(("x" * (row_words.MAX_KEPT_CHARS + 1)).encode(), "big.md")
    row_words.inserted(big)
    assert big.hash not in row_words._kept
    assert row_words.deleted(stored("en", big)) == computed(stored("en", big))
