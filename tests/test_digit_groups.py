"""A number is found however its digits are grouped: ``85000`` finds ``85,000``,
``85.000``, ``85 000`` (a narrow no-break space, as French writes it), ``85'000`` (Swiss)
and ``٨٥٬٠٠٠`` (the Arabic thousands separator); ``123456`` finds Indian ``1,23,456``;
on a real NoteIndex over real files, the snippet marking what the note holds."""

from __future__ import annotations

from helpers.indexed_notes import found, index_notes
from test_digit_search import on_demand_of

from indexer.index.digit_groups import grouped_spellings
from indexer.index.service import NoteIndex
from shared.workspace import Workspace

NOTES = {
    "en.md": "# en\n\nThe budget is 85,000 dollars.\n",
    "de.md": "# de\n\nDas Budget ist 85.000 Euro.\n",
    "fr.md": "# fr\n\nLe budget est de 85\u202f000 euros.\n",
    "fr-nbsp.md": "# fr2\n\nLe budget est de 85\u00a0000 euros.\n",
    "ch.md": "# ch\n\nDas Budget ist 85'000 Franken.\n",
    "ar.md": "# ar\n\nالميزانية ٨٥٬٠٠٠ دولار.\n",
    "bare.md": "# bare\n\nbudget 85000 flat\n",
    "other.md": "# other\n\nbudget 850,000 and 85 000x and 185,000\n",
    "in.md": "# in\n\nThe price was 1,23,456 rupees and 12,34,567 later.\n",
    "big.md": "# big\n\nPopulation 1.234.567 und 123.456.\n",
}


def test_a_number_finds_its_grouped_spellings(ws: Workspace, index: NoteIndex) -> None:
    index_notes(ws, index, "xx", NOTES)
    grouped = {"en.md", "de.md", "fr.md", "fr-nbsp.md", "ch.md", "ar.md", "bare.md"}
    assert found(index, "xx", "85000") == grouped
    assert found(index, "xx", "٨٥٠٠٠") == grouped  # (in Arabic-Indic digits)
    assert found(index, "xx", "budget 85000") == grouped - {"ar.md"}
    assert found(index, "xx", "850000") == {"other.md"}
    assert found(index, "xx", "185000") == {"other.md"}
    assert found(index, "xx", "123456") == {"in.md", "big.md"}
    assert found(index, "xx", "1234567") == {"in.md", "big.md"}
    assert found(index, "xx", "budget NOT 85000") == {"other.md"}
    assert found(index, "xx", '"85000"') == {"bare.md"}  # (a phrase is as written)


def test_the_snippet_marks_the_grouped_number(ws: Workspace, index: NoteIndex) -> None:
    index_notes(ws, index, "hl", NOTES)
    marked = {row["path"]: row["snippet"] for row in index.search("hl", "85000")["results"]}
    assert "**85,000**" in marked["en.md"]
    assert "**85\u202f000**" in marked["fr.md"]  # (the note's narrow no-break space)
    assert "**٨٥٬٠٠٠**" in marked["ar.md"]
    assert "**85000**" in marked["bare.md"]
    indian = index.search("hl", "123456")["results"]
    assert any("**1,23,456**" in row["snippet"] for row in indian)


def test_recall_finds_a_grouped_number(ws: Workspace, index: NoteIndex) -> None:
    index_notes(ws, index, "rc", {
        "deal.md": "# deal\n\nWe signed for 85,000 dollars in March.\n",
        "other.md": "# other\n\nNothing about money here.\n",
    })  # fmt: skip
    assert on_demand_of(ws, index, "rc")("what did we say about 85000?") == ["deal.md"]


def test_the_spellings_of_a_number() -> None:
    assert grouped_spellings("85000") == ("85 000",)
    assert grouped_spellings("10000") == ("10 000",)
    assert grouped_spellings("1234567") == ("1 234 567", "12 34 567")
    assert grouped_spellings("123456") == ("123 456", "1 23 456")
    # a year is a year: ``2 024`` would find ranges (``1-500`` for 1500) and cost more
    for word in ("850", "2024", "1500", "0850", "85000a", "x2024", "٨٥٠٠٠", "1" * 40):
        assert grouped_spellings(word) == (), word


def test_a_grouped_number_finds_the_bare_one(ws: Workspace, index: NoteIndex) -> None:
    """``85,000`` found the groupings (its words ``85`` ``000``) but not ``85000``."""
    index_notes(ws, index, "gr", NOTES)
    grouped = {"en.md", "de.md", "fr.md", "fr-nbsp.md", "ch.md", "ar.md", "bare.md"}
    assert found(index, "gr", "85.000") == grouped
    assert found(index, "gr", "٨٥٬٠٠٠") == grouped
    assert found(index, "gr", "85.000") == grouped
    assert found(index, "gr", "٨٥٬٠٠٠") == grouped
    assert found(index, "gr", "1,23,456") == {"in.md", "big.md"}  # (and 123.456)
    assert found(index, "gr", "12,34,567") == {"in.md", "big.md"}  # (and 1.234.567)
    assert grouped_spellings("1,234,567") == ("1234567", "12 34 567")
    assert grouped_spellings("85.000") == ("85000",)
    for word in ("85,00", "1,2345", "0,500", "85,000,", "1.5", "12,3,456"):
        assert grouped_spellings(word) == (), word


