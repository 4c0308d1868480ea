"""Hostile inputs to the knowledge merge, end to end against a real ``indexer serve``:
an LLM that confirms a merge it did not make, titles that slug to names the server
refuses or that lose their vowel signs, image file names that inject Markdown, dates
before the year 1000, the same picture given twice. Each test checks the vault itself."""

from __future__ import annotations

import itertools
import json
import re
import struct
import unicodedata
import zlib
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest
from helpers.indexer_process import RunningIndexer, vault_dir
from helpers.llm_stub import (
    LLMStub,
    RawReply,
    completion,
    final,
    last_tool_result,
    running_llm_stub,
    tool_call,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_client.merge import paths
from agent_client.merge.paths import slugify, title_key
from agent_client.notices import CollectingNoticeSink, SystemNotice
from agent_client.settings import ClientSettings, LLMSettings
from agent_client.writer import MemoryWriter
from shared import path_names as names
from shared.models import MemoryEntry
from shared.workspace import OVERVIEW_FILE, day_file

T0 = datetime(2026, 11, 29, 20, 0, 0, tzinfo=UTC)
_langs = itertools.count()
NOTE = "---\ntitle: Go\ntype: item\n---\n# Go\n\n- went: past tense\n"


@pytest.fixture(scope="module")
def stub() -> Iterator[LLMStub]:
    with running_llm_stub() as running:
        yield running


@pytest.fixture
def lang() -> str:
    return f"en-h{next(_langs):03d}"


def run(
    server: RunningIndexer,
    entries: list[MemoryEntry],
    stub: LLMStub | None = None,
    *,
    fallback: bool = True,
) -> list[SystemNotice]:
    """Submit ``entries`` to a fresh writer (with the stub as its model, if given)."""
    llm = None
    if stub is not None:
        llm = LLMSettings(model="stub-model", base_url=stub.base_url, max_steps=6, timeout=20.0)
    settings_ = ClientSettings(workspace=server.workspace, tz=UTC, llm=llm, llm_fallback=fallback)
    sink = CollectingNoticeSink()
    writer = MemoryWriter(settings_, sink)
    try:
        writer.submit(entries)
        assert writer.flush(60)
    finally:
        writer.close()
    return sink.notices


def knowledge(lang: str, title: str, content: str, **kw: Any) -> MemoryEntry:
    return MemoryEntry(lang, "knowledge", title, content, timestamp=kw.pop("at", T0), **kw)


def vault_text(server: RunningIndexer, lang: str) -> str:
    """Every note of the vault, concatenated (not the folder summaries, which quote them)."""
    notes = sorted(vault_dir(server, lang).rglob("*.md"))
    return "\n".join(p.read_text() for p in notes if p.name != OVERVIEW_FILE)


def png_bytes() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00"))
        + chunk(b"IEND", b"")
    )


def image_destinations(text: str) -> list[str]:
    """The destinations of the image links in ``text``, read as CommonMark does
    (``<...>`` with backslash escapes, or bare), percent-decoded as a renderer would."""
    found = []
    for line in text.splitlines():
        match = re.fullmatch(r"!\[[^\[\]\n]*\]\((<(?:\\.|[^<>\\\n])*>|[^\s()<>]+)\)", line)
        if match:
            dest = match.group(1)
            if dest.startswith("<"):
                dest = re.sub(r"\\(.)", r"\1", dest[1:-1])
            found.append(re.sub(r"%([0-9A-F]{2})", lambda m: chr(int(m.group(1), 16)), dest))
    return found


# -- 1. an LLM merge that changed nothing is not a success -------------------------------


def _refused_write(request: dict[str, Any], turn: int) -> dict[str, Any]:
    if turn == 0:  # frontmatter the server refuses: the only write fails
        return tool_call("write", path="items/x-bad.md", content="---\ntitle: [oops\n---\nx")
    return final([], "Done.")


def _unchanged_rewrite(request: dict[str, Any], turn: int) -> dict[str, Any]:
    if turn == 0:
        return tool_call("read", path="items/go.md")
    if turn == 1:
        content = __import__("json").loads(last_tool_result(request))["content"]
        return tool_call("write", path="items/go.md", content=content)
    return final(["items/go.md"], "Merged.")


