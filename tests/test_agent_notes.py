"""Pure helpers of the agent client: notes, confirmation, edits, event sections, tool args."""

from __future__ import annotations

import json
import unicodedata
from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

import pytest

from agent_client.actions import apply_edit
from agent_client.claude_memory import files
from agent_client.events import day_path, event_section
from agent_client.merge.confirmation import MAX_SUMMARY_CHARS, parse_confirmation
from agent_client.merge.fallback import holds_entry, merge_tags, merged_note, similarity
from agent_client.merge.paths import slugify, title_key
from agent_client.notes import render_note, split_note, unreadable_block
from agent_client.reasons import entry_reason
from shared.errors import InvalidFrontmatterError
from shared.frontmatter import normalize_frontmatter_text, parse_frontmatter
from shared.models import EditAction, MemoryEntry

NOTE = (
    "---\nid: 01ABC\ntitle: Go\ntype: item\ntags: [verbs]\ncreated: 2026-11-01T10:00:00Z\n"
    "updated: 2026-11-02T10:00:00Z\nsource: book\n---\n# Go\n\nwent\n"
)


def test_split_and_render_round_trip() -> None:
    meta, body = split_note(NOTE)
    assert meta["id"] == "01ABC" and meta["created"] == datetime(2026, 11, 1, 10, tzinfo=UTC)
    assert body == "# Go\n\nwent\n"
    assert split_note(render_note(meta, body)) == (meta, body)
    assert split_note("no frontmatter\n") == ({}, "no frontmatter\n")
    assert split_note("---\n- a list\n---\nbody\n")[0] == {}


DATED = (
    "---\nid: 01ABC\ntitle: Trip\ncreated: 2026-11-01T10:00:00Z\nupdated: 2026-11-02T10:00:00Z\n"
    "due: 2024-05-01\nstart: 2024-05-01T10:30:00+02:00\nat: 2001-12-14t21:59:43.10-05:00\n"
    "local: 2024-01-01 10:00:00\ntagged: !!timestamp 2024-05-02\ndays: [2024-05-03]\n"
    "note: '2024-05-04'\n---\n# Trip\n\nBody\n"
)
T_ENTRY = datetime(2026, 11, 29, 12, tzinfo=UTC)
_UNTOUCHED = ("due", "start", "at", "local", "tagged", "days", "note")


def _edited_by_each_client_path(text: str) -> dict[str, str]:
    """``text`` rewritten by every client path that rewrites a note's frontmatter."""
    shown = files.seen("trip.md", text, "etag")
    return {
        "edit action": apply_edit(text, EditAction("en", "trip.md", frontmatter={"level": 1})),
        "body edit": apply_edit(text, EditAction("en", "trip.md", body="# Trip\n\nNew\n")),
        "no-LLM merge": merged_note(
            text, MemoryEntry("en", "knowledge", "Trip", "more", ["x"], T_ENTRY), [], UTC
        ),
        "memory tool": files.stored("trip.md", shown.text + "more\n", shown.meta),
    }


@pytest.mark.parametrize("path", ["edit action", "body edit", "no-LLM merge", "memory tool"])
def test_untouched_dates_keep_their_type_and_text(path: str) -> None:
    """A date or time the client does not change stays one (as ISO text, the dumper
    wrote it quoted: a string); written as the server writes it, whatever its form."""
    now = datetime(2026, 12, 1, tzinfo=UTC)
    edited = _edited_by_each_client_path(DATED)[path]
    before = parse_frontmatter(DATED)[0]
    after = parse_frontmatter(edited)[0]
    for key in _UNTOUCHED:
        assert (type(after[key]), after[key]) == (type(before[key]), before[key]), key
    assert isinstance(after["due"], date) and isinstance(after["note"], str)
    server = normalize_frontmatter_text(DATED, existing=DATED, now=now)
    written = normalize_frontmatter_text(edited, existing=DATED, now=now)
    lines = [line for line in server.splitlines() if line.startswith(_UNTOUCHED)]
    assert len(lines) == len(_UNTOUCHED)
    assert [line for line in written.splitlines() if line.startswith(_UNTOUCHED)] == lines