def test_a_number_with_a_symbol_or_punctuation_on_it(ws: Workspace, index: NoteIndex) -> None:
    """A currency sign or punctuation on the number (``$85000``, ``85000?``, ``(85,000)``,
    ``85000€``), as questions and pasted amounts write it, is a word break to the index:
    the number was sought only as written (``$85000`` found no ``$85,000``)."""
    index_notes(ws, index, "sy", {
        "usd.md": "# usd\n\nThe budget is $85,000 this year.\n",
        "eur.md": "# eur\n\nbudget 85000€ flat\n",
        "inr.md": "# inr\n\nPrice ₹1,23,456 only.\n",
        "other.md": "# other\n\nbudget 85 and 000 apart, 850,000\n",
    })  # fmt: skip
    both = {"usd.md", "eur.md"}
    for query in ("$85000", "85000?", "(85000)", "85000€", "€85000", "-85000", "85000*"):
        assert found(index, "sy", query) == both, query
    for query in ("$85,000", "85,000.", "(85,000)", "85,000€", "85.000,-"):
        assert found(index, "sy", query) == both, query
    assert found(index, "sy", "₹123456") == {"inr.md"}
    assert found(index, "sy", "budget $85000?") == both
    marked = {row["path"]: row["snippet"] for row in index.search("sy", "$85000")["results"]}
    assert "**85,000**" in marked["usd.md"] and "**85000**" in marked["eur.md"]


def test_recall_keeps_a_grouped_number_whole(ws: Workspace, index: NoteIndex) -> None:
    """A question's ``85,000`` was the keywords ``85`` and ``000``: a note saying
    ``85000`` was not found, and any note with an ``85`` was."""
    index_notes(ws, index, "rg", {
        "bare.md": "# contract\n\nWe signed for 85000 dollars in March.\n",
        "other.md": "# other\n\nRoom 85 has 000 chairs.\n",
        "in.md": "# lakh\n\nThe price was 123456 rupees.\n",
    })  # fmt: skip
    ask = on_demand_of(ws, index, "rg")
    assert ask("what about the 85,000 deal?") == ["bare.md"]
    assert ask("what about $85,000?") == ["bare.md"]
    assert ask("was it 1,23,456 rupees?") == ["in.md"]
    assert ask("٨٥٬٠٠٠ دولار؟") == ["bare.md"]


def test_a_number_grouped_by_no_break_spaces(ws: Workspace, index: NoteIndex) -> None:
    """``85 000`` pasted from a French text (a narrow no-break space) or ``85 000`` (a
    no-break one) was the words ``85`` and ``000`` anywhere in a note, and never found
    ``85000`` or ``85,000``; an ordinary space still parts two words."""
    index_notes(ws, index, "sp", {
        "bare.md": "# bare\n\nbudget 85000 flat\n",
        "en.md": "# en\n\nThe budget is 85,000 dollars.\n",
        "apart.md": "# apart\n\nRoom 85 has 000 chairs.\n",
    })  # fmt: skip
    for query in ("85\u202f000", "85\u00a0000 €", '"budget 85\u2009000"'):
        assert found(index, "sp", query) <= {"bare.md", "en.md"}, query
    assert found(index, "sp", "85\u202f000") == {"bare.md", "en.md"}
    assert found(index, "sp", "85 000") == {"apart.md", "en.md"}  # (two words, as before)
    ask = on_demand_of(ws, index, "sp")
    assert sorted(ask("le budget de 85\u202f000 € ?")) == ["bare.md", "en.md"]


def test_a_four_digit_number_is_sought_as_written(ws: Workspace, index: NoteIndex) -> None:
    """A year is no phrase of its groups: ``1500`` found the range ``1-500`` and
    ``2024`` a chapter ``2: 024``; ``1,500`` still finds ``1500``."""
    index_notes(ws, index, "yr", {
        "range.md": "# range\n\npages 1-500 and chapter 2: 024\n",
        "bare.md": "# bare\n\n1500 units in 2024\n",
        "grouped.md": "# grouped\n\n1,500 units\n",
    })  # fmt: skip
    assert found(index, "yr", "1500") == {"bare.md"}
    assert found(index, "yr", "2024") == {"bare.md"}
    assert {"bare.md", "grouped.md"} <= found(index, "yr", "1,500")