SCRIPTS: dict[str, Any] = {
    "empty confirmation": [final([], "Nothing to add.")],
    "refused write": _refused_write,
    "unchanged rewrite": _unchanged_rewrite,
}


@pytest.mark.parametrize("case", sorted(SCRIPTS))
def test_an_llm_merge_that_changed_no_note_falls_back(
    server: RunningIndexer, stub: LLMStub, lang: str, case: str
) -> None:
    seed = vault_dir(server, lang) / "items/go.md"
    seed.parent.mkdir(parents=True)
    seed.write_text(NOTE)
    stub.run(SCRIPTS[case])
    (notice,) = run(server, [knowledge(lang, "Empty confirm", "unique-marker-7f3a")], stub)
    assert notice.ok and notice.method == "fallback", notice.error
    assert "changed no note" in (notice.fallback_reason or ""), notice.fallback_reason
    assert vault_text(server, lang).count("unique-marker-7f3a") == 1
    assert seed.read_text() == NOTE
    assert not (vault_dir(server, lang) / "items/x-bad.md").exists()


def test_a_reply_cut_at_the_token_limit_runs_none_of_its_calls(
    server: RunningIndexer, stub: LLMStub, lang: str
) -> None:
    """A reply stopped by ``max_tokens`` (``finish_reason: length``) had its whole calls
    run: the first note written, the one the model was writing when it was cut lost (or
    written cut, had its arguments still parsed). The merge falls back instead."""
    cut = completion(tool_call("write", path="items/cut.md", content="# Cut\n\n- half of"))
    cut["choices"][0]["finish_reason"] = "length"
    stub.run([RawReply(200, cut)])
    (notice,) = run(server, [knowledge(lang, "Cut reply", "whole-marker-9c1e")], stub)
    assert notice.ok and notice.method == "fallback", notice.error
    assert "cut short at its token limit" in (notice.fallback_reason or "")
    assert not (vault_dir(server, lang) / "items/cut.md").exists()
    assert vault_text(server, lang).count("whole-marker-9c1e") == 1
    assert len(stub.requests) == 1


def test_without_the_fallback_a_merge_that_changed_nothing_fails(
    server: RunningIndexer, stub: LLMStub, lang: str
) -> None:
    stub.run([final([], "Nothing to add.")])
    (notice,) = run(server, [knowledge(lang, "Lost", "marker-x")], stub, fallback=False)
    assert not notice.ok and "changed no note" in (notice.error or ""), notice
    assert "marker-x" not in vault_text(server, lang) if vault_dir(server, lang).exists() else True


# -- 2. and 3. slugs the server accepts, in any script ------------------------------------


def test_device_names_mirror_the_servers() -> None:
    assert paths.DEVICE_NAMES == names._DEVICE_NAMES


@pytest.mark.parametrize("title", ["CON", "Aux", "nul", "PRN", "com1", "LPT9", "ＣＯＮ", "COM¹"])
def test_a_device_name_title_is_stored(server: RunningIndexer, lang: str, title: str) -> None:
    (notice,) = run(server, [knowledge(lang, title, f"about {title}")])
    assert notice.ok, notice.error
    (path,) = notice.updated_files
    assert path.split("/")[-1].split(".")[0].upper() not in names._DEVICE_NAMES
    assert f"about {title}" in (vault_dir(server, lang) / path).read_text()


@pytest.mark.parametrize(
    ("title", "slug"),
    [
        ("हिन्दी भाषा", "हिन्दी-भाषा"),
        ("ภาษาไทย น้ำ", "ภาษาไทย-น้ำ"),
        ("Crème brûlée", "crème-brûlée"),
        ("می\u200cخواهم", "می\u200cخواهم"),
    ],
)
def test_combining_marks_stay_in_their_words(
    server: RunningIndexer, lang: str, title: str, slug: str
) -> None:
    assert slugify(title) == slug
    (notice,) = run(server, [knowledge(lang, title, "marks kept")])
    assert notice.ok and notice.updated_files == [f"items/{slug}.md"], notice
    assert "marks kept" in (vault_dir(server, lang) / f"items/{slug}.md").read_text()
    # a second entry of the same title finds the note by its slug: one note, two sections
    (again,) = run(server, [knowledge(lang, title, "again")])
    assert again.updated_files == [f"items/{slug}.md"]