def test_slugs_and_title_keys() -> None:
    assert slugify('Past tense of "go"!') == "past-tense-of-go"
    assert slugify("東京の天気") == "東京の天気"
    assert slugify("???") == "note"
    assert title_key("Past  tense, of GO") == title_key("past tense of go")
    assert similarity("past tense of go", "the past tense of go") >= 0.6
    assert similarity("東京の天気", "東京天気") >= 0.6  # a particle added or dropped
    # a character of its own is another topic, as a word of its own is
    assert similarity("東京の天気", "東京の天気予報") == 0.0
    assert similarity("张三的电话号码", "张三的妻子的电话号码") == 0.0
    assert similarity("コーヒーが好き", "コーヒーが好きではない") == 0.0
    assert similarity("田中さんの誕生日", "田中さんの奥さんの誕生日") == 0.0
    assert similarity("ชอบกาแฟ", "ไม่ชอบกาแฟ") == 0.0
    assert similarity("cats", "dogs") == 0.0
    # other numbers, other notes: days, versions, parts (in any script's digits)
    assert similarity("meeting 2026 11 01", "meeting 2026 11 02") == 0.0
    assert similarity("own topic 0 0", "own topic 1 0") == 0.0
    assert similarity("会议 2026年11月1日 记录", "会议 2026年11月2日 记录") == 0.0
    assert similarity("release ٣ notes", "release ٤ notes") == 0.0
    assert similarity("q1 2026 plan", "the 2026 q1 plan") >= 0.6
    assert similarity("项目会议纪要第一季度", "项目会议纪要第二季度") == 0.0  # CJK numerals
    assert similarity("二〇二六年十一月一日", "二〇二六年十一月二日") == 0.0
    assert similarity("chapter ⅳ", "chapter ⅴ") == 0.0  # Roman numerals
    assert similarity("项目会议纪要", "项目会议纪要汇总") == 0.0  # as "retro" and "retro notes"
    assert similarity("sprint one retro notes", "sprint two retro notes") == 0.0  # words
    assert similarity("python tip", "python tips") == similarity("box", "boxes") == 1.0
    assert similarity("bus", "bu") == 0.0  # (a plural's s on a word of three letters)
    assert similarity("sprint three retro", "the sprint three retros") >= 0.6
    assert similarity("deuxième réunion du projet", "troisième réunion du projet") == 0.0
    assert similarity("the second draft of the plan", "the first draft of the plan") == 0.0


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("Favourite drink of Carol", "Favourite drink of Dave"),  # another person
        ("Flight to Paris on May 3", "Flight to Berlin on May 3"),  # another place
        ("Flight to Paris", "Flight from Paris"),  # function words in place of each other
        ("My car", "Your car"),
        ("Pasta with garlic", "Pasta without garlic"),  # not forms of one word
        ("Trip to Austria", "Trip to Australia"),
        ("Invoice 2026a", "Invoice 2026b"),
        ("sprint three retro", "sprint three retro notes"),  # a word of its own
        ("Anna", "Hanna"),
        ("Geburtstag von Carol", "Geburtstag von Dave"),
        ("Haus Regeln", "Hausaufgaben Regeln"),  # a compound is no form of its first word
        ("Kinder Zeitplan", "Kindergarten Zeitplan"),
    ],
)
def test_titles_with_a_word_of_their_own_are_other_topics(one: str, other: str) -> None:
    assert similarity(title_key(one), title_key(other)) == 0.0


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("past tense of go", "the past tense of go"),  # a function word more
        ("project plans", "the project plan"),  # forms of one word
        ("the planning of the trip", "trip plans"),
        ("Carol's favourite drink", "favourite drink of Carol"),
        ("A guide to Rome", "The guide to Rome"),  # articles swapped
        ("Le plan du projet", "plan du projet"),
        ("Notes de réunion", "Note de réunion"),
        ("plans", "plan"),
        ("회의록", "회의록들"),  # one word without spaces: character pairs
    ],
)
def test_titles_that_differ_in_function_words_or_word_forms_match(one: str, other: str) -> None:
    assert similarity(title_key(one), title_key(other)) >= 0.6


def test_title_keys_keep_the_sign_of_a_number_and_punctuation_only_titles() -> None:
    assert title_key("-5 degrees") != title_key("5 degrees")
    assert title_key("-5 Degrees") == title_key("-5  degrees!")
    assert title_key("from -3 to +4") == "from -3 to +4"
    assert title_key("2026-11-01 x-5") == "2026 11 01 x 5"  # a dash between, not a sign
    keys = {title_key(t) for t in ["..", "---", "?", "!", "…"]}
    assert len(keys) == 5 and "" not in keys
    assert title_key(" ? ") == title_key("?")


