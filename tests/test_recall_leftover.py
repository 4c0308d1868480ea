"""What recall leaves unused goes on to the recent notes cut short (SPEC, recall: "a
budget split between them, unused budget flowing on"): a recent note is capped while
the resident files and the hits want the room, and lifted past its cap, best first, by
what they leave. A helper's vault (8 long unrelated notes and one short hit) got a
233-token block at 300 tokens and the same at 1,500: 1,267 tokens unused beside recent
notes cut to 100 each."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_recall import World, check_block

from indexer.jobs.tokens import estimate_tokens

BUDGETS = (300, 1500, 4000)
RECENT_CAP = 100  # tokens a recent note gets at most at these budgets, until the leftover

# (lang, the words of the long notes, their joiner and full stop, the query, the hit)
VAULTS = [
    (
        "en",
        "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike "
        "november oscar papa quebec romeo sierra tango",
        " ",
        ".",
        "database migration?",
        "The database migration is done.",
    ),
    (
        "zh-Hans",
        "天气 散步 公园 咖啡 音乐 电影 朋友 周末 早餐 晚饭 花园 书店 地铁 雨伞 照片 旅行",
        "",
        "。",
        "数据库迁移怎么样了？",
        "数据库迁移已经完成。",
    ),
    (
        "ar",
        "الطقس حديقة قهوة موسيقى فيلم صديق عطلة فطور عشاء مكتبة قطار مظلة صورة رحلة سوق بحر",
        " ",
        ".",
        "ماذا عن ترحيل قاعدة البيانات؟",
        "اكتمل ترحيل قاعدة البيانات.",
    ),
]


@pytest.fixture
def fresh(tmp_path: Path) -> Iterator[World]:
    built = World(tmp_path / "ws")
    yield built
    built.index.close()


def _fill(world: World, lang: str, words: str, joiner: str, stop: str, hit: str) -> None:
    """8 long notes of no word of the query, then ``items/db.md``, the hit."""
    rng = random.Random(4)
    vocabulary = words.split()
    for number in range(8):
        paragraphs = [
            joiner.join(rng.choice(vocabulary) for _ in range(60)) + stop for _ in range(12)
        ]
        body = "\n\n".join(paragraphs)
        world.write(lang, f"items/long{number}.md", f"# Long {number}\n\n{body}\n")
    world.write(lang, "items/db.md", f"# DB\n\n{hit}\n")


@pytest.mark.parametrize(
    ("lang", "words", "joiner", "stop", "query", "hit"), VAULTS, ids=[v[0] for v in VAULTS]
)
def test_what_is_left_goes_to_the_recent_notes_cut_short(
    fresh: World, lang: str, words: str, joiner: str, stop: str, query: str, hit: str
) -> None:
    _fill(fresh, lang, words, joiner, stop, hit)
    recent_tokens: list[int] = []
    for budget in BUDGETS:
        result = fresh.recall.recall(lang, query, budget)
        check_block(result, budget)
        block = result["block"]
        assert result["tokens"] == estimate_tokens(block) <= budget
        layers = [(s["path"], s["layer"]) for s in result["sources"]]
        assert layers[-1] == ("items/db.md", "on_demand"), (budget, layers)  # the hit, whole
        assert f"> {hit}\n" in block, budget
        recent = [s for s in result["sources"] if s["layer"] == "recent"]
        assert len(recent) == 5, (budget, layers)  # the same notes, each quoted
        assert block.index("## Recent") < block.index("## On demand")  # the layout as it was
        recent_tokens.append(sum(s["tokens"] for s in recent))
        if budget > 300:  # (the notes hold more than any of these budgets)
            assert result["tokens"] >= budget * 95 // 100, (budget, result["tokens"])
            first, last = recent[0]["tokens"], recent[-1]["tokens"]
            assert first > RECENT_CAP, (budget, recent)  # lifted past the cap, best first
            assert last <= max(first, RECENT_CAP + 2), (budget, recent)
    assert recent_tokens == sorted(set(recent_tokens)), recent_tokens  # more budget, more


def test_the_cap_holds_while_the_hits_want_the_room(fresh: World) -> None:
    """The leftover is what the hits and the resident files leave: long hits that take
    the whole room leave the recent notes at their cap."""
    _fill(fresh, "en", *VAULTS[0][1:4], "Short note.")
    fresh.write("en", "USER.md", "# User\n\nPrefers short answers.\n")
    long = "\n\n".join(f"kiwi paragraph {i} " + "orchard word " * 30 for i in range(60))
    for number in range(3):
        fresh.write("en", f"hits/k{number}.md", f"# Kiwi {number}\n\n{long}\n")
    for budget in BUDGETS:
        result = fresh.recall.recall("en", "kiwi orchard", budget)
        check_block(result, budget)
        recent = [s["tokens"] for s in result["sources"] if s["layer"] == "recent"]
        assert recent and max(recent) <= max(RECENT_CAP, budget // 20) + 2, (budget, recent)
        assert "> Prefers short answers.\n" in result["block"]