def test_titles_differing_only_in_vowel_signs_are_different_notes() -> None:
    assert title_key("कि") != title_key("का")
    assert slugify("कि") != slugify("का")


# Titles search reads alike, which made two notes (and two names in a race).
READ_ALIKE = [
    ("Straße", "STRASSE"),  # case folded, not lowered
    ("İstanbul", "Istanbul"),  # lower() made "i" and a combining dot
    ("كَتَبَ الدَّرْسَ", "كتب الدرس"),  # harakat
    ("كتــــب الدرس", "كتب الدرس"),  # tatweel
    ("שָׁלוֹם עוֹלָם", "שלום עולם"),  # niqqud
    ("data\u200bbase tuning", "database tuning"),  # a zero-width space inside a word
    ("data\u00adbase tuning", "database tuning"),  # a soft hyphen
    ("Project ＡＢＣ", "Project ABC"),  # full width
    ("ｶﾀｶﾅ練習", "カタカナ練習"),  # half width, voiced marks
    ("ﬁle notes", "file notes"),  # a ligature
    ("𝐀𝐁𝐂 plan", "ABC plan"),  # mathematical bold
    ("ﻛﺘﺐ", "كتب"),  # Arabic presentation forms
    ("أحمد", "احمد"),  # alef with or without hamza (the key only)
]


@pytest.mark.parametrize(("one", "other"), READ_ALIKE)
def test_titles_search_reads_alike_are_one_topic(one: str, other: str) -> None:
    assert title_key(one) == title_key(other)
    if one not in ("أحمد", "Straße"):  # (a name keeps these letters as typed)
        assert slugify(one) == slugify(other)  # one name: two writers at once make one note


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("ılık", "ILIK"),  # Turkish's dotless i (the dotted İ was folded already)
        ("ığdır gezisi", "IĞDIR GEZİSİ"),
        ("Καλημέρα σημειώσεις", "ΚΑΛΗΜΕΡΑ ΣΗΜΕΙΩΣΕΙΣ"),  # Greek capitals go without accents
        ("Ёлка", "Елка"),  # Russian's ё, optional in print
        ("داده\u200cهای من", "داده های من"),  # Persian's ZWNJ, often typed as a space
        ("അവൻ", "അവന്\u200d"),  # Malayalam's atomic chillu, and its old spelling
        ("উৎসব", "উত্\u200dসব"),  # Bengali's khanda ta, and its old spelling
        ("تقرير ٢٠٢٤", "تقرير 2024"),  # any script's digits: the ASCII ones
        ("बजट २०२४", "बजट 2024"),
    ],
)
def test_titles_search_folds_alike_are_one_topic(one: str, other: str) -> None:
    """Search reads these alike, the tags' merge too; the titles made two notes (a
    helper's entries in many scripts). A name keeps the letters as typed: the first
    note's name holds the topic, found again by its title's key."""
    assert title_key(one) == title_key(other)


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("東京 の天気", "東京の天気"),
        ("สวัสดี ครับ", "สวัสดีครับ"),
        ("学习 计划 2026", "学习计划 2026"),
        ("ラーメン 屋", "ラーメン屋"),
    ],
)
def test_a_space_between_letters_of_an_unspaced_script_names_no_other_topic(
    one: str, other: str
) -> None:
    """Chinese, Japanese and Thai are written without spaces: one typed between two of
    their letters made a second note (``items/東京-の天気.md``); between a word of a spaced
    script and one of them, or in Korean, a space still counts."""
    assert title_key(one) == title_key(other)


def test_a_space_in_a_spaced_script_still_counts() -> None:
    assert title_key("사과 나무") != title_key("사과나무")
    assert title_key("Tokyo 天気") != title_key("Tokyo天気")