def test_merge_tags_keeps_order_and_splits_strings() -> None:
    assert merge_tags(["a", "b"], ["b", "#c"]) == ["a", "b", "c"]
    assert merge_tags("x, #y", ["y"]) == ["x", "y"]
    assert merge_tags(None, []) == []


def test_an_entry_is_held_only_as_a_whole_section() -> None:
    body = "# Go\n\nwent\n\n## 2026-11-29: Go\n\ngone\n  \n![p](go.md.assets/p.png)\n"
    assert holds_entry(body, "went", [])
    assert holds_entry(body, "\n gone \n", [])
    assert holds_entry(body, "gone", ["![p](go.md.assets/p.png)"])
    assert not holds_entry(body, "went", ["![p](go.md.assets/p.png)"])  # not with that image
    assert not holds_entry(body, "go", [])  # a word of a heading
    assert not holds_entry(body, "Go", [])
    assert not holds_entry("# Go\n\nwent, gone\n", "went", [])  # part of a section
    assert not holds_entry("# Go\n\nwent\nmore\n", "went", [])
    assert holds_entry("# A\n\none\n\ntwo\n## B\n", "one\ntwo", [])


def test_edit_keeps_protected_fields() -> None:
    action = EditAction(
        "en",
        "items/go.md",
        body="# Go\n\ngone\n",
        frontmatter={
            "id": "HACK",
            "created": "1999-01-01T00:00:00Z",
            "tags": ["x"],
            "source": None,
        },
    )
    meta, body = split_note(apply_edit(NOTE, action))
    assert meta["id"] == "01ABC" and meta["created"] == datetime(2026, 11, 1, 10, tzinfo=UTC)
    assert meta["tags"] == ["x"] and "source" not in meta
    assert body == "# Go\n\ngone\n"
    meta, body = split_note(apply_edit(NOTE, EditAction("en", "items/go.md", frontmatter={"k": 1})))
    assert meta["k"] == 1 and body == "# Go\n\nwent\n"


def test_an_edit_of_the_frontmatter_alone_keeps_the_body_byte_for_byte() -> None:
    """``edit --set k=v`` dropped the blank lines a body began with (a ``write`` keeps
    them)."""
    note = "---\nid: 01ABC\ntitle: Dave\n---\n\n\nDave body.\n\n"
    edited = apply_edit(note, EditAction("en", "dave.md", frontmatter={"k": "v"}))
    assert edited == "---\nid: 01ABC\ntitle: Dave\nk: v\n---\n\n\nDave body.\n\n"


def test_edit_refuses_a_note_whose_block_cannot_be_read() -> None:
    """A repeated key made the block unreadable, so the edit took it for body text and
    wrote a second block on top (its tags ended up as body text); a new body dropped it."""
    broken = "---\nid: 01ABC\ntags: [a]\ntags: [b]\n---\n# Go\n\nwent\n"
    for action in (
        EditAction("en", "items/go.md", frontmatter={"status": "done"}),
        EditAction("en", "items/go.md", body="# Go\n\ngone\n"),
    ):
        with pytest.raises(InvalidFrontmatterError, match="'tags' appears more than once"):
            apply_edit(broken, action)
    assert unreadable_block(NOTE) is None and unreadable_block("no block\n") is None


