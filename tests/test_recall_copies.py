"""Notes of the same text (a note copied to another folder, a template filled twice):
recall quotes the text once and names every other note holding it under it, by its
header and ``(same text as above)``; both count as recalled in ``sources``. "The same"
as a reader sees it (spacing, composed or decomposed accents), not one word more or
less; day files of events keep their own rule (the same event on two days: once)."""

from __future__ import annotations

import unicodedata
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from fastmcp import Client
from hypothesis import given, settings
from hypothesis import strategies as st
from test_recall import World, check_block

from indexer.core import Core
from indexer.jobs.recall_block import (
    CLOSE,
    INTRO,
    OPEN,
    SHORT_INTRO,
    SHORT_INTRO_BELOW,
    compose,
)
from indexer.jobs.recall_copies import SAME_TEXT, said
from indexer.jobs.recall_source import Source
from indexer.jobs.tokens import estimate_tokens, quarters
from indexer.settings import Settings
from indexer.web.mcp import create_server

CARE = (
    "The zebrafish tank is fed twice a day, flakes in the morning and live brine shrimp "
    "at night. A third of the water is changed on Sundays and kept at 26 degrees."
)
VISIT = (
    "Notes from the aquarium visit: the keepers showed the breeding room, the coral "
    "quarantine and a zebrafish line used for heart research."
)


@pytest.fixture
def fresh(tmp_path: Path) -> Iterator[World]:
    built = World(tmp_path / "ws")
    yield built
    built.index.close()


def section(block: str, path: str) -> str:
    """The lines of one note's section of ``block``, its header line left out."""
    after = block.split(f"\n### {path}", 1)[1].split("\n", 1)[1]
    return after.split("\n#", 1)[0].split(CLOSE, 1)[0]


def named(block: str, path: str) -> bool:
    """Whether ``path`` is named as holding the text quoted above it (and not quoted)."""
    return section(block, path) == SAME_TEXT


def copies(fresh: World, lang: str, paths: list[str], title: str, text: str) -> None:
    for path in paths:
        fresh.write(lang, path, f"# {title}\n\n{text}\n")


def test_two_notes_of_one_text_are_quoted_once_and_the_room_goes_to_a_third(
    fresh: World,
) -> None:
    """The same care sheet in pets/ and in archive/ was quoted twice: at 140 tokens the
    aquarium note found no room. Now one is quoted, the other named by its header, and
    the aquarium note is quoted with what that leaves; the same notes with one word
    changed (Mondays) are two texts: both quoted, and the aquarium note does not fit."""
    copies(fresh, "en", ["archive/2025/zebrafish.md", "pets/zebrafish.md"], "Zebrafish care", CARE)
    fresh.write("en", "trips/aquarium.md", f"# Aquarium visit\n\n{VISIT}\n")
    result = fresh.recall.recall("en", "zebrafish", 140)
    check_block(result, 140)
    block = result["block"]
    assert block.count(CARE[:40]) == 1, block
    first, second = (s["path"] for s in result["sources"][:2])
    assert {first, second} == {"archive/2025/zebrafish.md", "pets/zebrafish.md"}
    assert CARE[:40] in section(block, first) and named(block, second), block
    assert block.index(f"\n### {first}") < block.index(f"\n### {second}")
    assert VISIT in section(block, "trips/aquarium.md"), block
    layers = {s["path"]: (s["layer"], s["tokens"]) for s in result["sources"]}
    header = f"\n### {second} — Zebrafish care\n"
    assert layers[second] == ("on_demand", estimate_tokens(header + SAME_TEXT))
    assert header + SAME_TEXT in block

    changed = CARE.replace("Sundays", "Mondays")
    fresh.write("en", "archive/2025/zebrafish.md", f"# Zebrafish care\n\n{changed}\n")
    again = fresh.recall.recall("en", "zebrafish", 140)
    check_block(again, 140)
    paths = [s["path"] for s in again["sources"]]
    assert sorted(paths) == ["archive/2025/zebrafish.md", "pets/zebrafish.md"], again["block"]
    assert SAME_TEXT not in again["block"]


def test_near_identical_texts_are_both_quoted(fresh: World) -> None:
    """One word changed (three times a day) is another text: quoted beside the one its
    exact copy is named under."""
    copies(fresh, "en", ["a/zebrafish.md", "b/zebrafish.md"], "Zebrafish care", CARE)
    other = CARE.replace("twice", "three times")
    fresh.write("en", "c/zebrafish.md", f"# Zebrafish care\n\n{other}\n")
    result = fresh.recall.recall("en", "zebrafish", 1500)
    check_block(result, 1500)
    block = result["block"]
    assert block.count(CARE) == 1 and block.count(other) == 1, block
    listed = [s["path"] for s in result["sources"]]
    assert sorted(listed) == ["a/zebrafish.md", "b/zebrafish.md", "c/zebrafish.md"]
    assert [named(block, path) for path in listed].count(True) == 1, block
    assert not named(block, "c/zebrafish.md")