@pytest.mark.parametrize(
    ("title", "ends"),
    [
        (
            "ประวัติศาสตร์ของประเทศไทยและวัฒนธรรมที่สำคัญซึ่งเราควรจดจำไว้เสมอเกี่ยวกับอาหารไทยและเมืองไทย",
            "ไว้เสมอ",
        ),
        (
            "संस्कृति और इतिहास के बारे में महत्वपूर्ण जानकारी जो हमें याद रखनी चाहिए क्षत्रिय राजाओं का इतिहास",
            "चाहिए",
        ),
        ("বাংলা সংস্কৃতি ও ইতিহাস সম্পর্কে গুরুত্বপূর্ণ তথ্য যা আমাদের মনে রাখা উচিত ক্ষত্রিয় রাজাদের কথা", "উচিত"),
    ],
)
def test_a_long_title_s_name_is_cut_between_characters_as_seen(title: str, ends: str) -> None:
    """The name was cut at 80 characters keeping only marks with their letter: it ended
    in Thai ``เ`` without the consonant it is written before, or in ``क्`` of ``क्ष``."""
    slug = slugify(title)
    assert len(slug) <= 80 and slug.endswith(ends), slug


def test_what_search_reads_apart_stays_apart() -> None:
    """The old NFKC key merged "10² facts" into "102 facts"; NFKC rewrote Thai ``ำ``."""
    assert title_key("10² facts") != title_key("102 facts")
    assert slugify("2⁵ rule") == "2⁵-rule"
    assert slugify("ทำงาน") == "ทำงาน"
    assert slugify("ΟΔΥΣΣΕΥΣ") == "οδυσσευς"  # a final sigma stays one in a name
    assert slugify("Straße") == "straße"  # as typed, where the key has "ss"


def test_a_title_read_alike_goes_to_the_first_note(server: RunningIndexer, lang: str) -> None:
    first, second = run(
        server,
        [knowledge(lang, "كَتَبَ الدَّرْسَ", "one"), knowledge(lang, "كتــــب الدرس", "two")],
    )
    assert first.updated_files == second.updated_files == ["items/كتب-الدرس.md"]


def test_signs_that_name_things_make_titles_different() -> None:
    keys = {title_key(t) for t in ("C++ templates", "C# templates", "C templates", "C/C++")}
    assert len(keys) == 4
    assert title_key("AT&T pricing") != title_key("AT T pricing")
    assert title_key("“Go”: past tense!") == title_key("go past tense")


def test_titles_sharing_a_slug_get_notes_of_their_own(server: RunningIndexer, lang: str) -> None:
    """ "C++ templates", "C# templates" and "C templates" all slug to ``c-templates``: each
    is its own note, and a second entry of one of them goes back to that one."""
    titles = ["C++ templates", "C# templates", "C templates", "C# templates"]
    entries = [knowledge(lang, t, f"fact {n} about {t}") for n, t in enumerate(titles)]
    notices = run(server, entries)
    assert [n.updated_files for n in notices] == [
        ["items/c-templates.md"],
        ["items/c-templates-2.md"],
        ["items/c-templates-3.md"],
        ["items/c-templates-2.md"],
    ]
    items = vault_dir(server, lang) / "items"
    second = (items / "c-templates-2.md").read_text()
    assert "title: C# templates" in second and "fact 3 about C# templates" in second
    assert "C#" not in (items / "c-templates.md").read_text()


def test_the_model_is_told_a_free_path_when_the_slug_is_taken(
    server: RunningIndexer, stub: LLMStub, lang: str
) -> None:
    seed = vault_dir(server, lang) / "items/c-templates.md"
    seed.parent.mkdir(parents=True)
    seed.write_text("---\ntitle: C++ templates\n---\n# C++ templates\n")
    told: list[str] = []

    def script(request: dict[str, Any], turn: int) -> Any:
        if turn == 0:
            told.append(json.loads(request["messages"][1]["content"])["suggested_path"])
            return tool_call("write", path=told[0], content="# C# templates\n\ngenerics\n")
        return final([told[0]], "Created the note.")

    stub.run(script)
    (notice,) = run(server, [knowledge(lang, "C# templates", "generics")], stub)
    assert notice.ok and notice.method == "llm", notice.error
    assert told == ["items/c-templates-2.md"]
    assert seed.read_text().endswith("# C++ templates\n")


