"""How recall lays its block out (what a reviewer found in realistic vaults): fewer
sources each quoted usefully rather than many slivers, headings that say nothing left
out, a hit quoted where its keyword is, the budget handed out resident, on demand, then
recent, day files of events quoted one event at a time, count-only folder abstracts in
one line, and the query's words (not search's bigrams) in the heading."""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_recall import World, check_block

from indexer.jobs.tokens import cut_to, fit_paragraphs


@pytest.fixture
def fresh(tmp_path: Path) -> Iterator[World]:
    built = World(tmp_path / "ws")
    yield built
    built.index.close()


def quote(line: str) -> str:
    return f"> {line}\n" if line else ">\n"


def quoted(block: str, path: str) -> list[str]:
    """The quoted lines of one source's section of ``block``."""
    section = block.split(f"\n### {path}", 1)[1].split("\n#", 1)[0]
    return [line[2:] for line in section.splitlines() if line.startswith("> ")]


def by_layer(result: dict) -> dict[str, list[str]]:
    layers: dict[str, list[str]] = {}
    for source in result["sources"]:
        layers.setdefault(source["layer"], []).append(source["path"])
    return layers


# -- slivers ----------------------------------------------------------------------------


DECISION = (
    "We decided to postpone the {0} rollout because latency was three times over budget "
    "and the on-call team asked for another week of load tests before any cutover."
)


def test_a_small_budget_quotes_fewer_sources_each_usefully(fresh: World) -> None:
    """300 tokens quoted 14 sources of about 15 tokens each: ``> We…``, ``> We decided…``.
    Each source shown now has its first sentence or some 25 words; the lower-ranked
    ones are dropped."""
    for number in range(12):
        topic = f"atlas{number}"
        body = DECISION.format(topic) + " " + "More details follow here. " * 20
        fresh.write(
            "en", f"projects/atlas/decision-{number}.md", f"# Decision {number}\n\n{body}\n"
        )
    for budget in (120, 300, 600):
        result = fresh.recall.recall("en", "atlas rollout latency", budget)
        check_block(result, budget)
        hits = by_layer(result)["on_demand"]
        assert hits and (len(hits) < 8 or budget > 300), (budget, hits)
        for path in hits:
            text = " ".join(quoted(result["block"], path))
            assert len(text.split()) >= 18 or text.endswith("budget."), (budget, path, text)
    result = fresh.recall.recall("zh-Hans", "", 300)  # (an empty vault: nothing at all)
    assert result["sources"] == []


def test_chinese_hits_are_not_cut_to_a_word_each(fresh: World) -> None:
    """zh, 300 tokens: ``> 关于数…`` five times."""
    for number in range(8):
        body = f"关于数据迁移的第{number}个回滚方案，我们决定采用新的方案，因为风险太大。" * 6
        fresh.write("zh-Hans", f"项目/数据迁移/会议-{number}.md", f"# 会议{number}\n\n{body}\n")
    result = fresh.recall.recall("zh-Hans", "数据迁移的回滚方案是怎么决定的？", 300)
    check_block(result, 300)
    for path in by_layer(result)["on_demand"]:
        text = "".join(quoted(result["block"], path))
        assert len(text) >= 25, (path, text)


# -- headings that say nothing ------------------------------------------------------------


def test_a_heading_repeating_the_title_is_left_out_and_cjk_text_is_cut(fresh: World) -> None:
    """A note of the fallback merge (``## 2026-05-18: <title>`` then one long line of
    Chinese) was quoted as its heading alone: the line after a heading was never cut."""
    for number, title in enumerate(("日语五十音", "健身计划", "读书笔记")):
        text = f"上次在这里踩过坑。记得周末复习{title}。和上周学的内容有关。" * 30  # (three texts)
        body = f"# {title}\n\n## 2026-05-18: {title}\n\n{text}\n"
        fresh.write("zh-Hans", f"items/k{number}.md", body)
    result = fresh.recall.recall("zh-Hans", "", 600)
    check_block(result, 600)
    block = result["block"]
    assert "> ## 2026-05-18" not in block
    for path in by_layer(result)["recent"]:
        lines = quoted(block, path)
        assert lines and lines[0].startswith("上次在这里踩过坑。"), lines