def test_three_copies_are_named_under_the_one_quote(fresh: World) -> None:
    paths = ["pets/zebrafish.md", "archive/zebrafish.md", "shared/zebrafish care.md"]
    copies(fresh, "en", paths, "Zebrafish care", CARE)
    for budget in (120, 400, 1500):
        result = fresh.recall.recall("en", "zebrafish", budget)
        check_block(result, budget)
        block = result["block"]
        assert block.count(CARE[:40]) == 1, (budget, block)
        listed = [s["path"] for s in result["sources"]]
        assert sorted(listed) == sorted(paths), (budget, block)
        assert [named(block, path) for path in listed] == [False, True, True], block
        heads = [block.index(f"\n### {path}") for path in listed]
        assert heads == sorted(heads)


@pytest.mark.parametrize(
    ("lang", "query", "text", "other"),
    [
        (
            "zh-Hans",
            "斑马鱼",
            "斑马鱼每天喂两次，早上喂鱼片，晚上喂丰年虾。每个星期天换三分之一的水，水温保持在二十六度。",
            "水族馆参观笔记：饲养员带我们看了繁殖室、珊瑚检疫区和用于心脏研究的斑马鱼品系。",
        ),
        (
            "ar",
            "الزرد",
            "يُطعم سمك الزرد مرتين في اليوم، رقائق في الصباح وروبيان حي في المساء. "
            "يُغيَّر ثلث الماء كل يوم أحد وتبقى الحرارة ست وعشرين درجة.",
            "ملاحظات زيارة الحوض المائي: أرانا الحراس غرفة التكاثر وسلالة من سمك الزرد "
            "تُستخدم في أبحاث القلب.",
        ),
    ],
)
def test_copies_in_a_cjk_and_a_right_to_left_vault(
    fresh: World, lang: str, query: str, text: str, other: str
) -> None:
    """The same in Chinese and in Arabic (a diacritic-bearing script read right to left):
    one quote, both notes named, room for the third."""
    copies(fresh, lang, ["宠物/notes.md", "存档/notes.md"], "🐟", text)
    fresh.write(lang, "trips/visit.md", f"# 🐠\n\n{other}\n")
    for budget in (200, 1500):
        result = fresh.recall.recall(lang, query, budget)
        check_block(result, budget)
        block = result["block"]
        listed = [s["path"] for s in result["sources"]]
        assert set(listed) >= {"宠物/notes.md", "存档/notes.md"}, (budget, block)
        assert block.count(text[:20]) == 1, (budget, block)
        assert sum(named(block, path) for path in listed) == 1, block
        assert other in block, (budget, block)


def test_the_same_text_is_the_same_in_another_spacing_or_composition(fresh: World) -> None:
    """What a reader cannot tell apart is the same text: lines joined or broken, runs
    of spaces, é composed or decomposed (a copy made on another system)."""
    text = "Café notes: the zebrafish tank is cleaned on Fridays.\n\nThe filter, monthly."
    fresh.write("en", "a/cafe.md", f"# Café\n\n{text}\n")
    spaced = unicodedata.normalize("NFD", text.replace(": ", ":   ").replace("\n\n", "\n"))
    fresh.write("en", "b/cafe.md", f"# Café\n\n{spaced}\n")
    result = fresh.recall.recall("en", "zebrafish", 1500)
    check_block(result, 1500)
    listed = [s["path"] for s in result["sources"]]
    assert sorted(listed) == ["a/cafe.md", "b/cafe.md"]
    assert named(result["block"], listed[1]), result["block"]


def test_a_copy_of_the_user_profile_is_named_under_it(fresh: World) -> None:
    profile = "Prefers short answers. Keeps zebrafish and writes in British English."
    copies(fresh, "en", ["USER.md", "backup/USER.md"], "User profile", profile)
    result = fresh.recall.recall("en", "", 400)
    check_block(result, 400)
    block = result["block"]
    assert block.count(profile) == 1 and named(block, "backup/USER.md"), block
    by_path = {s["path"]: s["layer"] for s in result["sources"]}
    assert by_path == {"USER.md": "resident", "backup/USER.md": "resident"}


def test_a_recent_copy_of_a_hit_is_named_under_the_hit() -> None:
    """The hits are picked before the recent notes but printed after them: a recent
    note of a hit's text is named under the hit, never above it."""
    hit = Source("pets/zebrafish.md", "Care", f"# Care\n\n{CARE}\n", focus=("zebrafish",))
    recent = Source("inbox/copy.md", "Care", f"# Care\n\n{CARE}\n")
    note = Source("inbox/todo.md", "Todo", "# Todo\n\nBuy flakes.\n")
    candidates = {"resident": [], "recent": [recent, note], "on_demand": [hit]}
    sections, sources = compose(candidates, 400, ["zebrafish"], INTRO)
    assert [(s["path"], s["layer"]) for s in sources] == [
        ("inbox/todo.md", "recent"),
        ("pets/zebrafish.md", "on_demand"),
        ("inbox/copy.md", "on_demand"),
    ]
    assert sections.count(CARE[:40]) == 1 and named(sections, "inbox/copy.md"), sections