def test_long_titles_fit_the_servers_byte_limit() -> None:
    for title in [
        "ह" + "ि" * 100,
        "日本語" * 60,
        "x" * 300,
        "a" + "\u0301" * 300,
        "\U00020000" * 100,
        "\u65e5\u672c\U000e0100\U000e0100",  # a selector after a selector (hypothesis)
        "g\u034fo \u3164 go\u200d caf\u00e9\ufe0f",  # invisible, unjoined, unvaried
    ]:
        slug = slugify(title)
        names.check_segment(f"{slug}.md.assets")
        assert slug and not unicodedata.category(slug[0]).startswith("M")


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=120))
def test_every_slug_is_a_name_the_server_accepts(title: str) -> None:
    slug = slugify(title)
    assert unicodedata.is_normalized("NFC", slug)
    for segment in (f"{slug}.md", f"{slug}.md.assets"):
        for char in segment:
            names.check_char(char)
        names.check_segment(segment)


# -- 4. and 6. images ---------------------------------------------------------------------


def test_an_image_file_name_cannot_inject_markdown(
    server: RunningIndexer, lang: str, tmp_path: Path
) -> None:
    image = tmp_path / "pic]\n# Injected heading.png"
    image.write_bytes(png_bytes())
    (notice,) = run(server, [knowledge(lang, "Alt injection", "see picture", images=[str(image)])])
    assert notice.ok, notice.error
    note = vault_dir(server, lang) / notice.updated_files[0]
    text = note.read_text()
    assert not re.search(r"^#+ Injected", text, re.M), text
    (dest,) = image_destinations(text)
    assert (note.parent / dest).read_bytes() == png_bytes()


def test_image_links_work_from_a_note_whose_name_needs_brackets(
    server: RunningIndexer, stub: LLMStub, lang: str, tmp_path: Path
) -> None:
    image = tmp_path / "chart.png"
    image.write_bytes(png_bytes())
    target = "items/my notes (old) 100%.md"
    stub.run(
        [
            tool_call("write", path=target, content="# Old notes\n\nsales up\n"),
            final([target], "Created."),
        ]
    )
    entry = knowledge(lang, "Chart", "sales", images=[str(image)])
    (notice,) = run(server, [entry], stub)
    assert notice.ok and notice.method == "llm", notice
    note = vault_dir(server, lang) / target
    (dest,) = image_destinations(note.read_text())
    assert (note.parent / dest).read_bytes() == png_bytes()


def test_the_same_image_twice_is_linked_once(
    server: RunningIndexer, lang: str, tmp_path: Path
) -> None:
    image = tmp_path / "board.png"
    image.write_bytes(png_bytes())
    spellings = [str(image), str(tmp_path / "." / "board.png"), str(image)]
    (notice,) = run(server, [knowledge(lang, "Board", "the plan", images=spellings)])
    assert notice.ok, notice.error
    text = (vault_dir(server, lang) / "items/board.md").read_text()
    assert len(image_destinations(text)) == 1, text
    assert len([p for p in notice.updated_files if ".assets/" in p]) == 1


# -- 5. years before 1000 ------------------------------------------------------------------


def test_day_files_have_four_digit_years() -> None:
    assert day_file(date(999, 5, 5)) == "events/0999/05/05.md"
    assert day_file(date(1, 1, 1)) == "events/0001/01/01.md"
    assert day_file(date(2026, 11, 3)) == "events/2026/11/03.md"


def test_an_event_before_the_year_1000(server: RunningIndexer, lang: str) -> None:
    old = datetime(999, 5, 5, 12, tzinfo=UTC)
    entry = MemoryEntry(lang, "event", "Old event", "long ago", timestamp=old)
    (notice,) = run(server, [entry])
    assert notice.ok and notice.updated_files == ["events/0999/05/05.md"], notice
    assert "long ago" in (vault_dir(server, lang) / "events/0999/05/05.md").read_text()


def test_a_merged_section_before_the_year_1000_has_a_four_digit_date(
    server: RunningIndexer, lang: str
) -> None:
    old = datetime(999, 5, 5, 12, tzinfo=UTC)
    run(server, [knowledge(lang, "Old", "first")])
    (notice,) = run(server, [knowledge(lang, "Old", "second", at=old)])
    assert notice.ok, notice.error
    assert (
        "## 0999-05-05: Old\n\nsecond\n" in (vault_dir(server, lang) / "items/old.md").read_text()
    )