def test_a_heading_is_no_text_shown_and_never_ends_a_quote() -> None:
    """After a heading, the long paragraph that follows is cut to fit; a heading that a
    cut leaves with nothing after it (``> ## Details``) is left out."""
    long = "word " * 200
    lines, _ = fit_paragraphs([["## Section"], [long]], 80, quote)
    assert lines[0] == "> ## Section\n" and lines[-1].startswith("> word word")
    lines, cut = fit_paragraphs([["We decided."], ["## Details"], [long]], 40, quote)
    assert lines == ["> We decided.\n"] and cut
    lines, _ = fit_paragraphs([["We decided."], ["## Details"]], 400, quote)
    assert lines == ["> We decided.\n"]


def test_no_quote_ends_with_a_dangling_heading(fresh: World) -> None:
    details = "rollback plan needs attention. " * 60
    for number in range(4):
        body = f"We decided to postpone rollback {number}.\n\n## Details\n\n{details}"
        fresh.write("en", f"d/n{number}.md", f"# Decision {number}\n\n{body}\n")
    for budget in (200, 300, 600, 1500):
        result = fresh.recall.recall("en", "rollback", budget)
        check_block(result, budget)
        for path in result["sources"]:
            lines = quoted(result["block"], path["path"])
            assert lines and not lines[-1].startswith("## "), (budget, lines)


def test_a_cut_ends_after_a_sentence_when_one_ends_late_enough() -> None:
    text = "Jun Ali is a security reviewer at Acme. Is the go-to for Postgres questions."
    assert cut_to(text, 60) == "Jun Ali is a security reviewer at Acme. …"
    assert (
        cut_to("数据迁移的回滚方案。我们决定采用新的方案，因为风险太大。", 60)
        == "数据迁移的回滚方案。…"
    )
    early = cut_to("a b. c d e f g h i j k l m n o p q r s t", 30)  # (not past half)
    assert early.startswith("a b. c d e") and early.endswith(" n…")


# -- a hit quoted where it matches ---------------------------------------------------------


def test_a_cut_hit_is_quoted_around_its_keyword(fresh: World) -> None:
    """``> Jun Ali is a security reviewer at Acme. Is the go-to for…``: "Postgres" came
    right after the cut."""
    line = (
        "Jun Ali is a security reviewer at Acme and sits with the platform team on the "
        "third floor, next to the window. Is the go-to for Postgres questions. "
        + "Has two kids and runs marathons on the weekend. "
        * 5
    )
    for number in range(4):  # (four texts: notes of one text are quoted once)
        text = line.replace("Jun Ali", f"Jun Ali {number}")
        fresh.write("en", f"people/p{number}.md", f"# Person {number}\n\n{text}\n")
    for budget in (120, 200, 300):
        result = fresh.recall.recall("en", "postgres", budget)
        check_block(result, budget)
        for path in by_layer(result)["on_demand"]:
            text = " ".join(quoted(result["block"], path))
            assert "Postgres" in text, (budget, text)
    short = fresh.recall.recall("en", "postgres", 120)["block"]
    assert "> … Is the go-to for Postgres questions." in short
    roomy = fresh.recall.recall("en", "postgres", 4000)["block"]
    assert f"> {line.replace('Jun Ali', 'Jun Ali 0').strip()}" in roomy  # the line whole


def test_a_window_in_chinese_starts_between_characters(fresh: World) -> None:
    text = "这个要点很重要。" * 40 + "王伟负责数据库备份。" + "记得周末复习。" * 40
    fresh.write("zh-Hans", "people/w.md", f"# 同事\n\n{text}\n")
    result = fresh.recall.recall("zh-Hans", "王伟", 120)
    check_block(result, 120)
    lines = quoted(result["block"], "people/w.md")
    assert lines[0].startswith("… ") and "王伟负责数据库备份。" in lines[0], lines


# -- the budget in priority order ------------------------------------------------------------


def test_the_hits_are_served_before_recent_notes(fresh: World) -> None:
    """With no USER.md or PROJECT.md, the resident share went to the recent layer, ahead
    of the hits: 1,500 tokens spent 334 on the same recent notes whatever the query."""
    long = "\n\n".join(f"kiwi paragraph {i} " + "orchard word " * 30 for i in range(40))
    for number in range(3):
        fresh.write("en", f"hits/k{number}.md", f"# Kiwi {number}\n\n{long}\n")
    other = "\n\n".join(f"paragraph {i} " + "unrelated word " * 30 for i in range(40))
    for number in range(5):
        fresh.write("en", f"other/o{number}.md", f"# Other {number}\n\n{other}\n")
    budget = 1500
    result = fresh.recall.recall("en", "kiwi", budget)
    check_block(result, budget)
    tokens = {"recent": 0, "on_demand": 0}
    for source in result["sources"]:
        tokens[source["layer"]] += source["tokens"]
    assert tokens["on_demand"] > budget * 60 // 100, tokens  # its share and the resident's
    assert tokens["recent"] <= budget * 25 // 100, tokens  # its own share, no more
    block = result["block"]
    assert block.index("## Recent") < block.index("## On demand")  # printed as H2-AMS