def test_the_same_event_on_two_days_is_still_left_out_beside_named_copies(
    fresh: World,
) -> None:
    """Day files keep their rule (the same event logged on two days is quoted once and
    the other day left out); notes of one text are each named."""
    for day in ("01", "02"):
        event = (
            f"\n## Event\n\n- time: 2026-03-{day}T10:00:00\n- title: Zebrafish fed\n"
            f"- tags: pets\n- entry: 01JENTRY{day}\n\nZebrafish fed: flakes, then a water test.\n"
        )
        head = f"---\ntitle: Events 2026-03-{day}\ntype: events\n---\n# Events 2026-03-{day}\n"
        fresh.write("en", f"events/2026/03/{day}.md", head + event)
    copies(fresh, "en", ["pets/zebrafish.md", "archive/zebrafish.md"], "Zebrafish care", CARE)
    result = fresh.recall.recall("en", "zebrafish", 1500)
    check_block(result, 1500)
    block = result["block"]
    assert block.count("Zebrafish fed: flakes, then a water test.") == 1, block
    days = [s["path"] for s in result["sources"] if s["path"].startswith("events/")]
    assert len(days) == 1, result["sources"]
    assert block.count(CARE) == 1, block
    assert named(block, "pets/zebrafish.md") != named(block, "archive/zebrafish.md"), block


@pytest.fixture
async def client(fresh: World) -> AsyncIterator[Client]:
    core = Core(Settings(workspace=fresh.ws), fresh.vault, index=fresh.index, recall=fresh.recall)
    async with Client(create_server(core)) as c:
        yield c


async def test_the_recall_tool_lists_both_notes_of_one_text(client: Client, fresh: World) -> None:
    copies(fresh, "en", ["pets/zebrafish.md", "archive/zebrafish.md"], "Zebrafish care", CARE)
    result = await client.call_tool("recall", {"lang": "en", "query": "zebrafish"})
    data = result.structured_content
    assert data is not None
    check_block(data, 1500)
    assert data["block"].count(CARE) == 1
    listed = {s["path"]: s for s in data["sources"]}
    assert set(listed) == {"pets/zebrafish.md", "archive/zebrafish.md"}
    copy = next(path for path in listed if named(data["block"], path))
    header = f"\n### {copy} — Zebrafish care\n"
    assert listed[copy] == {
        "path": copy,
        "layer": "on_demand",
        "tokens": estimate_tokens(header + SAME_TEXT),
    }


TEXTS = [
    CARE,
    CARE.replace("twice", "three times"),
    f"Intro.\n\n{CARE}",  # (quoted from its top, or as a hit from its second paragraph)
    VISIT,
    "Buy flakes.",
    "斑马鱼每天喂两次。",
]


@settings(max_examples=300, deadline=None)
@given(
    budget=st.integers(min_value=50, max_value=1200),
    layers=st.lists(
        st.tuples(
            st.sampled_from(["resident", "recent", "on_demand"]),
            st.integers(0, 5),  # the path (a note may be both recent and a hit)
            st.integers(0, len(TEXTS) - 1),
            st.booleans(),  # its spacing changed
        ),
        max_size=12,
    ),
)
def test_any_mix_of_copies_names_each_note_once_under_its_text(
    budget: int, layers: list[tuple[str, int, int, bool]]
) -> None:
    """Whatever the layers hold and the budget: within it, no note twice (a note may be
    resident, recent and a hit, quoted from other places), and each note named under
    the nearest note quoted above it, of the same text."""
    candidates: dict[str, list[Source]] = {"resident": [], "recent": [], "on_demand": []}
    for layer, number, text, spaced in layers:
        path = f"n{number}.md"
        if any(s.path == path for s in candidates[layer]):
            continue
        body = TEXTS[text].replace(" ", "  ") if spaced else TEXTS[text]
        focus = ("zebrafish",) if layer == "on_demand" else ()
        candidates[layer].append(Source(path, "T", f"# T\n\n{body}\n", focus=focus))
    intro = INTRO if budget >= SHORT_INTRO_BELOW else SHORT_INTRO
    sections, sources = compose(candidates, budget, ["zebrafish"], intro)
    assert quarters(f"{OPEN}\n{intro}\n{sections}{CLOSE}") <= 4 * budget
    paths = [s["path"] for s in sources]
    assert len(paths) == len(set(paths))
    above: Source | None = None  # the nearest note quoted above
    for listed in sources:
        path = listed["path"]
        if named(sections, path):
            assert above is not None, sections
            text = said(above, 4 * budget)
            holding = [s for part in candidates.values() for s in part if s.path == path]
            assert any(said(s, 4 * budget) == text for s in holding), sections
        else:  # (a quoted note is printed in its own layer)
            above = next(s for s in candidates[listed["layer"]] if s.path == path)
