"""Search snippets without the Markdown marks that say nothing (``snippet_markup``):
headings' ``#``, quotes' ``>``, setext underlines, thematic breaks and table rules are
left out; every hit search finds is still marked, whatever a snippet reads first."""

from __future__ import annotations

import itertools
import random

import pytest
from test_index_query import _marks_agree_with_search

from indexer.index import query as query_module
from indexer.index.query import SNIPPET_SOURCE_CHARS, make_snippet
from indexer.index.query_parse import parse_query
from indexer.index.snippet_markup import MARKUP_CHARS, without_markup


def snippet(body: str, query: str) -> str:
    return make_snippet(body, parse_query(query).terms, width=400, seconds=60.0)


@pytest.mark.parametrize(
    ("body", "query", "expected"),
    [
        (  # the note's title heading, a table and its rule
            '# Past tense of "go"\n\nThe past is *went*.\n\n| form | word |\n|------|:----:|\n'
            "| past | went |\n",
            "went",
            'Past tense of "go" The past is ***went***. | form | word | | past | **went** |',
        ),
        (
            "# 2026-11-29\n\n## Event\n\nThe learner went to the park.\n",
            "park",
            "2026-11-29 Event The learner went to the **park**.",
        ),
        ("Title\n=====\n\nSub\n---\n\ntext here\n", "text", "Title Sub **text** here"),
        (
            "> quoted line\n> > ## nested heading\n>\n> end\n",
            "nested",
            "quoted line **nested** heading end",
        ),
        ("one\n\n***\n\n* * *\n\n___\n\n- - -\n\ntwo\n", "two", "one **two**"),
        (  # (four spaces in: a code block's line, as written)
            "   ### indented heading\n    #### code, four spaces in\n",
            "code",
            "indented heading #### **code**, four spaces in",
        ),
        ("Windows\r\n---\r\nline\r\n", "line", "Windows **line**"),
    ],
)
def test_marks_that_say_nothing_are_left_out(body: str, query: str, expected: str) -> None:
    assert snippet(body, query) == expected


@pytest.mark.parametrize(
    ("body", "query", "expected"),
    [
        ("#tag and #another tag\n", "tag", "#**tag** and #another **tag**"),  # tags stay
        ("####### seven is no heading\n", "seven", "####### **seven** is no heading"),
        ("- a list item\n- another item\n", "item", "- a list **item** - another **item**"),
        ("[a link](notes/went.md) and `code`\n", "went", "[a link](notes/**went**.md) and `code`"),
        ("a|b table? x = y - z\n", "table", "a|b **table**? x = y - z"),
        ("text -- a dash\n", "dash", "text -- a **dash**"),
    ],
)
def test_marks_inside_a_line_or_holding_words_stay(body: str, query: str, expected: str) -> None:
    """Only the start of a line and lines of marks alone: a tag, a link's target (search
    finds its words), a list's bullets, a text's own dashes and pipes are the note's."""
    assert snippet(body, query) == expected


def test_a_snippet_without_markup_still_marks_every_note_search_finds() -> None:
    """Random notes of words, headings, quotes, rules and table rows: a snippet marks a
    hit exactly when search finds the note (what is left out holds no word)."""
    pieces = [
        "data", "base", "東京", "\n", "\n\n", " ", "#", "# ", "## ", ">", "> ", "---", "===",
        "|", "| ", ":", "*", "_", "-", "\r\n", "\t",
    ]  # fmt: skip
    queries = ["data", "base", '"data base"', "東京", '"東京 data"', "datab*"]
    assert _marks_agree_with_search(pieces, queries, seed=11) > 300


def test_a_snippet_is_the_same_whatever_it_reads_first_with_markup(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Headings, quotes and rules around the end of each part a snippet reads first
    (``_READS``) and around ``MARKUP_CHARS``: the snippet is the one the whole text
    gives (every part is read without its marks as the whole is)."""
    rng = random.Random(12)
    terms = parse_query('needle "hay stack"').terms
    marks = ["\n# ", "\n## ", "\n> ", "\n> > ### ", "\n---\n", "\n|---|---|\n", "\n===", "\n-"]
    for boundary in {*query_module._READS[:-1], MARKUP_CHARS}:
        for shift in [*range(-200, 40, 9), *range(-12, 12)]:
            words = rng.choices(["hay", "stack", "x_y", "é", *marks], k=boundary // 3)
            filler = " ".join(words)
            at = max(0, boundary + shift)
            body = filler[:at] + rng.choice(marks) + " hay stack needle " + filler[at:]
            staged = make_snippet(body, terms, seconds=60.0)
            with monkeypatch.context() as patched:
                patched.setattr(query_module, "_READS", (SNIPPET_SOURCE_CHARS,))
                assert staged == make_snippet(body, terms, seconds=60.0), (boundary, shift)


def test_every_piece_is_a_prefix_of_a_longer_ones_reading() -> None:
    """``without_markup`` of a shorter start of a body, its white space run together, is a
    prefix of a longer start's: cut anywhere before white space, as snippets cut."""
    rng = random.Random(13)
    alphabet = ["a", "b", " ", "\n", "#", ">", "-", "=", "|", ":", "*", "_", "\t", "\r"]
    for _ in range(3000):
        body = "".join(rng.choices(alphabet, k=rng.randint(1, 60)))
        cuts = [i for i in range(1, len(body)) if body[i].isspace()] + [len(body)]
        shown = [" ".join(without_markup(body[:cut], body).split()) for cut in cuts]
        for shorter, longer in itertools.pairwise(shown):
            assert longer.startswith(shorter), (body, shorter, longer)


def test_past_the_first_part_a_note_is_shown_as_written() -> None:
    """A note's first ``MARKUP_CHARS`` characters are read without marks (a hostile note
    of half a million short lines costs a few ms, not 60); a hit past them is marked in
    the text as written."""
    head = "filler words here\n" * (MARKUP_CHARS // 18 + 10)
    body = "# Title\n\n" + head + "## later heading with needle\n"
    assert snippet(body, "title").startswith("**Title** filler")
    assert "## later heading with **needle**" in snippet(body, "needle")
    hostile = "\n>" * 100_000 + " needle"
    assert "**needle**" in snippet(hostile, "needle")


@pytest.mark.parametrize(
    ("body", "query", "expected"),
    [
        (  # French: a no-break space in a number, a narrow one inside guillemets
            "Le prix\u00a0: 1\u00a0000\u00a0€ pour «\u202ftout\u202f».\n",
            "prix",
            "Le **prix**\u00a0: 1\u00a0000\u00a0€ pour «\u202ftout\u202f».",
        ),
        (
            "Il a dit «\u00a0bonjour\u00a0» hier\n",
            "bonjour",
            "Il a dit «\u00a0**bonjour**\u00a0» hier",
        ),
        ("1\u00a0000\u00a0€ au total\n", '"1 000"', "**1\u00a0000**\u00a0€ au total"),
        ("figure\u2007: 12\u2007345\n", "figure", "**figure**\u2007: 12\u2007345"),
        (  # a run of them is one, as a run of other white space is one space
            "a\u00a0\u00a0\u00a0b \u00a0\n\n  c\t\u202fd word\n",
            "word",
            "a\u00a0b c d **word**",
        ),
    ],
)
def test_a_snippet_keeps_the_notes_no_break_spaces(body: str, query: str, expected: str) -> None:
    """A snippet is text an agent may quote back: a no-break space (``1 000 €``, French
    ``« »``) was shown as a plain space, and the quote no longer held the note's text."""
    assert snippet(body, query) == expected
