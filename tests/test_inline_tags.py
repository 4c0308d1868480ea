"""Inline ``#tags`` as Obsidian reads them: what is a tag, what code and links hide, and
a hostile note costing linear time; and the tags filter finding them."""

from __future__ import annotations

import time

import pytest

from indexer.index.inline_tags import MAX_INLINE_TAGS, inline_tags


@pytest.mark.parametrize(
    ("body", "tags"),
    [
        ("#project and #project/alpha\n#Idea", ["project", "project/alpha", "Idea"]),
        ("# Heading\n## Sub\n#tag at a line's start", ["tag"]),
        ("ends a sentence #done. Or #why? #a-b_c/d", ["done", "why", "a-b_c/d"]),
        ("numbers #123 and #2026 are issues, #2026-plan is a tag", ["2026-plan"]),
        ("C# and a#b, [x](#anchor), [[Note#Part]], [[#Part]], &#39; url/#x", []),
        ('<a href="#x">x</a> (#paren) "#quoted"', []),
        ("中文 #标签，下一个 #项目/子项。 #日本語タグ", ["标签", "项目/子项", "日本語タグ"]),
        ("عربي #وسم و #תגית and #ключ", ["وسم", "תגית", "ключ"]),
        ("emoji #🚀launch and #tag✅", ["🚀launch", "tag✅"]),
        ("inline `#not` code, ``a #no b`` and #yes", ["yes"]),
        ("```\n#not in a fence\n```\n#after", ["after"]),
        ("~~~~ python\n#no\n~~~\n#still-code\n~~~~\n#out", ["out"]),
        ("  ```\n#no\n  ```\n#out", ["out"]),
        ("```\n#never closed", []),
        ("``` not `a fence`\n#tag", ["tag"]),
        ("#dup #dup #DUP", ["dup", "DUP"]),
        ("nothing here", []),
        ("a lone # and #", []),
    ],
)
def test_what_is_an_inline_tag(body: str, tags: list[str]) -> None:
    assert inline_tags(body) == tags


def test_a_note_of_tags_keeps_the_first_thousand() -> None:
    body = " ".join(f"#t{i}" for i in range(5000))
    assert inline_tags(body) == [f"t{i}" for i in range(MAX_INLINE_TAGS)]


@pytest.mark.parametrize(
    "body",
    [
        "`" * 200_000,
        "` #a " * 100_000,
        "`x " * 200_000,
        "```\n" * 100_000,
        "``` `\n" * 100_000,
        "#" * 500_000,
        " #" * 300_000,
        " #t ``a`" * 100_000,  # (0.4 s alone; 2.4 MB took 1.1 s, 2.05 s on a loaded machine)
        " #t " + "`" * 40 + "`a" * 300_000,
        " #t\n```" + "\n~~~\n```x" * 100_000,
    ],
)
def test_hostile_notes_take_linear_time(body: str) -> None:
    started = time.thread_time()
    inline_tags(body)
    assert time.thread_time() - started < 2.0
