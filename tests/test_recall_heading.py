"""The words recall's on-demand heading names: the query's, as the user typed them
(search still folds them: a note holding ``lucía`` is found for ``Lucía``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from test_recall import World


@pytest.fixture
def fresh(tmp_path: Path) -> Iterator[World]:
    built = World(tmp_path / "ws")
    yield built
    built.index.close()


@pytest.mark.parametrize(
    ("note", "query", "heading"),
    [
        ("lucía said the trip is in May.", "What did Lucía say about the trip?", "Lucía, trip"),
        ("Die straße war voll.", "Was sagte Müller über die STRAßE?", "sagte, Müller, STRAßE"),
        ("We flew to istanbul.", "When was the İstanbul flight?", "İstanbul, flight"),
        ("Nghỉ ở hà nội.", "the phở in Hà Nội", "phở, Hà, Nội"),
        ("O’Brien's plan.", "What is O’Brien’s PLAN", "Brien’s, PLAN"),
        ("the Big Plan, again", 'what is "Big Plan" about', "Big Plan"),
    ],
)
def test_the_heading_names_the_words_as_typed(
    fresh: World, note: str, query: str, heading: str
) -> None:
    """``## On demand: lucía`` for a question saying ``Lucía``: the heading showed the
    keywords folded as search reads them, not as the user wrote them."""
    fresh.write("en", "items/a.md", f"# A\n\n{note}\n")
    result = fresh.recall.recall("en", query, 1500)
    assert [s["path"] for s in result["sources"] if s["layer"] == "on_demand"] == ["items/a.md"]
    assert f"\n## On demand: {heading}\n" in result["block"], result["block"]