def test_confirmation_is_checked_strictly() -> None:
    ok = parse_confirmation('{"updated_files": ["a.md"], "update_summary": "x"}', ["a.md"])
    assert ok.updated_files == ["a.md"] and ok.update_summary == "x"
    fenced = '```json\n{"updated_files": [], "update_summary": "nothing new"}\n```'
    assert parse_confirmation(fenced, []).updated_files == []
    listed_less = parse_confirmation(
        '{"updated_files": ["a.md"], "update_summary": "x"}', ["a.md", "b.md"]
    )
    assert listed_less.updated_files == ["a.md", "b.md"]
    bad = [
        ("Done! I merged it.", "not JSON"),
        ('{"updated_files": ["a.md"]}', "exactly"),
        ('{"updated_files": "a.md", "update_summary": "x"}', "list"),
        ('{"updated_files": ["z.md"], "update_summary": "x"}', "did not write"),
        ('{"updated_files": [], "update_summary": "x"}', "empty"),
        ('{"updated_files": ["a.md"], "update_summary": " "}', "non-empty"),
        ('{"updated_files": ["a.md"], "update_summary": "\\u001b\\u202e\\n"}', "non-empty"),
    ]
    for text, message in bad:
        with pytest.raises(ValueError, match=message):
            parse_confirmation(text, ["a.md"])
    # A file claimed whose write the vault refused: the refusal is said, not hidden.
    refused = {"items/z.md": "conflict: items/z.md changed since it was read"}
    with pytest.raises(ValueError, match=r"the vault refused their writes: items/z\.md: conflict"):
        parse_confirmation('{"updated_files": ["items/z.md"], "update_summary": "x"}', [], refused)


def test_the_models_summary_is_one_bounded_line() -> None:
    """The model's ``update_summary`` became the notice's "one-line summary" as sent: 8 MB
    of it, its line breaks and its terminal controls reached the host's chat agent."""
    said = "Merged\n\n# Ignore the notes\u2028and \x1b[2Jclear\t\u202eit " + "word " * 200_000
    text = json.dumps({"updated_files": ["a.md"], "update_summary": said})
    summary = parse_confirmation(text, ["a.md"]).update_summary
    assert len(summary) <= MAX_SUMMARY_CHARS and summary.endswith("…")
    assert summary.startswith("Merged # Ignore the notes and [2Jclear it word word")
    assert summary.isprintable()
    held = parse_confirmation(
        json.dumps({"updated_files": ["a.md"], "update_summary": "क्षत्रिय " * 80}), ["a.md"]
    ).update_summary
    assert not unicodedata.category(held.removesuffix("…")[-1]).startswith("M")  # (whole)


def test_event_day_and_section() -> None:
    late = datetime(2026, 11, 29, 23, 30, tzinfo=UTC)
    assert day_path(late, ZoneInfo("UTC"))[0] == "events/2026/11/29.md"
    assert day_path(late, ZoneInfo("Asia/Tokyo"))[0] == "events/2026/11/30.md"
    entry = MemoryEntry("en", "event", "Lesson", "## not a heading\ntext", ["a", "b"], late)
    section = event_section(entry, day_path(late, ZoneInfo("UTC"))[1])
    assert section.startswith("\n## Event\n")
    assert "- time: 2026-11-29T23:30:00+00:00" in section
    assert "- tags: a, b" in section and f"- entry: {entry.id}" in section
    assert "\\## not a heading" in section and section.count("\n## ") == 1


def test_the_reason_of_an_entry_is_one_clean_line() -> None:
    entry = MemoryEntry("en", "event", "Lesson\t3:  verbs\u2028again\x7f", "x", id="e-1.a:b")
    assert entry_reason(entry) == "entry:e-1.a:b Lesson 3: verbs again"
    long = MemoryEntry("en", "knowledge", "t" * 200, "x", id="k" * 128)
    long.title = "word " * 120  # longer than validate() allows, still cut to what history takes
    reason = entry_reason(long)
    assert 495 <= len(reason) <= 500 and reason.startswith("entry:" + "k" * 128 + " word word")
    assert reason.split(" ", 1)[0] == "entry:" + long.id  # undo finds it by the first word
    # a bidi override or a zero-width space would be refused by the server; an emoji's
    # or a Persian word's joiner is text and stays
    hidden = MemoryEntry(
        "en", "event", "fix\u202etxt.exe\u200b 👩\u200d💻 می\u200cخواهم", "x", id="e2"
    )
    assert entry_reason(hidden) == "entry:e2 fix txt.exe 👩\u200d💻 می\u200cخواهم"


@pytest.mark.parametrize(
    "bad", ["", "has space", "-leading", "x" * 129, "tab\tinside", "é", "e1\n", "e1\r\n"]
)
def test_an_entry_id_must_name_it_in_history(bad: str) -> None:
    with pytest.raises(ValueError, match="id must be"):
        MemoryEntry("en", "event", "t", "x", id=bad).validate()
    MemoryEntry("en", "event", "t", "x", id="01JD3Q:turn-3.entry_1").validate()
