"""Korean may write a compound joined or spaced (``부산여행``, ``부산 여행``: a Busan
trip): a question's joined word that no note holds is sought as its two words apart,
adjacent, as a note wrote them (it found nothing); a word a note holds stays as is."""

from __future__ import annotations

from helpers.indexed_notes import index_notes
from test_digit_search import on_demand_of

from indexer.index.service import NoteIndex
from indexer.jobs.korean_spacing import spaced_spellings
from shared.workspace import Workspace


def test_a_joined_word_is_found_spaced(ws: Workspace, index: NoteIndex) -> None:
    index_notes(ws, index, "ko", {
        "trip.md": "# 여행\n\n부산 여행은 다음 달이다.\n",
        "city.md": "# 공지\n\n부산시청 공지와 여행사 광고.\n",
        "joined.md": "# 회의\n\n프로젝트회의는 월요일이다.\n",
    })  # fmt: skip
    on_demand = on_demand_of(ws, index, "ko")
    assert on_demand("부산여행은 언제야?") == ["trip.md"]
    assert on_demand("프로젝트회의는 언제?") == ["joined.md"]  # (held as written)
    assert on_demand("프로젝트 회의는 언제?") == ["joined.md"]


def test_the_spaced_spellings_of_a_word() -> None:
    assert spaced_spellings("부산여행") == ['"부산 여행"']
    splits = ['"프로 젝트회의"', '"프로젝 트회의"', '"프로젝트 회의"']
    assert spaced_spellings("프로젝트회의") == splits
    for word in ("부산", "여행사", "busan", "東京大学", '"부산 여행"'):
        assert spaced_spellings(word) == [], word