def test_a_recent_note_gets_a_capped_part(fresh: World) -> None:
    """A 50,000-character note of one line took 4,304 tokens of the recent layer. The cap
    holds while the hits want the room; what they leave lifts it (the SPEC's unused
    budget flowing on: with nothing else to show, the note fills the block)."""
    fresh.write("en", "big.md", "# Big\n\n" + "lorem ipsum " * 4_200 + "\n")
    fresh.write("en", "small.md", "# Small\n\nA short note.\n")
    for budget in (1500, 8000):
        alone = fresh.recall.recall("en", "", budget)
        check_block(alone, budget)
        big = next(s for s in alone["sources"] if s["path"] == "big.md")
        assert big["tokens"] > budget * 80 // 100, (budget, big)
    long = "\n\n".join(f"kiwi paragraph {i} " + "orchard word " * 30 for i in range(100))
    for number in range(3):
        fresh.write("en", f"hits/k{number}.md", f"# Kiwi {number}\n\n{long}\n")
    for budget in (1500, 8000):
        result = fresh.recall.recall("en", "kiwi", budget)
        check_block(result, budget)
        big = next(s for s in result["sources"] if s["path"] == "big.md")
        assert big["tokens"] <= max(100, budget // 20) + 2, (budget, big)


def test_unused_budget_still_flows_on(fresh: World) -> None:
    """What the resident layer leaves goes to the hits; what the hits leave, to the
    recent notes (within their caps)."""
    fresh.write("en", "USER.md", "# User\n\nPrefers short answers.\n")
    fresh.write("en", "hit.md", "# Hit\n\nThe zebra note.\n")
    for number in range(5):  # (five texts: notes of one text are quoted once)
        fresh.write("en", f"r{number}.md", f"# R{number}\n\n" + f"recent words {number}. " * 60)
    result = fresh.recall.recall("en", "zebra", 2000)
    check_block(result, 2000)
    recent = sum(s["tokens"] for s in result["sources"] if s["layer"] == "recent")
    assert recent > 2000 * 20 // 100  # more than its share: what the others left


# -- day files of events ---------------------------------------------------------------------


def _event(time: str, title: str, text: str, tags: str = "work") -> str:
    return (
        f"\n## Event\n\n- time: {time}\n- title: {title}\n- tags: {tags}\n"
        f"- entry: 01JENTRY{time[-5:-3]}\n\n{text}\n"
    )


def _day(day: str, *events: str) -> str:
    preamble = "One section per event, in the order they were logged.\n"
    return f"---\ntitle: Events {day}\ntype: events\n---\n# Events {day}\n\n{preamble}" + "".join(
        events
    )


def test_an_event_hit_quotes_its_own_event_only(fresh: World) -> None:
    """The hit spilled into the next events, quoted their tags and entry lines and ended
    on a dangling ``## Event`` / ``- time:`` of an unrelated one."""
    day = _day(
        "2026-02-08",
        _event("2026-02-08T10:00:00", "Reviewed a PR", "Reviewed a PR. Context: Beacon."),
        _event("2026-02-08T13:00:00", "1:1 with Priya", "1:1 with Priya. Went fine."),
        _event("2026-02-08T15:00:00", "Lunch", "Lunch with the team. Context: Atlas."),
    )
    fresh.write("en", "events/2026/02/08.md", day)
    for budget in (120, 300, 1500):
        result = fresh.recall.recall("en", "priya", budget)
        check_block(result, budget)
        lines = quoted(result["block"], "events/2026/02/08.md")
        assert "1:1 with Priya. Went fine." in lines, (budget, lines)
        text = "\n".join(lines)
        for absent in ("Lunch", "Reviewed", "- tags:", "- entry:", "One section per event"):
            assert absent not in text, (budget, absent, lines)
        assert not lines[-1].startswith(("## ", "- time:")), lines


@pytest.mark.parametrize(
    ("lang", "query", "old", "new"),
    [
        ("en", "when is the backup?", "The backup is on Friday.", "The backup moved to Saturday."),
        ("zh-Hans", "备份在哪天？", "备份在周五。", "备份改到周六了。"),
        ("ar", "متى النسخ الاحتياطي؟", "النسخ الاحتياطي يوم الجمعة.", "النسخ الاحتياطي يوم السبت."),
    ],
)
def test_an_event_hit_quotes_the_newest_event_that_matches(
    fresh: World, lang: str, query: str, old: str, new: str
) -> None:
    """A day file's hit quoted its first (oldest) matching event at every budget: the
    later one that corrected it never reached the block (seed 004's Recent/OnDemand: the
    recently touched segment), and the file, a hit, is left out of the recent layer."""
    day = _day(
        "2026-11-29",
        _event("2026-11-29T09:00:00", "t1", old),
        _event("2026-11-29T12:00:00", "t2", "Lunch with the team."),
        _event("2026-11-29T17:00:00", "t3", new),
    )
    fresh.write(lang, "events/2026/11/29.md", day)
    for budget in (150, 400, 1500):
        result = fresh.recall.recall(lang, query, budget)
        check_block(result, budget)
        text = "\n".join(quoted(result["block"], "events/2026/11/29.md"))
        assert new in text and old not in text and "Lunch" not in text, (budget, text)


def test_the_same_event_logged_on_many_days_is_quoted_once(fresh: World) -> None:
    text = "Standup: Alice blocked on access. Context: Ember."
    for day in range(1, 6):
        name = f"2026-03-0{day}"
        event = _event(f"{name}T10:00:00", "Standup: Alice blocked on access", text)
        fresh.write("en", f"events/2026/03/0{day}.md", _day(name, event))
    result = fresh.recall.recall("en", "alice standup", 1500)
    check_block(result, 1500)
    assert result["block"].count(text) == 1, result["block"]


def test_a_day_file_s_recent_part_leaves_its_bookkeeping_out(fresh: World) -> None:
    day = _day("2026-05-21", _event("2026-05-21T10:00:00", "Standup", "Standup went well."))
    fresh.write("en", "events/2026/05/21.md", day)
    result = fresh.recall.recall("en", "", 300)
    text = "\n".join(quoted(result["block"], "events/2026/05/21.md"))
    assert "Standup went well." in text
    for absent in ("- tags:", "- entry:", "One section per event", "- title: Standup"):
        assert absent not in text, (absent, text)


# -- folder abstracts and the heading ---------------------------------------------------------


def _fallback(abstract: str) -> str:
    return f"---\ntype: summary\nabstract: '{abstract}'\ngenerated_by: fallback\n---\n"


def test_count_only_abstracts_take_one_line_and_come_last(fresh: World) -> None:
    """``5 notes: folder`` took 15-40 tokens each, a quarter of a 120-token block."""
    fresh.hidden("en", ".overview.md", _fallback("5 notes: folder"))
    fresh.hidden("en", "people/.overview.md", _fallback("45 notes: person"))
    body = "Priya Haddad is a backend lead at Acme. Likes written RFCs before any design call."
    fresh.write("en", "people/priya.md", f"# Priya Haddad\n\n{body}\n")
    small = fresh.recall.recall("en", "priya", 120)
    check_block(small, 120)
    assert body in small["block"]  # the hit whole, before any count
    roomy = fresh.recall.recall("en", "priya", 1500)
    check_block(roomy, 1500)
    assert "\n### .overview.md — 5 notes: folder\n" in roomy["block"]
    assert "\n### people/.overview.md — 45 notes: person\n" in roomy["block"]
    assert "> 5 notes" not in roomy["block"]
    assert by_layer(roomy)["resident"] == [".overview.md", "people/.overview.md"]


def test_a_section_s_heading_is_paid_when_its_notes_are_picked_again(fresh: World) -> None:
    """USER.md and a count-only root abstract share ``## Resident``: the abstract paid
    nothing for it (USER.md had), then USER.md was picked again with what was left and
    paid nothing either. A third of the budgets went over, 1,500 by two tokens."""
    lines = "\n".join(f"Line {number} of what the user prefers." for number in range(400))
    fresh.write("en", "USER.md", f"# User\n\n{lines}\n")
    fresh.hidden("en", ".overview.md", _fallback("12 notes: note"))
    for budget in range(50, 3001, 7):
        check_block(fresh.recall.recall("en", "", budget), budget)


def test_the_on_demand_heading_names_the_query_s_words(fresh: World) -> None:
    """``## On demand: 用户喜欢, 用户, 户喜, 喜欢``: search's bigrams are no words."""
    fresh.write("zh-Hans", "items/a.md", "# 偏好\n\n用户喜欢简短的回答。\n")
    block = fresh.recall.recall("zh-Hans", "用户喜欢什么样的回答", 1500)["block"]
    assert "\n## On demand: 用户喜欢, 回答\n" in block, block


# -- what a reviewer found after the rework ---------------------------------------------------


def test_an_event_hit_quotes_its_text_not_only_its_time_and_title(fresh: World) -> None:
    """One event of a long text among six other hits: at 61-458 tokens the day file was
    quoted as ``> - time: …`` and ``> - title: Planning session`` alone."""
    text = "We discussed the zebrafish tank and " + "many other long details of the plan " * 30
    event = _event("2026-11-28T10:00:00", "Planning session", text)
    fresh.write("en", "events/2026/11/28.md", _day("2026-11-28", event))
    for number in range(6):
        body = f"zebrafish note {number} " + "words " * 40
        fresh.write("en", f"items/n{number}.md", f"# N{number}\n\n{body}\n")
    for budget in (61, 80, 120, 200, 300, 458):
        result = fresh.recall.recall("en", "zebrafish", budget)
        check_block(result, budget)
        if "events/2026/11/28.md" not in by_layer(result).get("on_demand", []):
            continue
        lines = quoted(result["block"], "events/2026/11/28.md")
        assert any("zebrafish" in line for line in lines), (budget, lines)


def test_a_keyword_window_never_starts_inside_a_url(fresh: World) -> None:
    """``> … xample.com/infra/…/zebrafish-runbook.md for it. …``: the window started
    inside the URL (its lead held no space), and the end was then cut inside it too."""
    filler = "Some words that lead nowhere in particular and keep going for a while. " * 6
    url = "https://git.example.com/infra/platform/documentation/architecture/deploy/zebrafish-runbook.md"
    fresh.write("en", "url.md", f"# U\n\n{filler}See {url} for it. {filler}\n")
    link = f"[the zebrafish runbook with a long name of many words]({url})"
    fresh.write("en", "link.md", f"# L\n\n{filler}See {link} for it. {filler}\n")
    for budget in (60, 80, 100, 200):
        for path in ("url.md", "link.md"):
            result = fresh.recall.recall("en", "zebrafish", budget)
            check_block(result, budget)
            if path not in by_layer(result).get("on_demand", []):
                continue
            lines = quoted(result["block"], path)
            assert lines and "xample.com" not in lines[0].split("https://git.")[0], lines
            if path == "url.md" and lines[0].startswith("… "):
                assert lines[0].startswith("… https://git.example.com/"), lines


def test_a_keyword_deep_in_a_long_line_opens_a_window(fresh: World) -> None:
    """A keyword past a line's first 16,384 characters opened no window: the line was
    quoted from its start, the hit cut away."""
    line = " ".join(f"word{n}" for n in range(4000)) + " zebrafish were fed at noon today"
    fresh.write("en", "long.md", f"# Long\n\n{line}\n")
    # (a ß after it: case folding changes the line's length)
    fresh.write("en", "sz.md", f"# Sz\n\n{line} in der Straße\n")
    for budget, path in itertools.product((60, 150, 400), ("long.md", "sz.md")):
        result = fresh.recall.recall("en", "zebrafish", budget)
        check_block(result, budget)
        if path not in by_layer(result).get("on_demand", []):
            continue
        lines = quoted(result["block"], path)
        assert lines and lines[0].startswith("… ") and "zebrafish" in lines[0], (budget, lines)


def test_a_day_file_written_tight_leaves_its_bookkeeping_out(fresh: World) -> None:
    """``## Event`` followed by its facts with no blank line (another program's day file)
    quoted ``> ## Event``, ``> - tags: secret-tag`` and ``> - entry: ENTRY-ID``."""
    day = (
        "# Events 2026-11-28\n\nOne section per event.\n\n## Event\n- time: 2026-11-28T10:00:00Z\n"
        "- title: Zoo\n- tags: secret-tag\n- entry: ENTRY-ID\n\nFed the zebrafish.\n"
    )
    fresh.write("en", "events/2026/11/28.md", day)
    for query in ("zebrafish", ""):
        result = fresh.recall.recall("en", query, 400)
        check_block(result, 400)
        text = "\n".join(quoted(result["block"], "events/2026/11/28.md"))
        assert "Fed the zebrafish." in text, (query, text)
        assert text.startswith("## Event\n- time:" if not query else "- time:"), text
        for absent in ("secret-tag", "ENTRY-ID", "One section per event"):
            assert absent not in text, (query, absent, text)


def test_the_same_title_only_event_on_many_days_is_quoted_once(fresh: World) -> None:
    for day in range(1, 5):
        name = f"2026-11-0{day}"
        event = f"\n## Event\n\n- time: {name}T10:00:00\n- title: zebrafish visit\n- tags: zoo\n"
        fresh.write("en", f"events/2026/11/0{day}.md", _day(name, event))
    result = fresh.recall.recall("en", "zebrafish", 1500)
    check_block(result, 1500)
    assert result["block"].count("> zebrafish visit\n") == 1, result["block"]  # (its text)


def test_a_focused_heading_is_never_shown_alone(fresh: World) -> None:
    """The focus marked ``… ## Zebrafish care``: no longer read as a heading, it was
    quoted with nothing after it."""
    care = "Feed them twice a day and keep the water clean. " * 20
    fresh.write("en", "a.md", f"# A\n\nIntro paragraph.\n\n## Zebrafish care\n\n{care}\n")
    fresh.write("en", "b.md", "# B\n\nIntro paragraph.\n\n## Zebrafish only heading\n")
    for budget in (50, 52, 60, 80, 120, 300):
        result = fresh.recall.recall("en", "zebrafish", budget)
        check_block(result, budget)
        for source in result["sources"]:
            lines = quoted(result["block"], source["path"])
            assert lines and not lines[-1].removeprefix("… ").startswith("#"), (budget, lines)


def test_closing_hashes_and_setext_headings_are_headings(fresh: World) -> None:
    closing = "# Closing title #\n\n## Closing title ##\n\nSome text under closing.\n"
    fresh.write("en", "closing.md", closing)
    setext = "# Setext\n\nzebrafish text.\n\nSub heading\n-----------\n"
    fresh.write("en", "setext.md", setext)
    result = fresh.recall.recall("en", "", 400)
    check_block(result, 400)
    assert quoted(result["block"], "closing.md") == ["Some text under closing."]
    result = fresh.recall.recall("en", "zebrafish", 400)
    assert quoted(result["block"], "setext.md") == ["zebrafish text."], result["block"]
    lines, _ = fit_paragraphs([["We decided."], ["Details", "-------"]], 400, quote)
    assert lines == ["> We decided.\n"]


def test_the_live_note_comes_before_its_short_stale_copy(fresh: World) -> None:
    """A month-old copy of a plan (short: BM25 favours it) ranked above the note it was
    copied from, which went on growing; of notes of one title the newest comes first,
    in the places search gave them, and notes of other titles keep theirs."""
    fresh.write("en", "archive/launch.md", "# Launch Plan\n\nLaunch in March.\n")
    old = time.time() - 30 * 86400
    os.utime(fresh.ws.vault_dir("en") / "archive/launch.md", (old, old))
    fresh.index.note_changed("en", "archive/launch.md")
    fresh.write("en", "other.md", "# Launch party\n\nThe launch party is on Friday.\n")
    later = "\n\n".join(f"Week {n}: the launch checklist grew by a step." for n in range(12))
    fresh.write("en", "plans/launch.md", f"# launch  plan\n\nLaunch moved to May.\n\n{later}\n")
    hits = fresh.recall._hits("en", ["launch"], "")
    places = {hit["path"]: at for at, hit in enumerate(hits)}
    by_bm25 = [h["path"] for h in fresh.index.search_any("en", ["launch"], 12)]
    assert by_bm25.index("archive/launch.md") < by_bm25.index("plans/launch.md")  # the case
    assert places["plans/launch.md"] == by_bm25.index("archive/launch.md")
    assert places["archive/launch.md"] == by_bm25.index("plans/launch.md")
    assert places["other.md"] == by_bm25.index("other.md")
    result = fresh.recall.recall("en", "launch", 200)
    assert by_layer(result)["on_demand"][0] == "plans/launch.md"
